"""bench/dist.py: the latency distributions of a bench run (issue 47).

Imported by bench/report.py.  One job: put typical, mean, p99 and p99.9 of
each uroce latency beside its peer's from the same run and path, judge the
issue's distribution goals, and plot the distributions (CDFs) from the
samples bench/run.sh kept (OUTDIR/samples/WHERE.NAME.txt, one-way µs).
"""
import os
import sys

# Each figure's four statistics, by the key bench/run.sh records them
# under: perftest's (lat_*) and the socket peers' (oneway_*).
PT_KEYS = ("lat_typical_us", "lat_avg_us", "lat_p99_us", "lat_p999_us")
PEER_KEYS = ("oneway_us", "oneway_us_mean", "oneway_us_p99", "oneway_us_p999")
UCX_KEYS = ("lat_us", "lat_avg_us", None, None)

# (title, uroce name, its keys, peer name, its keys, peer factor): the
# factor turns the peer's one-way time into what the uroce figure measures
# (ib_read_lat reports a whole round trip: perftest halves only SEND and
# WRITE).
PAIRS = [
    ("ib_send_lat, QPs by hand / UDP busy-poll", "ib_send_lat", PT_KEYS, "udp_ping", PEER_KEYS, 1),
    ("ib_send_lat -R (rdma CM) / UDP busy-poll", "ib_send_lat_cm", PT_KEYS, "udp_ping", PEER_KEYS, 1),
    ("ib_send_lat -e (channel) / UDP blocking", "ib_send_lat_ev", PT_KEYS, "udp_block", PEER_KEYS, 1),
    ("ib_write_lat / UDP busy-poll", "ib_write_lat", PT_KEYS, "udp_ping", PEER_KEYS, 1),
    ("ib_read_lat / UDP round trip", "ib_read_lat", PT_KEYS, "udp_ping", PEER_KEYS, 2),
    ("rsockets ping-pong / kernel TCP", "rs_ping", PEER_KEYS, "tcp_ping", PEER_KEYS, 1),
    ("UCX tag_lat rc_verbs / UCX over TCP", "ucx_rc_tag_lat", UCX_KEYS, "ucx_tcp_tag_lat", UCX_KEYS, 1),
    # The floors of two of them (bench/udp_peer.c, docs/performance.md):
    # the channel as libibverbs reads it, through a thread and a pipe, and
    # a round trip whose responder sleeps.  After the goals' pairs, which
    # GOALS find first.
    ("ib_send_lat -e / UDP thread and pipe", "ib_send_lat_ev", PT_KEYS, "udp_chan", PEER_KEYS, 1),
    ("ib_read_lat / UDP round trip, pong asleep", "ib_read_lat", PT_KEYS, "udp_sleeper", PEER_KEYS, 2),
]
STATS = ("typical", "mean", "p99", "p99.9")

# Issue 47's goals: (title, pair title prefix or None, statistic index,
# uroce name/key and peer name/key for the others, how, target).  "abs":
# the uroce figure itself, in µs, at most target.
GOALS = [
    ("polling, by hand: mean / UDP busy-poll mean", "ib_send_lat,", 1, "le", 1.5),
    ("polling, by hand: p99 / UDP busy-poll p99", "ib_send_lat,", 2, "le", 3.0),
    ("polling, by hand: p99.9, us", "ib_send_lat,", 3, "abs", 100.0),
    ("polling, rdma CM: mean / UDP busy-poll mean", "ib_send_lat -R", 1, "le", 1.5),
    ("polling, rdma CM: p99 / UDP busy-poll p99", "ib_send_lat -R", 2, "le", 3.0),
    ("polling, rdma CM: p99.9, us", "ib_send_lat -R", 3, "abs", 100.0),
    ("channel: mean / UDP blocking mean", "ib_send_lat -e", 1, "le", 1.5),
    ("channel: p99 / UDP blocking p99", "ib_send_lat -e", 2, "le", 3.0),
    ("ib_read_lat typical / UDP round trip", "ib_read_lat", 0, "le", 1.5),
    ("sockets: rsockets ping-pong mean / TCP mean", "rsockets", 1, "le", 2.0),
    ("UCX: tag_lat 8 B median / UCX over TCP", "UCX tag_lat", 0, "le", 1.0),
]
# Rates: (title, uroce name, peer name, key, target), ratio at least target.
RATE_GOALS = [
    ("sockets: rsockets 16 KiB stream / TCP", "rs_stream", "tcp_stream", "gbit_s", 0.5),
    # rsockets' own settings raised (1 MiB buffers, 1 ms polling): what
    # rsockets' defaults leave of the stream goal (not the goal itself).
    ("sockets: tuned rsockets 16 KiB stream / TCP", "rs_stream_tuned", "tcp_stream", "gbit_s", 0.5),
    ("UCX: tag_bw 1 MiB rc_verbs / UCX over TCP", "ucx_rc_tag_bw", "ucx_tcp_tag_bw", "gbit_s", 1.0),
]

# The CDF plot's curves, uroce's solid, the peers' dashed: (label, name).
CURVES = [("ib_send_lat", "ib_send_lat"), ("ib_send_lat -R", "ib_send_lat_cm"),
          ("ib_send_lat -e", "ib_send_lat_ev"), ("ib_write_lat", "ib_write_lat"),
          ("rsockets ping-pong", "rs_ping"), ("UDP busy-poll", "udp_ping"),
          ("UDP blocking", "udp_block"), ("UDP via a thread and a pipe", "udp_chan"),
          ("kernel TCP ping-pong", "tcp_ping")]
PEER_CURVES = {"udp_ping", "udp_block", "udp_chan", "tcp_ping"}


def _fig(res, where, name, key):
    v = res.get(where, {}).get(name, {}).get(key) if key else None
    return v if isinstance(v, float) else None


def _err(res, where, name):
    e = res.get(where, {}).get(name, {}).get("error")
    return e if isinstance(e, str) else None


def table(res, peers_of):
    """One row per path and pair: the four statistics of each side."""
    rows = []
    for where in res:
        pw = peers_of.get(where, where)
        for title, un, uks, pn, pks, factor in PAIRS:
            u = [_fig(res, where, un, k) for k in uks]
            p = [_fig(res, pw, pn, k) for k in pks]
            p = [v * factor if v is not None else None for v in p]
            if all(v is None for v in u) and not _err(res, where, un):
                continue  # not measured here
            rows.append(dict(where=where, figure=title, uroce=u, peer=p,
                             ratio=[a / b if a is not None and b else None for a, b in zip(u, p)],
                             error=_err(res, where, un) or _err(res, pw, pn)))
    return rows


def goals(res, rows, peers_of):
    out = []
    for where in res:
        mine = [r for r in rows if r["where"] == where]
        for title, prefix, i, how, target in GOALS:
            r = next((r for r in mine if r["figure"].startswith(prefix)), None)
            if r is None:
                continue
            u, p = r["uroce"][i], r["peer"][i]
            ratio = u if how == "abs" else r["ratio"][i]
            met = None if ratio is None else ratio <= target
            out.append(dict(where=where, goal=title, uroce=u, peer=None if how == "abs" else p,
                            ratio=ratio, target="<= %g" % target, met=met, error=r["error"]))
        pw = peers_of.get(where, where)
        for title, un, pn, key, target in RATE_GOALS:
            u, p = _fig(res, where, un, key), _fig(res, pw, pn, key)
            err = _err(res, where, un) or _err(res, pw, pn)
            if u is None and p is None and not err:
                continue
            ratio = u / p if u is not None and p else None
            out.append(dict(where=where, goal=title, uroce=u, peer=p, ratio=ratio,
                            target=">= %g" % target, met=None if ratio is None else ratio >= target,
                            error=err))
    return out


def _f(v):
    return "-" if v is None else "%.2f" % v


def print_table(rows, out=sys.stdout):
    if not rows:
        return
    print("\n== latency distributions, one way in us (ratio = uroce / peer, same run and path)",
          file=out)
    print(f"{'where':5} {'figure':42} {'side':5} " + " ".join(f"{s:>8}" for s in STATS), file=out)
    for r in rows:
        tail = "  ERROR: " + r["error"] if r["error"] else ""
        for side in ("uroce", "peer", "ratio"):
            label = r["figure"] if side == "uroce" else ""
            print(f"{r['where'] if side == 'uroce' else '':5} {label:42} {side:5} " +
                  " ".join(f"{_f(v):>8}" for v in r[side]) + (tail if side == "uroce" else ""),
                  file=out)


def print_goals(g, out=sys.stdout):
    if not g:
        return
    print("\n== distribution goals (issue 47)", file=out)
    print(f"{'where':5} {'goal':48} {'uroce':>9} {'peer':>9} {'ratio':>8} {'target':>8}  met",
          file=out)
    for r in g:
        met = "ERROR: " + r["error"] if r["error"] else {None: "-", True: "yes", False: "no"}[r["met"]]
        print(f"{r['where']:5} {r['goal']:48} {_f(r['uroce']):>9} {_f(r['peer']):>9} "
              f"{_f(r['ratio']):>8} {r['target']:>8}  {met}", file=out)


def samples(outdir, where, name):
    path = os.path.join(outdir, "samples", f"{where}.{name}.txt")
    try:
        with open(path) as f:
            return sorted(float(x) for x in f if x.strip())
    except (OSError, ValueError):
        return None


def plot_cdf(res, outdir, path):
    """The CDFs of every kept latency, one panel per path; False if there
    is nothing to plot or no matplotlib."""
    curves = {w: [(lbl, n, samples(outdir, w, n)) for lbl, n in CURVES] for w in res}
    curves = {w: [c for c in cs if c[2]] for w, cs in curves.items()}
    curves = {w: cs for w, cs in curves.items() if cs}
    if not curves:
        return False
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: no matplotlib (python3-matplotlib): no CDF plot", file=sys.stderr)
        return False
    fig, axes = plt.subplots(len(curves), 1, figsize=(10, 4.5 * len(curves)), squeeze=False)
    for ax, (where, cs) in zip(axes[:, 0], curves.items()):
        for lbl, name, xs in cs:
            ys = [(i + 1) / len(xs) for i in range(len(xs))]
            ax.plot(xs, ys, "--" if name in PEER_CURVES else "-", label=lbl, linewidth=1.2)
        ax.set_xscale("log")
        ax.set_xlabel("one-way latency, µs (log)")
        ax.set_ylabel("fraction of messages")
        ax.set_title(f"{where}: latency distributions (peers dashed)", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return True
