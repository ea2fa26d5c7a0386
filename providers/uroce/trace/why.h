/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The protocol decisions a trace records, as one table: a name (written in
 * the trace), the IBTA section behind it (Volume 1, the numbering the
 * engine's comments use), a short title, and what it means in words.
 * Shared by the provider, which writes the name, and `uroce trace`, which
 * explains it.  No dependencies.
 */
#ifndef UROCE_TRACE_WHY_H
#define UROCE_TRACE_WHY_H

/* X(name, what the decision's number is, section, title, words) */
#define UROCE_WHY_LIST(X)                                                              \
	X(NAK_SEQ, "expected PSN", "9.7.5.1.4", "PSN sequence error NAK sent",                         \
	  "the responder expected another PSN: the packets in between were lost. It "  \
	  "sends one NAK naming the PSN it expects, and drops later packets until "    \
	  "that PSN comes again")                                                      \
	X(OUT_OF_SEQ, "expected PSN", "9.7.5.1.4", "out of sequence, NAK already sent",                \
	  "dropped without a word: a NAK for the expected PSN is already on its way")  \
	X(DUPLICATE, "expected PSN", "9.7.5.1.1", "duplicate request",                                 \
	  "a PSN before the expected one, already executed: a SEND or WRITE is "       \
	  "acknowledged again and not delivered twice, a READ is executed again, an "  \
	  "atomic is answered from its saved result")                                  \
	X(RNR_NAK, "RNR timer code", "9.7.5.2.8", "Receiver Not Ready NAK sent",                         \
	  "a SEND arrived and no receive WQE was posted: the responder answers RNR "   \
	  "NAK with its minimum RNR timer and waits for the resend")                   \
	X(NAK_FATAL, "NAK code", "9.9.3.1.2", "fatal NAK sent",                                    \
	  "the request cannot be executed (invalid request, access or operational "    \
	  "error): the responder NAKs it and its QP goes to the error state")          \
	X(RETX_NAK, "retries left", "9.7.5.1.4", "retransmit after a PSN sequence error NAK",          \
	  "the responder said it is missing this PSN: the requester goes back to it "  \
	  "and resends every packet from there (go-back-N, 9.7.6.1.3), spending one "  \
	  "transport retry")                                                           \
	X(RETX_TIMEOUT, "retries left", "9.7.6.1.3", "retransmit after the local ACK timeout",         \
	  "no acknowledgement came within the local ACK timeout (4.096 us x "          \
	  "2^timeout): the requester resends everything from the oldest "              \
	  "unacknowledged PSN (go-back-N) and spends one transport retry")             \
	X(RETX_PROBE, "early resends so far", "9.7.6.1.3", "early retransmit (uroce's tail-loss probe)",       \
	  "nothing was acknowledged for a few round trips: before the local ACK "      \
	  "timeout, uroce resends its newest packet (the first probe) or goes back "   \
	  "to the oldest unacknowledged PSN (the second), without spending a retry "   \
	  "(not an IBTA rule: the ACK timeout of 9.7.6.1.3 still decides when to "     \
	  "give up)")                                                                  \
	X(RETX_IMPLIED, "PSN of the response that showed the gap", "9.7.5.1.4", "retransmit after an implied NAK",                \
	  "a response to a later request arrived while a READ or atomic response is " \
	  "still missing: that response was lost, so the READ or atomic is sent "      \
	  "again from the missing PSN")                                                \
	X(RNR_WAIT, "wait in us", "9.7.5.2.8", "RNR NAK received: waiting",                          \
	  "the responder had no receive WQE: the requester waits the RNR timer the "   \
	  "NAK names (table 45) before sending this PSN again, spending one RNR retry")\
	X(RNR_RESUME, "", "9.7.5.2.8", "RNR timer expired: resending",                     \
	  "the RNR wait is over: the requester resends from the PSN the RNR NAK named")\
	X(RETRY_EXC, "", "9.7.6.1.3", "transport retries exhausted",                       \
	  "retry_cnt resends brought no progress: the WQE completes with "             \
	  "RETRY_EXC_ERR and the QP goes to the error state")                          \
	X(RNR_RETRY_EXC, "", "9.7.5.2.8", "RNR retries exhausted",                         \
	  "rnr_retry RNR NAKs in a row: the WQE completes with RNR_RETRY_EXC_ERR and " \
	  "the QP goes to the error state")

enum uroce_why {
#define UROCE_WHY_ENUM(n, arg, sec, title, words) UROCE_WHY_##n,
	UROCE_WHY_LIST(UROCE_WHY_ENUM)
#undef UROCE_WHY_ENUM
	UROCE_WHY_COUNT
};

#endif
