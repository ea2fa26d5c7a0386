#!/bin/bash
# The whole test suite: installs what is missing, builds (plus an
# ASan/UBSan build for the unit and wire tests), runs meson test.
# Run as root: the integration tests create network namespaces and
# /dev/infiniband nodes (they skip, not fail, without root).
set -euo pipefail
cd "$(dirname "$0")"
scripts/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build
[ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-asan
echo "== unit and wire tests under ASan/UBSan"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
	meson test -C build-asan --suite unit --suite wire --print-errorlogs --no-rebuild
echo "== the xdp transport's frames (rings, multi-buffer joins) under ASan/UBSan"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
	meson test -C build-asan --print-errorlogs --no-rebuild xdp_transport
echo "== all tests"
meson test -C build --print-errorlogs --no-rebuild
