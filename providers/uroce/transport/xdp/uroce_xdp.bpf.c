// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The XDP program of the xdp transport (docs/xdp.md), attached once per
 * interface through libxdp's dispatcher so that it runs beside other XDP
 * programs.
 *
 * A RoCEv2 frame (IBTA A17.2: UDP destination port 4791, IPv4 or IPv6)
 * addressed to one of the device's addresses whose BTH destination QP a
 * process has entered in uroce_qpns goes to the AF_XDP socket of the
 * receive queue it arrived on.  Everything else goes on to the kernel
 * (XDP_PASS): ARP, ICMP, TCP, other UDP, and RoCEv2 frames for QP1, for
 * QPs no AF_XDP socket owns, and longer than the owner's socket takes,
 * which the kernel hands to the udp transport's sockets, whose rules
 * (forwarding by the QPN table, the GSI member table for QP1) then apply
 * unchanged.
 *
 * It is a multi-buffer ("frags") program where the kernel has them: on a
 * veth or NIC whose MTU is larger than a page, a frame may come in
 * several buffers (data..data_end is the first, which holds the headers).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <xdp/xdp_helpers.h>

#include "transport/xdp/xdp_maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, UROCE_XDP_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} uroce_xsks SEC(".maps");

/* BTH destination QPN -> the longest frame the AF_XDP socket of the
 * process that owns it takes (xdp_maps.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UROCE_XDP_MAX_QPNS);
	__type(key, __u32);
	__type(value, __u32);
} uroce_qpns SEC(".maps");

/* The device's addresses (IPv4-mapped or IPv6, 16 bytes) -> 1. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UROCE_XDP_MAX_ADDRS);
	__type(key, struct uroce_xdp_addr);
	__type(value, __u32);
} uroce_addrs SEC(".maps");

/* enum uroce_xdp_stat, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UROCE_XDP_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} uroce_xdp_stats SEC(".maps");

struct {
	__uint(priority, 20);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(uroce_xdp);

static __always_inline int count(__u32 stat, int action)
{
	__u64 *c = bpf_map_lookup_elem(&uroce_xdp_stats, &stat);

	if (c)
		*c += 1;
	return action;
}

/* The BTH destination QPN (bytes 5-7 of the BTH, IBTA 9.2) of the UDP
 * datagram at UDP, if it is a RoCEv2 one; -1 otherwise. */
static __always_inline long roce_dqpn(struct udphdr *udp, void *end)
{
	__u8 *bth = (__u8 *)(udp + 1);

	if ((void *)(bth + 12) > end || udp->dest != bpf_htons(UROCE_XDP_ROCE_PORT))
		return -1;
	return (long)bth[5] << 16 | (long)bth[6] << 8 | bth[7];
}

SEC("xdp.frags")
int uroce_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct uroce_xdp_addr dst = {};
	struct udphdr *udp;
	__u32 qpn, *longest;
	long q, action;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || ip->ihl != 5 ||
		    (ip->frag_off & bpf_htons(0x3fff)))   /* fragments: the kernel reassembles */
			return XDP_PASS;
		udp = (void *)(ip + 1);
		dst.b[10] = dst.b[11] = 0xff;
		__builtin_memcpy(&dst.b[12], &ip->daddr, 4);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return XDP_PASS;
		udp = (void *)(ip6 + 1);
		__builtin_memcpy(dst.b, &ip6->daddr, 16);
	} else {
		return XDP_PASS;
	}
	if ((void *)(udp + 1) > end)
		return XDP_PASS;
	q = roce_dqpn(udp, end);
	if (q < 0)
		return XDP_PASS;
	qpn = (__u32)q;
	if (qpn == 1)        /* QP1: the CM's MADs, through the kernel (cm/gsi.c) */
		return count(UROCE_XDP_PASS_QP1, XDP_PASS);
	longest = bpf_map_lookup_elem(&uroce_qpns, &qpn);
	if (!longest)
		return count(UROCE_XDP_PASS_UNOWNED, XDP_PASS);
	if (!bpf_map_lookup_elem(&uroce_addrs, &dst))
		return count(UROCE_XDP_PASS_NOT_OURS, XDP_PASS);
	if (bpf_xdp_get_buff_len(ctx) > *longest)   /* all its buffers */
		return count(UROCE_XDP_PASS_BIG, XDP_PASS);
	/* No socket on this queue (its owner left or crashed, or opened
	 * fewer queues): the kernel. */
	action = bpf_redirect_map(&uroce_xsks, ctx->rx_queue_index, XDP_PASS);
	return count(action == XDP_REDIRECT ? UROCE_XDP_REDIRECTED : UROCE_XDP_PASS_NO_SOCKET,
		     action);
}

char _license[] SEC("license") = "Dual BSD/GPL";
