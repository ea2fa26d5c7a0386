#!/bin/bash
# man uroce documents every subcommand of `uroce help` and every UROCE_*
# environment variable the code reads (getenv or a helper around it: every
# "UROCE_..." string of the sources), and renders cleanly.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
page=$src/man/uroce.8
rc=0
vars=$(grep -rhoE '"UROCE_[A-Z0-9_]+"' "$src/providers" "$src/cli" | tr -d '"' | sort -u)
for v in $vars; do
	grep -q "^\.B $v\$" "$page" || { echo "FAIL: $v (read by the code) is not in uroce(8)"; rc=1; }
done
cmds=$("${UROCE:?}" help | sed -n 's/^ *\(Usage: \)\{0,1\}\(eval "$(\)\{0,1\}uroce \([a-z]*\).*/\3/p' | sort -u)
for c in $cmds; do
	grep -Eq "^\.(B|BR|BI) \"?$c\b" "$page" || { echo "FAIL: subcommand $c is not in uroce(8)"; rc=1; }
done
warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null || true)
[ -z "$warn" ] || { echo "FAIL: man warns: $warn"; rc=1; }
[ $rc -eq 0 ] && echo "ok: uroce(8) covers $(echo $vars | wc -w) variables ($(echo $vars)) and subcommands: $(echo $cmds)"
exit $rc
