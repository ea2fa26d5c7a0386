#!/bin/bash
# Two users on one host (docs/security.md).  While root's processes use a
# device, a second user (nobody) cannot write any file of it under the
# registry or /dev/shm, cannot take its address (a one-line message and
# EADDRINUSE from QP creation), and cannot open a device whose node does
# not let it (EACCES from ibv_open_device); the node's owner, group and
# mode decide who may add counter records.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null || skip "no user nobody / group nogroup"
use_private_registry
NS=uroceMU$(uniq_id)
make_ns $NS
add_dev mu0 lo $NS                              # world-usable (the default)
add_dev mu1 lo $NS mode 0600                    # root only
add_dev mu2 lo $NS group nogroup mode 0660      # root and group nogroup
nsdir=$(echo "$UROCE_RUNDIR"/ns-*)
nsid=${nsdir##*/}

# The node says who may use the device; the counters' directory follows it.
node_of() { ip netns exec $NS "$UROCE" link show $1 | grep -o 'uverbs[0-9]*$'; }
perms() { stat -c '%U:%G %a' "$1"; }
for want in "mu0 root:root 666 1777" "mu1 root:root 600 1700" "mu2 root:nogroup 660 1770"; do
	set -- $want
	got="$(perms /dev/infiniband/$(node_of $1)) / $(stat -c %a "$nsdir/stats/$1")"
	[ "$got" = "$2 $3 / $4" ] || fail "$1: node and stats directory are $got, not $2 $3 / $4"
done
pass "nodes and stats directories carry the owner, group and mode asked for"

# Root uses mu0: one pingpong that ends (its counters go to retired.0),
# then a server that stays, holding 127.0.0.1:4791 and a QPN.
G=$(gid_of $NS mu0 127.0.0.1)
[ -n "$G" ] || fail "no GID for 127.0.0.1 on mu0"
PAIR_TIMEOUT=60 pair root $NS mu0 $G $NS mu0 $G 127.0.0.1 -- ibv_rc_pingpong -n 20
port=$((PAIR_PORT + 1))
srvlog=$(mktemp /tmp/uroce-mu.XXXXXX)
on_exit "rm -f '$srvlog'"
ip netns exec $NS timeout 120 "$UROCE" run ibv_rc_pingpong -d mu0 -g $G -p $port >"$srvlog" 2>&1 &
srv=$!
stop_at_exit $srv
wait_listen $port $srv 60 $NS || { cat "$srvlog"; fail "root's server did not start"; }
# root's shared tables of this namespace (QPN table, QP1 members, CM ports):
# each one root's own (.u0.), mode 0600.
shm=$(ls /dev/shm | grep "^uroce-$nsid[-.]" || true)
grep -qx "uroce-$nsid-lo.u0.qpn3" <<<"$shm" || fail "root has no QPN table of its own: $shm"
for f in $shm; do
	case $f in *.u0.*) ;; *) fail "/dev/shm/$f is not a per-user file of root's" ;; esac
	[ "$(stat -c %a /dev/shm/$f)" = 600 ] || fail "/dev/shm/$f has mode $(stat -c %a /dev/shm/$f)"
done
ls "$nsdir/stats/mu0" | grep -q '^retired\.0$' || fail "no retired.0 after root's pingpong"

# nobody, with a runtime directory of its own that goes at exit.
xdg=$(mktemp -d /tmp/uroce-mu-xdg.XXXXXX)
on_exit "rm -rf '$xdg'"
chown nobody:nogroup "$xdg"
as_nobody() {
	ip netns exec $NS setpriv --reuid=nobody --regid=nogroup --init-groups \
		env XDG_RUNTIME_DIR="$xdg" HOME="$xdg" "$@"
}

# 1. Every file of the registry and every /dev/shm file of this namespace:
# nobody can open none of them for writing, nor rename any; it may add
# files only to the counter directories of the devices it may use.
out=$(as_nobody timeout 60 $PY - "$UROCE_RUNDIR" /dev/shm "uroce-$nsid" <<'PYEOF'
import os, sys
rundir, shm, prefix = sys.argv[1:]
files, dirs = [], [rundir]
for root, ds, fs in os.walk(rundir):
    dirs += [os.path.join(root, d) for d in ds]
    files += [os.path.join(root, f) for f in fs]
files += [os.path.join(shm, f) for f in os.listdir(shm) if f.startswith((prefix + "-", prefix + "."))]
bad = []
for f in files:
    try:
        os.close(os.open(f, os.O_WRONLY | os.O_NOFOLLOW))
        bad.append("writable: " + f)
    except OSError:
        pass
    try:
        os.rename(f, f + ".moved")
        os.rename(f + ".moved", f)
        bad.append("renamable: " + f)
    except OSError:
        pass
addable = []
for d in dirs:
    probe = os.path.join(d, ".probe-%d" % os.getpid())
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
        addable.append(os.path.relpath(d, rundir))
    except OSError:
        pass
print("files", len(files))
print("addable", " ".join(sorted(addable)))
for b in bad:
    print("BAD", b)
PYEOF
) || fail "the probe as nobody failed: $out"
echo "$out"
! grep -q '^BAD' <<<"$out" || fail "nobody can change root's files"
nfiles=$(echo "$out" | sed -n 's/^files //p')
[ "$nfiles" -ge 10 ] || fail "only $nfiles files probed"
[ "$(echo "$out" | sed -n 's/^addable //p')" = "$nsid/stats/mu0 $nsid/stats/mu2" ] ||
	fail "nobody may add files elsewhere than the counters of mu0 and mu2"
pass "nobody cannot write, rename or remove any of $nfiles files of root's devices"

# 2. nobody opens mu0 (it may) while root uses it: QP creation fails with
# EADDRINUSE and one line that says why; mu1 (root only) does not open.
err=$(mktemp /tmp/uroce-mu.XXXXXX)
on_exit "rm -f '$err'"
as_nobody timeout 60 "$UROCE" run $PY - <<'PYEOF' 2>"$err" || { cat "$err"; fail "pyverbs as nobody"; }
import errno
import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.pyverbs_error import PyverbsRDMAError

def expect(what, errs, fn):
    try:
        fn()
    except PyverbsRDMAError as ex:
        assert ex.error_code in errs, f"{what}: errno {ex.error_code}, want {errs}"
        print(f"ok: {what}: {errno.errorcode[ex.error_code]}")
        return
    raise AssertionError(f"{what} succeeded")

ctx = d.Context(name="mu0")
pd, cq = PD(ctx), CQ(ctx, 16)
expect("QP on mu0 while root uses its address", [errno.EADDRINUSE],
       lambda: QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=QPCap())))
# libibverbs opens the node itself: EACCES, which rdma-core 44 turns into
# ENOENT after it has looked for another node with the same numbers.
expect("open mu1 (mode 0600, root's)", [errno.EACCES, errno.ENOENT],
       lambda: d.Context(name="mu1"))
PYEOF
[ "$(grep -c . "$err")" = 1 ] && grep -q 'uroce: mu0: 127.0.0.1 port 4791 is in use by processes of uid 0' "$err" ||
	fail "not one clear line on stderr"
pass "a second user gets EADDRINUSE and one line saying why; a 0600 device does not open"
