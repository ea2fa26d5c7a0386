#!/usr/bin/python3
"""bench/report.py RESULTS.tsv OUTDIR: the goals of issue 14 with their ratios.

Reads what bench/run.sh measured (WHERE, NAME, KEY, VALUE per line), prints
each goal with its ratio against the peer measured in the same run, the CPU
seconds per GB and per million messages of each side, the latency
distributions and their goals (issue 47, bench/dist.py), and writes
OUTDIR/results.json, OUTDIR/results.png and OUTDIR/latency_cdf.png (for
docs/performance.md).
"""
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist  # noqa: E402  (bench/dist.py, beside this file)

# Each goal: (title, uroce figure, peer figure, how they compare, target).
# "le": ratio uroce/peer must be at most target; "ge": at least target.
GOALS = [
    ("latency: ib_send_lat 2 B typical / UDP ping-pong one way",
     ("ib_send_lat", "lat_typical_us"), ("udp_ping", "oneway_us"), "le", 1.5),
    ("latency: ib_write_lat 2 B typical / UDP ping-pong one way",
     ("ib_write_lat", "lat_typical_us"), ("udp_ping", "oneway_us"), "le", 1.5),
    ("latency: ib_read_lat 2 B typical / UDP ping-pong one way",
     ("ib_read_lat", "lat_typical_us"), ("udp_ping", "oneway_us"), "le", 1.5),
    ("bandwidth: ib_write_bw 1 MiB / iperf3 TCP",
     ("ib_write_bw_1m", "gbit_s"), ("iperf3_tcp", "gbit_s"), "ge", 1.0),
    ("bandwidth: ib_send_bw 1 MiB / iperf3 TCP",
     ("ib_send_bw_1m", "gbit_s"), ("iperf3_tcp", "gbit_s"), "ge", 1.0),
    ("moonshot: ib_write_bw 1 MiB / UDP GSO+GRO",
     ("ib_write_bw_1m", "gbit_s"), ("udp_gso", "gbit_s"), "ge", 0.75),
    ("message rate: ib_send_bw 64 B / UDP sendmmsg 64 B",
     ("ib_send_bw_64b", "mpps"), ("udp_mmsg", "mpps"), "ge", 2.0),
    ("message rate: ib_write_bw 64 B / UDP sendmmsg 64 B",
     ("ib_write_bw_64b", "mpps"), ("udp_mmsg", "mpps"), "ge", 2.0),
    ("scale: ib_write_bw 64 KiB -q 128 / -q 1",
     ("ib_write_bw_64k_q128", "gbit_s"), ("ib_write_bw_64k", "gbit_s"), "ge", 1.0),
]


# What a design with one thread hop per message cannot go below on this
# machine (docs/performance.md, "Latency"): the same figures against the UDP
# ping-pong whose receiver is a thread woken from recv() while another
# spins (udp_peer ... hop).  ib_write_lat's responder spins on memory, so a
# thread of uroce's must take every WRITE; ib_read_lat's value is a whole
# round trip whose responder sleeps: one hop and one busy-polled way.
# And against the busy-polled ping-pong whose every way is two datagrams in
# one GSO send (udp_peer ... two): a reliable ping-pong's message and the
# ACK of the peer's last one, through the kernel's path; what is left above
# it is uroce's own work.  (title, uroce figure, peers summed)
BOUNDS = [
    ("ib_send_lat 2 B typical / UDP ping-pong one way (no hop needed)",
     ("ib_send_lat", "lat_typical_us"), [("udp_ping", "oneway_us")]),
    ("ib_send_lat 2 B typical / UDP one way of two datagrams (+ ACK)",
     ("ib_send_lat", "lat_typical_us"), [("udp_two", "oneway_us")]),
    ("ib_write_lat 2 B typical / UDP one way of two datagrams (+ ACK)",
     ("ib_write_lat", "lat_typical_us"), [("udp_two", "oneway_us")]),
    ("ib_write_lat 2 B typical / UDP one way with one thread hop",
     ("ib_write_lat", "lat_typical_us"), [("udp_hop", "oneway_us")]),
    ("ib_read_lat 2 B typical / UDP one way busy + one way with a hop",
     ("ib_read_lat", "lat_typical_us"), [("udp_ping", "oneway_us"), ("udp_hop", "oneway_us")]),
    # The READ responder's application makes no verbs call: its progress
    # thread sleeps, and on a quiet VM its CPU halts, so a READ is a round
    # trip whose requester spins and whose responder is woken: the UDP
    # ping-pong whose pong sleeps in recv() (udp_peer ... sleeper) has
    # that shape (docs/performance.md, "ib_read_lat").
    ("ib_read_lat 2 B typical / UDP round trip, pong asleep in recv",
     ("ib_read_lat", "lat_typical_us"), [("udp_sleeper", "oneway_us"), ("udp_sleeper", "oneway_us")]),
    # ibv_get_cq_event is libibverbs' own read() of the channel's fd: a
    # provider that is not the kernel takes the datagram on a thread of
    # its own and wakes the reader, two wake-ups a way (udp_peer ... chan,
    # docs/performance.md, "Event path").
    ("ib_send_lat -e 2 B typical / UDP one way via a thread + a pipe",
     ("ib_send_lat_ev", "lat_typical_us"), [("udp_chan", "oneway_us")]),
    # UCX's tag_lat 8 B is one eager SEND of 17 B each way over rc_verbs:
    # against ib_send_lat at that size, what UCX itself adds.
    ("UCX tag_lat 8 B median / ib_send_lat 17 B (UCX's SEND) typical",
     ("ucx_rc_tag_lat", "lat_us"), [("ib_send_lat_17", "lat_typical_us")]),
    ("ib_send_lat 17 B typical / UCX over TCP tag_lat 8 B median",
     ("ib_send_lat_17", "lat_typical_us"), [("ucx_tcp_tag_lat", "lat_us")]),
]


# Paths whose peers were measured on another path of the run: uroce over
# transport xdp shares the veth (and so the peers) of the udp figures.
PEERS_OF = {"xdp": "veth"}

# Issue 15: xdp against udp on the same veth, same run.  (title, name, key,
# lower_is_better)
XDP_VS_UDP = [
    ("ib_send_lat 2 B typical, us", "ib_send_lat", "lat_typical_us", True),
    ("ib_write_lat 2 B typical, us", "ib_write_lat", "lat_typical_us", True),
    ("ib_read_lat 2 B typical, us", "ib_read_lat", "lat_typical_us", True),
    ("ib_write_bw 1 MiB, Gbit/s", "ib_write_bw_1m", "gbit_s", False),
    ("ib_send_bw 1 MiB, Gbit/s", "ib_send_bw_1m", "gbit_s", False),
    ("ib_write_bw 64 KiB, Gbit/s", "ib_write_bw_64k", "gbit_s", False),
    ("ib_send_bw 64 B, Mpps", "ib_send_bw_64b", "mpps", False),
    ("ib_write_bw 64 B, Mpps", "ib_write_bw_64b", "mpps", False),
]
XDP_RATE_GOAL_MPPS = 1.2
# The peers beneath uroce's engine on the same veth (bench/run.sh
# xdp_alone): a bare AF_XDP loop (the raw figure of the goal) and the xdp
# transport alone.  (name, title)
XDP_BENEATH = [("xdp_raw_64b", "bare AF_XDP loop"), ("xdp_transport_64b", "xdp transport alone")]


def load(path):
    """WHERE -> NAME -> KEY -> value (float where it parses).  Lines that are
    not four tab-separated fields are reported on stderr, not dropped
    silently."""
    res = defaultdict(lambda: defaultdict(dict))
    bad = 0
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\r\n").split("\t")
            if len(parts) != 4:
                if line.strip():
                    bad += 1
                    print(f"report: {path}:{n}: not WHERE<TAB>NAME<TAB>KEY<TAB>VALUE: {line.strip()!r}",
                          file=sys.stderr)
                continue
            where, name, key, val = parts
            try:
                val = float(val)
            except ValueError:
                pass
            res[where][name][key] = val
    return res, bad


def fig(res, where, name, key):
    v = res.get(where, {}).get(name, {}).get(key)
    return v if isinstance(v, float) else None


# A peer measured again after uroce's runs (bench/run.sh: iperf3, whose
# figure swung by x3 within minutes on this VM) is taken as the mean of the
# two; print_drift shows both.
AFTER = "_after"


def peer_fig(res, where, name, key):
    before, after = fig(res, where, name, key), fig(res, where, name + AFTER, key)
    return (before + after) / 2 if before is not None and after is not None else before


def drift(res):
    """(where, peer, before, after) of each peer measured twice."""
    return [(w, n[:-len(AFTER)], fig(res, w, n[:-len(AFTER)], "gbit_s"), fig(res, w, n, "gbit_s"))
            for w in res for n in res[w] if n.endswith(AFTER)]


def print_drift(d, out=sys.stdout):
    for w, n, before, after in d:
        print(f"{w:5} {n} measured before and after uroce's runs: {fmt(before)} and {fmt(after)} "
              f"Gbit/s; the goals take the mean", file=out)


def goals(res):
    out = []
    for where in res:
        for title, (un, uk), (pn, pk), how, target in GOALS:
            # A peer tool's figure may come from another path of the run; a
            # uroce figure (the scale goal's -q 1) is always this path's.
            pw = where if pn.startswith("ib_") else PEERS_OF.get(where, where)
            u, p = fig(res, where, un, uk), peer_fig(res, pw, pn, pk)
            ratio = u / p if u is not None and p else None
            met = None if ratio is None else (ratio <= target if how == "le" else ratio >= target)
            err = res[where].get(un, {}).get("error") or res.get(pw, {}).get(pn, {}).get("error")
            out.append(dict(where=where, goal=title, uroce=u, peer=p, ratio=ratio,
                            target=("<= " if how == "le" else ">= ") + str(target), met=met,
                            error=err if isinstance(err, str) else None))
        idle = fig(res, where, "idle_qps", "cpu_pct")
        out.append(dict(where=where, goal="CPU: idle process with 16 open QPs, % of a CPU",
                        uroce=idle, peer=None, ratio=None, target="~0 (<= 1)",
                        met=None if idle is None else idle <= 1.0, error=None))
    return out


def bounds(res):
    out = []
    for where in res:
        pw = PEERS_OF.get(where, where)
        for title, (un, uk), peers in BOUNDS:
            u = fig(res, where, un, uk)
            ps = [fig(res, pw, pn, pk) for pn, pk in peers]
            p = sum(ps) if all(v is not None for v in ps) else None
            out.append(dict(where=where, bound=title, uroce=u, peer=p,
                            ratio=u / p if u is not None and p else None))
    return out


def print_bounds(b, out=sys.stdout):
    print("\n== latency against what one thread hop, or a second datagram, costs here "
          "(ratio = uroce / peer)", file=out)
    print(f"{'where':5} {'figure':62} {'uroce':>9} {'peer':>9} {'ratio':>7}", file=out)
    for r in b:
        print(f"{r['where']:5} {r['bound']:62} {fmt(r['uroce']):>9} {fmt(r['peer']):>9} "
              f"{fmt(r['ratio']):>7}", file=out)


def net_cpu(res, where, name, side):
    """CPU seconds of one side of a measurement without the start-up of a
    perftest pair (measured with 5 messages: bench/run.sh, pt_setup), and
    that start-up (None where none was measured).  None where the start-up
    measured as much as the whole run: the two cannot be told apart."""
    c = fig(res, where, name, "cpu_s_" + side)
    setup = fig(res, where, name, "cpu_s_%s_setup" % side)
    if c is None or setup is None:
        return c, None
    return (c - setup if c > setup else None), setup


def cpu_table(res):
    """One row per measurement and side: CPU seconds, per GB and per million
    messages moved (bytes and msgs as bench/run.sh recorded them)."""
    rows = []
    for where in res:
        for name, f in res[where].items():
            b, m = fig(res, where, name, "bytes"), fig(res, where, name, "msgs")
            for side in ("server", "client"):
                c = fig(res, where, name, "cpu_s_" + side)
                if c is None:
                    continue
                net, setup = net_cpu(res, where, name, side)
                rows.append(dict(where=where, name=name, side=side, cpu_s=c,
                                 setup_s=setup, net_s=net,
                                 per_gb=net / (b / 1e9) if b and net is not None else None,
                                 per_mmsg=net / (m / 1e6) if m and net is not None else None))
    return rows


def fmt(v, spec=".2f"):
    return "-" if v is None else format(v, spec)


def plot(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: no matplotlib (python3-matplotlib): no plot", file=sys.stderr)
        return False
    panels = [
        ("one-way latency, µs (lower is better)", [
            ("UDP ping-pong", "udp_ping", "oneway_us"), ("qperf tcp_lat", "qperf_tcp_lat", "lat_us"),
            ("UCX tcp put_lat", "ucx_tcp_put_lat", "lat_us"),
            ("ib_send_lat", "ib_send_lat", "lat_typical_us"),
            ("ib_write_lat", "ib_write_lat", "lat_typical_us"),
            ("ib_read_lat", "ib_read_lat", "lat_typical_us")], True),
        ("bandwidth, Gbit/s", [
            ("UDP GSO+GRO", "udp_gso", "gbit_s"), ("iperf3 TCP", "iperf3_tcp", "gbit_s"),
            ("qperf tcp_bw", "qperf_tcp_bw", "gbit_s"), ("UCX tcp put_bw", "ucx_tcp_put_bw", "gbit_s"),
            ("UCX tcp tag_bw", "ucx_tcp_tag_bw", "gbit_s"),
            ("write_bw 1M", "ib_write_bw_1m", "gbit_s"), ("send_bw 1M", "ib_send_bw_1m", "gbit_s"),
            ("write_bw 64K", "ib_write_bw_64k", "gbit_s"), ("send_bw 64K", "ib_send_bw_64k", "gbit_s"),
            ("write_bw 64K -q 4", "ib_write_bw_64k_q4", "gbit_s"),
            ("write_bw 64K -q 128", "ib_write_bw_64k_q128", "gbit_s")], False),
        ("64 B message rate, Mpps", [
            ("UDP sendmmsg", "udp_mmsg", "mpps"), ("ib_send_bw 64 B", "ib_send_bw_64b", "mpps"),
            ("ib_write_bw 64 B", "ib_write_bw_64b", "mpps")], False),
    ]
    wheres = list(res)
    fig_, axes = plt.subplots(len(panels), 1, figsize=(10, 11))
    for ax, (title, items, log) in zip(axes, panels):
        width = 0.8 / max(1, len(wheres))
        for i, where in enumerate(wheres):
            vals = [fig(res, where, n, k) or 0 for _, n, k in items]
            xs = [j + i * width for j in range(len(items))]
            ax.bar(xs, vals, width, label=where)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(items))])
        ax.set_xticklabels([lbl for lbl, _, _ in items], rotation=20, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        if log:
            ax.set_yscale("log")
        ax.legend(fontsize=8)
    fig_.tight_layout()
    fig_.savefig(path, dpi=90)
    return True


def print_goals(g, out=sys.stdout):
    print("\n== goals (ratio = uroce / peer of the same run and path)", file=out)
    print(f"{'where':5} {'goal':62} {'uroce':>9} {'peer':>9} {'ratio':>7} {'target':>9}  met", file=out)
    for r in g:
        if r["error"]:
            met = "ERROR: " + r["error"]
        elif r["uroce"] is None and r["peer"] is None:
            met = "not measured"
        else:
            met = {None: "-", True: "yes", False: "no"}[r["met"]]
        print(f"{r['where']:5} {r['goal']:62} {fmt(r['uroce']):>9} {fmt(r['peer']):>9} "
              f"{fmt(r['ratio']):>7} {r['target']:>9}  {met}", file=out)
    n = [r for r in g if r["met"] is not None]
    print(f"{sum(1 for r in n if r['met'])} of {len(n)} goals with both figures met", file=out)


def xdp_vs_udp(res):
    """Rows of xdp against udp on the same veth, and issue 15's goals."""
    if "xdp" not in res or "veth" not in res:
        return [], []
    rows = []
    for title, name, key, lower in XDP_VS_UDP:
        x, u = fig(res, "xdp", name, key), fig(res, "veth", name, key)
        rows.append(dict(figure=title, xdp=x, udp=u, ratio=x / u if x is not None and u else None,
                         error=res["xdp"].get(name, {}).get("error")))
        for side in ("server", "client"):
            cx, cu = net_cpu(res, "xdp", name, side)[0], net_cpu(res, "veth", name, side)[0]
            mx, mu = fig(res, "xdp", name, "msgs"), fig(res, "veth", name, "msgs")
            if key == "mpps" and cx is not None and cu is not None and mx and mu:
                a, b = cx / (mx / 1e6), cu / (mu / 1e6)
                rows.append(dict(figure=f"  CPU s per million messages, {side}", xdp=a, udp=b,
                                 ratio=a / b if b else None, error=None))
    rate = max([v for v in (fig(res, "xdp", "ib_send_bw_64b", "mpps"),
                            fig(res, "xdp", "ib_write_bw_64b", "mpps")) if v is not None], default=None)
    lat = [r for r in rows[:3] if r["ratio"] is not None]
    # The raw AF_XDP figure of the same run (bench/run.sh xdp_alone),
    # packets/s at its sender.
    raw = fig(res, "xdp", XDP_BENEATH[0][0], "mpps")
    goals_ = [
        dict(goal=f"64 B message rate over xdp >= {XDP_RATE_GOAL_MPPS} Mpps", value=rate,
             met=None if rate is None else rate >= XDP_RATE_GOAL_MPPS),
        dict(goal="64 B rate over xdp / a bare AF_XDP loop >= 1", value=raw,
             ratio=rate / raw if rate is not None and raw else None,
             met=None if rate is None or not raw else rate >= raw),
        dict(goal="latency over xdp no worse than udp (each ratio <= 1)",
             value=max(r["ratio"] for r in lat) if lat else None,
             met=False if any(r["ratio"] > 1.0 for r in lat) else None if len(lat) < 3 else True),
    ]
    return rows, goals_


def print_xdp(rows, goals_, res, out=sys.stdout):
    if not rows:
        return
    print("\n== xdp against udp on the same veth (ratio = xdp / udp)", file=out)
    print(f"{'figure':40} {'xdp':>9} {'udp':>9} {'ratio':>7}", file=out)
    for r in rows:
        tail = "  ERROR: " + r["error"] if isinstance(r["error"], str) else ""
        print(f"{r['figure']:40} {fmt(r['xdp'], '.3f'):>9} {fmt(r['udp'], '.3f'):>9} "
              f"{fmt(r['ratio']):>7}{tail}", file=out)
    for name, title in XDP_BENEATH:
        got = res["xdp"].get(name, {})
        mpps, rx, n = fig(res, "xdp", name, "mpps"), fig(res, "xdp", name, "received"), fig(res, "xdp", name, "msgs")
        if isinstance(got.get("error"), str):
            print(f"beneath: {title:34} ERROR: {got['error']}", file=out)
        elif mpps is not None:
            arrived = f", {rx:.0f} of {n:.0f} received" if rx is not None and n else ""
            print(f"beneath: {title:34} {mpps:9.3f} Mpps sent{arrived}", file=out)
    for g in goals_:
        met = {None: "not measured", True: "yes", False: "no"}[g["met"]]
        ratio = f"  ratio {fmt(g['ratio'])}" if "ratio" in g else ""
        print(f"goal: {g['goal']:56} {fmt(g['value'], '.3f'):>9}  {met}{ratio}", file=out)


def print_cpu(c, out=sys.stdout):
    print("\n== CPU seconds per side (user + system of the process tree); per GB and per "
          "million messages without a bandwidth run's start-up (perftest with 5 messages; "
          "'-' where it measured as much as the run); a ping-pong spins on both sides", file=out)
    print(f"{'where':5} {'measurement':22} {'side':6} {'cpu s':>7} {'start':>7} {'s/GB':>8} "
          f"{'s/Mmsg':>8}", file=out)
    for r in c:
        print(f"{r['where']:5} {r['name']:22} {r['side']:6} {r['cpu_s']:7.2f} "
              f"{fmt(r['setup_s']):>7} {fmt(r['per_gb']):>8} {fmt(r['per_mmsg']):>8}", file=out)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: report.py RESULTS.tsv OUTDIR")
    res, bad = load(sys.argv[1])
    outdir = sys.argv[2]
    if not res:
        sys.exit(f"report: no figures in {sys.argv[1]} ({bad} malformed lines)")
    g = goals(res)
    print_goals(g)
    print_drift(drift(res))
    b = bounds(res)
    print_bounds(b)
    xrows, xgoals = xdp_vs_udp(res)
    print_xdp(xrows, xgoals, res)
    drows = dist.table(res, PEERS_OF)
    dgoals = dist.goals(res, drows, PEERS_OF)
    dist.print_table(drows)
    dist.print_goals(dgoals)
    c = cpu_table(res)
    print_cpu(c)
    with open(outdir + "/results.json", "w") as f:
        json.dump(dict(results=res, goals=g, peer_drift=drift(res), bounds=b, cpu=c, xdp_vs_udp=xrows,
                       xdp_goals=xgoals, distributions=drows, distribution_goals=dgoals), f, indent=1)
    png = " and results.png" if plot(res, outdir + "/results.png") else ""
    cdf = " and latency_cdf.png" if dist.plot_cdf(res, outdir, outdir + "/latency_cdf.png") else ""
    print(f"\nwrote {outdir}/results.json{png}{cdf}")
    if bad:
        sys.exit(f"report: {bad} malformed lines in {sys.argv[1]}")


if __name__ == "__main__":
    main()
