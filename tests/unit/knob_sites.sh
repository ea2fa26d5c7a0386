#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Every environment variable uroce reads is a knob (knob/knob.h): nothing
# under providers/uroce or cli calls getenv but knob/knob.c, except a line
# that says why it is "not a knob" (cli/run.c reads back the variables it
# has just set for its child).  Fails naming each other call.
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 1
hits=$(grep -rnE '\b(secure_)?getenv[[:space:]]*\(' providers/uroce cli --include='*.[ch]' |
	grep -v '^providers/uroce/knob/knob\.c:' | grep -v 'not a knob')
if [ -n "$hits" ]; then
	echo "knob_sites: getenv outside the knob table (add a knob to knob/knob.h):"
	echo "$hits"
	exit 1
fi
echo "ok: getenv only in knob/knob.c"
