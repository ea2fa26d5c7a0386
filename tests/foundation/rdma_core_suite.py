#!/usr/bin/python3
# Runs rdma-core's pyverbs test suite (a prepared copy, see
# rdma_core_suite.sh) and prints a summary: ran, passed, skipped (reasons
# grouped and counted), failed and errors, by module.
#
#   rdma_core_suite.py SUITE_DIR [--dev D] [--gid N] [-v] [TEST ...]
#
# The arguments go to the suite's own parser (args_parser.py), exactly as
# its run_tests.py takes them; TEST names (module, module.Class or
# module.Class.test) narrow the run, nothing names the whole suite.
# Exit status: 0 when no test failed or raised an error.
import collections
import importlib
import os
import sys
import unittest

suite_dir = sys.argv.pop(1)
sys.path[:0] = [suite_dir, os.path.dirname(suite_dir)]  # its modules, and 'tests.'
from args_parser import parser  # noqa: E402  (the suite's own)

parser.parse_args()             # consumes --dev/--gid/-v, leaves test names
names = [a for a in sys.argv[1:] if not a.startswith('-')]
verbosity = 2 if '--verbose' in sys.argv else 1


def module_of(test):
    """'test_mr' for tests.test_mr.MRTest.test_x (and for setUpClass errors)."""
    tid = test.id() if hasattr(test, 'id') else str(test)
    for part in tid.replace('(', ' ').replace(')', ' ').replace(' ', '.').split('.'):
        if part.startswith('test_') and part in modules:
            return part
    return tid


class Collect(unittest.TextTestResult):
    """Counts each outcome per module as it happens."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.by_mod = collections.defaultdict(collections.Counter)
        self.reasons = collections.defaultdict(list)  # reason -> test ids

    def _count(self, test, what):
        self.by_mod[module_of(test)][what] += 1

    def addSuccess(self, test):
        super().addSuccess(test)
        self._count(test, 'passed')

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._count(test, 'skipped')
        tid = test.id().replace('tests.', '', 1) if hasattr(test, 'id') else str(test)
        self.reasons[' '.join(str(reason).split())[:150]].append(tid)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._count(test, 'failed')

    def addError(self, test, err):
        super().addError(test, err)
        self._count(test, 'errors')

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._count(test, 'passed')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._count(test, 'failed')


loader = unittest.TestLoader()
# The package imports every test module, as run_tests.py has it do.
modules = {m.__name__.split('.')[-1]: m
           for m in importlib.import_module('tests').__test_modules__}

top = unittest.TestSuite()
if names:
    for n in names:
        top.addTests(loader.loadTestsFromName(n if n.startswith('tests.') else 'tests.' + n))
else:
    for m in modules.values():
        top.addTests(loader.loadTestsFromModule(m))

res = unittest.TextTestRunner(stream=sys.stdout, verbosity=verbosity,
                              resultclass=Collect).run(top)

cols = ('ran', 'passed', 'skipped', 'failed', 'errors')
tot = collections.Counter()
print('\n== rdma-core pyverbs suite: by module')
print('%-28s' % 'module' + ''.join('%9s' % c for c in cols))
for mod in sorted(res.by_mod):
    c = res.by_mod[mod]
    c['ran'] = sum(c[k] for k in cols[1:])
    tot.update(c)
    print('%-28s' % mod + ''.join('%9d' % c[k] for k in cols))
print('%-28s' % 'TOTAL' + ''.join('%9d' % tot[k] for k in cols))
print('\n== skip reasons (count, reason)')
by_count = sorted(res.reasons.items(), key=lambda kv: (-len(kv[1]), kv[0]))
for reason, tids in by_count:
    print('%5d  %s' % (len(tids), reason))
print('\n== skipped tests, by reason')
for reason, tids in by_count:
    print('  %s:' % reason)
    for tid in tids:
        print('      %s' % tid)
bad = [(t, 'FAIL') for t, _ in res.failures] + \
      [(t, 'ERROR') for t, _ in res.errors] + \
      [(t, 'UNEXPECTED SUCCESS') for t in res.unexpectedSuccesses]
if bad:
    print('\n== failed / errors')
    for t, what in bad:
        print('  %s: %s' % (what, t.id() if hasattr(t, 'id') else t))
print('\nSUMMARY ran=%d passed=%d skipped=%d failed=%d errors=%d' %
      tuple(tot[k] for k in cols))
sys.exit(1 if bad else 0)
