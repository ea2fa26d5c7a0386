#!/bin/bash
# A container's small RLIMIT_MEMLOCK: under `ulimit -l 64` and without
# CAP_IPC_LOCK, stock ibv_rc_pingpong registers 1 GiB buffers and sends
# 1 GiB messages over them both ways, data checked (--chk).  uroce pins
# nothing (docs/memory.md, "What RLIMIT_MEMLOCK means here"); a kernel
# driver (rxe too) pins every MR and fails such a registration with
# ENOMEM.  The test first shows that the limit bites: mlock() of 1 MiB
# fails in the same conditions.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
# The whole test, its programs included, under the limit and without the
# capability that lifts it (root keeps the rest: namespaces, link add).
if [ -z "${UROCE_TEST_MEMLOCK:-}" ]; then
	ulimit -l 64
	UROCE_TEST_MEMLOCK=1 exec setpriv --bounding-set=-ipc_lock "$BASH" "$0" "$@"
fi
isolate_netns "$@"
use_private_registry
add_dev m0 lo
gid=$(gid_of "" m0 127.0.0.1)
[ -n "$gid" ] || fail "no IPv4 GID on m0"

[ "$(ulimit -l)" = 64 ] || fail "RLIMIT_MEMLOCK is $(ulimit -l) KiB, not 64"
$PY - <<'EOF' || fail "mlock of 1 MiB succeeded: the limit does not bite here"
import ctypes, errno, mmap, sys
libc = ctypes.CDLL(None, use_errno=True)
buf = mmap.mmap(-1, 1 << 20)
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
if libc.mlock(ctypes.c_void_p(addr), ctypes.c_size_t(1 << 20)) == 0:
    sys.exit(1)
print("ok: mlock of 1 MiB under ulimit -l 64:", errno.errorcode[ctypes.get_errno()])
EOF

# 1 GiB = 262144 pages of 4 KiB, 16384 times the limit; --chk checks a
# byte of every page of the message that arrives, each way.
PAIR_TIMEOUT=300 pair lo "" m0 $gid "" m0 $gid 127.0.0.1 -- ibv_rc_pingpong -c -n 1 -s $((1 << 30))
pass "ulimit -l 64, no CAP_IPC_LOCK: 1 GiB MRs registered and 1 GiB messages checked"
