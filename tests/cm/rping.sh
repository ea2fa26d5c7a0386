#!/bin/bash
# rping, unmodified, on lo and across two namespaces: 200 pings of 4000
# bytes with data verification on both sides (-V), and the ping data shown
# (-v) so the test can count them.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
cm_setup
for w in ${CM_WHERE:-lo veth}; do
	cm_where $w
	port=$((7000 + RANDOM % 1000))
	cm_pair "rping $w" $SRV_NS $CLI_NS -- rping -s -a $SRV_ADDR -p $port -v -V -C 200 -S 4000 \
		-- rping -c -a $SRV_ADDR -p $port -v -V -C 200 -S 4000
	n=$(grep -c 'ping data' "$CM_CLI_LOG" || true)
	[ "$n" -eq 200 ] || { cat "$CM_CLI_LOG"; fail "rping $w: $n pings, not 200"; }
	pass "rping $w: 200 verified pings of 4000 bytes"
done
