#!/bin/bash
# close_wait (C, stock librdmacm) under `uroce run` in a namespace whose lo
# carries a uroce device: a thread blocked in rdma_get_cm_event while
# another destroys the id and closes the channel waits on, as with the
# kernel's rdma_cm (rping -c exited 255 with "rdma_get_cm_event: Bad file
# descriptor" when its DISCONNECTED event lost that race).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
cm_setup
cm_run $CM_LO_NS "$CLOSE_WAIT" || fail "close_wait"
