#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The layers of providers/uroce point one way (docs/design.md):
#   verbs -> cm -> engine -> transport -> device -> wire
# Every #include "X" of a file in one layer folder must name a header of its
# own layer or of a lower one; an include of a higher layer's header fails.
# A transport's private headers (transport/udp/*.h, transport/xdp/*.h) are
# included only by that transport's files.  No file of the engine, cm or
# verbs calls the UDP transport's functions (uroce_udp_*), and the engine
# calls no function defined in verbs or cm (its upcalls are a table).
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}/providers/uroce
cd "$root" || exit 1
rank() {
	case $1 in
	verbs/*) echo 5 ;; cm/*) echo 4 ;; engine/*) echo 3 ;;
	transport/*) echo 2 ;; device/*) echo 1 ;; wire/*) echo 0 ;; *) echo -1 ;;
	esac
}
declare -A where
for f in $(find verbs cm engine transport device wire -name '*.h'); do
	b=$(basename "$f")
	[ -n "${where[$b]:-}" ] && { echo "layers: $b exists twice (${where[$b]}, $f)"; exit 1; }
	where[$b]=$f
done
bad=0
for f in $(find verbs cm engine transport device wire -name '*.[ch]'); do
	from=$(rank "$f")
	while read -r inc; do
		h=${where[$(basename "$inc")]:-}
		[ -z "$h" ] && continue   # generated (provider_version.h) or system
		to=$(rank "$h")
		if [ "$to" -gt "$from" ]; then
			echo "layers: $f includes $h: upward (${f%%/*} -> ${h%%/*})"
			bad=1
		fi
		# A transport's own headers are its own: the layers above see
		# transport/transport.h only.
		case $h in transport/*/*)
			[ "${f#${h%/*}/}" != "$f" ] || {
				echo "layers: $f includes $h, a transport's private header"
				bad=1
			} ;;
		esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done
if grep -n 'uroce_udp_[a-z_]*[[:space:]]*(' engine/*.[ch] cm/*.[ch] verbs/*.[ch]; then
	echo "layers: the engine, cm or verbs call the UDP transport directly (above)"
	bad=1
fi
# Calls point down too: what the engine needs of verbs and cm it calls
# through its table of upcalls (engine/upcalls.h), never by name.
above=$(sed -nE '/^static/d; s/^[a-z][^(;]*[ *](uroce_[a-z0-9_]+)\(.*/\1/p' verbs/*.c cm/*.c | sort -u)
for fn in $above; do
	if grep -nE "\b$fn[[:space:]]*\(" engine/*.c; then
		echo "layers: the engine calls $fn of verbs or cm (above): use the upcall table"
		bad=1
	fi
done
[ $bad = 0 ] && echo "layers: every include points down, no transport's private header is" \
	"included from outside it, no layer above calls uroce_udp_*, and the engine" \
	"calls no function of verbs or cm"
exit $bad
