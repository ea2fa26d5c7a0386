#!/bin/sh
# Open MPI's launch agent (plm_rsh_agent) for "hosts" that are network
# namespaces on this machine: mpirun calls it as ssh, `AGENT HOST COMMAND...`,
# with COMMAND one shell command line (the orted daemon and its
# environment); run that line inside namespace HOST.
[ $# -ge 2 ] || { echo "usage: $0 NETNS COMMAND..." >&2; exit 2; }
ns=$1
shift
exec ip netns exec "$ns" /bin/sh -c "$*"
