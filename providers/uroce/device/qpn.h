/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Device-wide QP numbers shared by every process that opens the device
 * (IBTA: a QPN names one QP of the channel adapter).  A small table in
 * shared memory maps each QPN to the process that owns it, so a packet
 * that reaches the wrong process can be forwarded to its owner, and a
 * crashed owner's QPNs are taken back.
 */
#ifndef UROCE_QPN_H
#define UROCE_QPN_H

#include <stdint.h>
#include <sys/types.h>

#include <uroce/ib_cm.h>

#define UROCE_QPN_FIRST 0x11   /* QP0/QP1 are special; start where rxe does */

struct uroce_qpn_table;

/* Open (creating if needed) the table of the devices on NETDEV in namespace NSID. */
struct uroce_qpn_table *uroce_qpn_open(const char *nsid, const char *netdev, uint32_t nslots);
void uroce_qpn_close(struct uroce_qpn_table *t);
/* The same kind of table at PATH: the GSI member table (cm/gsi.c) is one. */
struct uroce_qpn_table *uroce_qpn_open_file(const char *path, uint32_t nslots);
/* Open (creating, mode 0600) a shared-memory file only this user may write;
 * refuses one another user made under that name.  fd or -1 with errno. */
int uroce_shm_open_own(const char *path);

/*
 * A QP's RoCEv2 UDP source port is 0xC000 | the low 14 bits of its QPN
 * (transport.h), so that no two QPs on one address share a port: two
 * connections from one port to one peer address look alike to the peer's
 * kernel, which hands both to one receive socket and one of them must then
 * be forwarded (issue 14: 8 processes x 64 QPs).  So the live QPs of a
 * table differ in those bits, and none has the bits of QP 0/1 (below
 * UROCE_QPN_FIRST) or of the CM's fixed port (CM_GSI_UDP_SPORT): at most
 * UROCE_QPN_MAX_LIVE QPs per address.
 */
#define UROCE_QPN_PORT_BITS 14
#define UROCE_QPN_PORT_MASK ((1u << UROCE_QPN_PORT_BITS) - 1)
#define UROCE_QPN_MAX_LIVE (UROCE_QPN_PORT_MASK + 1 - UROCE_QPN_FIRST - 1)

/* A free QPN now owned by this process, whose packets other processes
 * forward to FWD_PORT; 0 with errno when none is left.  _qp: one for a QP,
 * its port bits kept unique (above). */
uint32_t uroce_qpn_alloc(struct uroce_qpn_table *t, uint16_t fwd_port);
uint32_t uroce_qpn_alloc_qp(struct uroce_qpn_table *t, uint16_t fwd_port);
void uroce_qpn_free(struct uroce_qpn_table *t, uint32_t qpn);

/*
 * The pid owning QPN (and its forwarding port), 0 if none.  With CHECK_ALIVE (slow: reads /proc) a
 * dead owner's slot is freed and 0 returned; without it, the hot path of
 * packet forwarding trusts the table and re-asks when delivery fails.
 */
pid_t uroce_qpn_owner(struct uroce_qpn_table *t, uint32_t qpn, int check_alive,
		      uint16_t *fwd_port);

/* The first entry owned by the live process PID (and its forwarding port),
 * 0 if none; entries of dead processes that had PID are freed on the way. */
uint32_t uroce_qpn_find(struct uroce_qpn_table *t, pid_t pid, uint16_t *fwd_port);

/* An owner word: PID << 32 | the low 32 bits of its start time, so a reused
 * PID is not taken for the owner; and whether that process still lives. */
uint64_t uroce_owner_word(pid_t pid);
int uroce_owner_alive(uint64_t word);

#endif
