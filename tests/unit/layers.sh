#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The folders of providers/uroce are layers that point one way
# (docs/design.md, "Source layout"):
#   verbs -> cm -> engine -> transport -> device -> trace -> wire -> knob
# and preload/, apart: liburoce-preload.so, which may include the CM's
# door (cm/cm.h, its UCMA bridge) and the device layer's (device/device.h:
# the registry and counters its RDMA netlink answers read), nothing else.
#
# It fails on:
#   - a folder of providers/uroce this script does not rank;
#   - a project include that does not name its folder from the one
#     include root (#include "engine/wq.h"; only the generated
#     provider_version.h, at the root, keeps a bare name);
#   - an include that points upward, and any include cycle between
#     folders;
#   - a file outside a folder that includes any header of it but its
#     door, the one public header below (engine/engine_int.h, cm/gsi.h,
#     device/qpn.h ... are their folder's own); a transport's headers
#     (transport/udp/, transport/xdp/, transport/loop/) are that
#     transport's alone (the loop transport's, its own and its tests');
#   - two files with one basename;
#   - a call of uroce_udp_* from the engine, cm or verbs, and a call from
#     the engine of a function defined in verbs or cm (its upcalls are a
#     table, engine/upcalls.h).
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}/providers/uroce
cd "$root" || exit 1

declare -A rank=([verbs]=7 [cm]=6 [engine]=5 [transport]=4 [device]=3 [trace]=2 [wire]=1
		  [knob]=0)
# Each folder's door: what files outside it may include.  verbs, at the
# top, has none: nothing calls it but libibverbs, through its ops table.
declare -A door=([cm]=cm/cm.h [engine]=engine/engine.h [transport]=transport/transport.h
		 [device]=device/device.h [trace]=trace/trace.h [wire]=wire/wire.h
		 [knob]=knob/knob.h)
generated="provider_version.h transport/xdp/uroce_xdp_obj.h"

bad=0
fail() { echo "layers: $*"; bad=1; }

folders=$(find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
for d in $folders; do
	[ -n "${rank[$d]:-}" ] || [ "$d" = preload ] || fail "folder $d/ has no rank (add it to tests/unit/layers.sh)"
done

declare -A seen
for f in $(find $folders -name '*.[ch]' | sort); do
	b=$(basename "$f")
	[ -n "${seen[$b]:-}" ] && fail "$b exists twice (${seen[$b]}, $f)"
	seen[$b]=$f
done

declare -A edge
for f in $(find $folders -name '*.[ch]' | sort); do
	from=${f%%/*}
	fdir=$(dirname "$f")
	while read -r inc; do
		case " $generated " in *" $inc "*) continue ;; esac
		if [ "${inc#*/}" = "$inc" ] || [ ! -f "$inc" ]; then
			fail "$f includes \"$inc\": not a header named from providers/uroce"
			continue
		fi
		to=${inc%%/*}
		[ "$to" = "$from" ] && {
			# inside a folder: a transport's own headers stay its own
			case $inc in transport/*/*)
				[ "$fdir" = "$(dirname "$inc")" ] ||
					fail "$f includes $inc, a header private to $(dirname "$inc")/" ;;
			esac
			continue
		}
		edge["$from $to"]=1
		if [ "$from" = preload ]; then
			[ "$inc" = cm/cm.h ] || [ "$inc" = device/device.h ] ||
				fail "$f includes $inc: preload/ may include cm/cm.h and device/device.h only"
			continue
		fi
		if [ "$to" = preload ]; then
			fail "$f includes $inc: nothing includes preload/"
			continue
		fi
		[ -n "${rank[$from]:-}" ] && [ -n "${rank[$to]:-}" ] || continue   # unranked: said above
		if [ "${rank[$to]}" -gt "${rank[$from]}" ]; then
			fail "$f includes $inc: upward ($from -> $to)"
		fi
		if [ "$inc" != "${door[$to]:-}" ]; then
			fail "$f includes $inc, internal to $to/ (its door: ${door[$to]:-none})"
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done

# Cycles between folders, whatever the ranks say.
if [ ${#edge[@]} -gt 0 ] && ! printf '%s\n' "${!edge[@]}" | tsort >/dev/null 2>&1; then
	fail "the folders include each other in a cycle: $(printf '%s\n' "${!edge[@]}" | tsort 2>&1 >/dev/null | grep -v 'input contains a loop' | sed 's/^tsort: //' | tr '\n' ' ')"
fi

if grep -n 'uroce_udp_[a-z_]*[[:space:]]*(' engine/*.[ch] cm/*.[ch] verbs/*.[ch]; then
	fail "the engine, cm or verbs call the UDP transport directly (above)"
fi
# Calls point down too: what the engine needs of verbs and cm it calls
# through its table of upcalls (engine/upcalls.h), never by name.
above=$(sed -nE '/^static/d; s/^[a-z][^(;]*[ *](uroce_[a-z0-9_]+)\(.*/\1/p' verbs/*.c cm/*.c | sort -u)
for fn in $above; do
	if grep -nE "\b$fn[[:space:]]*\(" engine/*.c; then
		fail "the engine calls $fn of verbs or cm (above): use the upcall table"
	fi
done

if [ $bad = 0 ]; then
	echo "layers: every folder ranked, every include named from the root and pointing" \
		"down through its folder's door, no cycle, no basename twice, the engine" \
		"calls nothing of verbs or cm by name"
	echo "layers: the folders include: $(printf '%s\n' "${!edge[@]}" | sort | sed 's/ / -> /' | paste -sd, - | sed 's/,/, /g')"
fi
exit $bad
