#!/bin/sh
# Open MPI's launch agent (plm_rsh_agent) for "hosts" that are network
# namespaces on this machine: mpirun calls it as ssh, `AGENT HOST COMMAND...`,
# with COMMAND one shell command line (the orted daemon and its
# environment); run that line inside namespace HOST.
#
# Every namespace is the same host to ORTE (one hostname, one /tmp), so the
# daemons would share one session directory tree
# (/tmp/ompi.HOSTNAME.UID/jf.JOB/...).  ORTE creates and removes it without
# locking: two daemons starting together race on mkdir ("A call to mkdir was
# unable to create the desired directory ... File exists"), and the loser,
# already detached by --daemonize, dies where no one sees it while mpirun
# waits for it forever (measured: 1 launch of -np 4 in 5 hung).  So each
# namespace's daemon gets a session tree of its own, under
# $NETNS_AGENT_TMPDIR (default: $TMPDIR or /tmp), in a directory named after
# the namespace.
[ $# -ge 2 ] || { echo "usage: $0 NETNS COMMAND..." >&2; exit 2; }
ns=$1
shift
base=${NETNS_AGENT_TMPDIR:-${TMPDIR:-/tmp}}/ompi-netns.$ns
mkdir -p "$base" || exit 1
exec ip netns exec "$ns" env OMPI_MCA_orte_tmpdir_base="$base" /bin/sh -c "$*"
