#!/usr/bin/python3
"""bench/report.py on a fixed results.tsv (tests/bench/results.tsv): every
goal of issue 14 is printed for lo and veth with its uroce figure, peer
figure, ratio, target and verdict, the CPU table has seconds per GB and per
million messages for both sides, and results.json says the same.  With
xdp figures added, the xdp path's goals take the veth's peers and its table
against udp (issue 15) shows each ratio and goal.  The latency table against
the UDP ping-pongs with a thread hop and with two datagrams a way has its
rows.  A peer measured again
after uroce's runs counts as the mean of its two figures.  The latency
distributions (issue 47): each uroce figure's typical, mean, p99 and p99.9
beside its peer's with their ratios, the distribution goals with their
verdicts, and the CDF plot drawn from the kept samples.  A file without figures
or with malformed lines fails loudly.  No root needed.

usage: test_report.py REPORT_PY RESULTS_TSV
"""
import json
import os
import re
import subprocess
import sys
import tempfile

report, tsv = sys.argv[1], sys.argv[2]
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what)


def run(path, outdir):
    return subprocess.run([sys.executable, report, path, outdir], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, MPLBACKEND="Agg"))


# (where, goal title starts with, uroce, peer, ratio, verdict); ratios from the
# fixture's figures worked out by hand.
GOALS = [
    ("lo", "latency: ib_send_lat", "5.00", "4.00", "1.25", "yes"),
    ("lo", "latency: ib_write_lat", "8.00", "4.00", "2.00", "no"),
    ("lo", "latency: ib_read_lat", "6.00", "4.00", "1.50", "yes"),
    ("lo", "bandwidth: ib_write_bw 1 MiB", "25.00", "20.00", "1.25", "yes"),
    ("lo", "bandwidth: ib_send_bw 1 MiB", "10.00", "20.00", "0.50", "no"),
    ("lo", "moonshot: ib_write_bw 1 MiB", "25.00", "40.00", "0.62", "no"),
    ("lo", "message rate: ib_send_bw 64 B", "1.50", "0.50", "3.00", "yes"),
    ("lo", "message rate: ib_write_bw 64 B", "0.25", "0.50", "0.50", "no"),
    ("lo", "scale: ib_write_bw 64 KiB -q 128", "6.00", "4.00", "1.50", "yes"),
    ("lo", "CPU: idle process", "0.05", "-", "-", "yes"),
    ("veth", "latency: ib_send_lat", "10.00", "8.00", "1.25", "yes"),
    ("veth", "latency: ib_write_lat", "16.00", "8.00", "2.00", "no"),
    ("veth", "latency: ib_read_lat", "-", "8.00", "-", "ERROR: Completion with error at client"),
    ("veth", "bandwidth: ib_write_bw 1 MiB", "25.00", "20.00", "1.25", "yes"),
    ("veth", "bandwidth: ib_send_bw 1 MiB", "10.00", "20.00", "0.50", "no"),
    ("veth", "moonshot: ib_write_bw 1 MiB", "25.00", "-", "-", "ERROR: udp_peer failed"),
    ("veth", "message rate: ib_send_bw 64 B", "1.50", "0.50", "3.00", "yes"),
    ("veth", "message rate: ib_write_bw 64 B", "0.25", "0.50", "0.50", "no"),
    ("veth", "scale: ib_write_bw 64 KiB -q 128", "6.00", "4.00", "1.50", "yes"),
    ("veth", "CPU: idle process", "3.00", "-", "-", "no"),
]
# (where, measurement, side, cpu s, start-up s, s/GB, s/Mmsg): per GB and per
# million messages without the start-up where bench/run.sh measured one.
CPU = [
    ("lo", "udp_mmsg", "server", "2.00", "-", "31.25", "2.00"),
    ("lo", "udp_mmsg", "client", "1.00", "-", "15.62", "1.00"),
    ("lo", "iperf3_tcp", "server", "2.00", "-", "0.40", "-"),
    ("lo", "iperf3_tcp", "client", "1.00", "-", "0.20", "-"),
    # a start-up that measured more than the run: no figure per GB
    ("lo", "ib_write_bw_1m", "server", "0.50", "0.60", "-", "-"),
    ("lo", "ib_write_bw_1m", "client", "1.50", "-", "1.50", "1500.00"),
    ("veth", "ib_write_bw_1m", "server", "0.50", "0.10", "0.40", "400.00"),
    ("veth", "ib_write_bw_1m", "client", "1.50", "0.25", "1.25", "1250.00"),
]

# (where, figure title starts with, uroce, peer, ratio)
BOUNDS = [
    ("lo", "ib_send_lat 2 B typical / UDP ping-pong", "5.00", "4.00", "1.25"),
    ("lo", "ib_send_lat 2 B typical / UDP one way of two", "5.00", "5.00", "1.00"),
    ("lo", "ib_write_lat 2 B typical / UDP one way of two", "8.00", "5.00", "1.60"),
    ("lo", "ib_write_lat 2 B typical / UDP one way with", "8.00", "6.00", "1.33"),
    ("lo", "ib_read_lat 2 B typical / UDP one way busy + one way with", "6.00", "10.00", "0.60"),
    ("lo", "ib_read_lat 2 B typical / UDP round trip, pong asleep", "6.00", "8.00", "0.75"),
    ("lo", "ib_send_lat -e 2 B typical / UDP one way via a thread", "-", "20.00", "-"),
    ("lo", "UCX tag_lat 8 B median / ib_send_lat 17 B", "-", "9.00", "-"),
    ("lo", "ib_send_lat 17 B typical / UCX over TCP", "9.00", "-", "-"),
    ("veth", "ib_send_lat 2 B typical / UDP ping-pong", "10.00", "8.00", "1.25"),
    ("veth", "ib_send_lat 2 B typical / UDP one way of two", "10.00", "9.00", "1.11"),
    ("veth", "ib_write_lat 2 B typical / UDP one way of two", "16.00", "9.00", "1.78"),
    ("veth", "ib_write_lat 2 B typical / UDP one way with", "16.00", "10.00", "1.60"),
    ("veth", "ib_read_lat 2 B typical / UDP one way busy + one way with", "-", "18.00", "-"),
    ("veth", "ib_read_lat 2 B typical / UDP round trip, pong asleep", "-", "-", "-"),
    ("veth", "ib_send_lat -e 2 B typical / UDP one way via a thread", "-", "-", "-"),
    ("veth", "UCX tag_lat 8 B median / ib_send_lat 17 B", "-", "-", "-"),
    ("veth", "ib_send_lat 17 B typical / UCX over TCP", "-", "-", "-"),
]

with tempfile.TemporaryDirectory() as d:
    p = run(tsv, d)
    print(p.stdout, p.stderr, sep="")
    check(p.returncode == 0, f"report.py exit {p.returncode}")
    out = p.stdout
    goals_part = out.split("== goals", 1)[-1].split("\n== ", 1)[0]
    bounds_part = out.split("== latency against", 1)[-1].split("\n== ", 1)[0]
    cpu_part = out.split("== CPU", 1)[-1]
    rows = [l for l in goals_part.splitlines() if re.match(r"(lo|veth) ", l)]
    check(len(rows) == len(GOALS), f"{len(rows)} goal rows, want {len(GOALS)}")
    for where, title, u, peer, ratio, met in GOALS:
        pat = (rf"^{where} +{re.escape(title)}.*? {re.escape(u)} +{re.escape(peer)} +"
               rf"{re.escape(ratio)} +[<>~]=?.*?  {re.escape(met)}$")
        check(any(re.match(pat, l) for l in rows), f"goal row {where} {title!r} {u} {peer} {ratio} {met}")
    brows = [l for l in bounds_part.splitlines() if re.match(r"(lo|veth) ", l)]
    check(len(brows) == len(BOUNDS), f"{len(brows)} bound rows, want {len(BOUNDS)}")
    for where, title, u, peer, ratio in BOUNDS:
        pat = rf"^{where} +{re.escape(title)}.*? {re.escape(u)} +{re.escape(peer)} +{re.escape(ratio)}$"
        check(any(re.match(pat, l) for l in brows), f"bound row {where} {title!r} {u} {peer} {ratio}")
    for where, name, side, c, start, gb, mm in CPU:
        pat = (rf"^{where} +{name} +{side} +{c} +{re.escape(start)} +{re.escape(gb)} +"
               rf"{re.escape(mm)}$")
        check(re.search(pat, cpu_part, re.M), f"cpu row {where} {name} {side} {c} {start} {gb} {mm}")
    try:
        j = json.load(open(os.path.join(d, "results.json")))
        check(len(j["goals"]) == len(GOALS), f"results.json has {len(j['goals'])} goals")
        check(sum(1 for g in j["goals"] if g["met"] is True) == 10, "results.json: 10 goals met")
        check(j["results"]["lo"]["udp_ping"]["oneway_us"] == 4.0, "results.json keeps the figures")
        check(len(j["cpu"]) == 12, f"results.json has {len(j['cpu'])} cpu rows, want 12")
    except (OSError, ValueError, KeyError) as e:
        check(False, f"results.json: {e}")

    # No figures at all, or malformed lines: a clear error, never empty tables.
    empty = os.path.join(d, "empty.tsv")
    open(empty, "w").close()
    p = run(empty, d)
    check(p.returncode != 0 and "no figures" in p.stderr, "an empty results.tsv fails with 'no figures'")
    bad = os.path.join(d, "bad.tsv")
    with open(bad, "w") as f:
        f.write(open(tsv).read())
        f.write("lo ib_send_lat lat_typical_us 5.0\n")
    p = run(bad, d)
    check(p.returncode != 0 and "bad.tsv:" in p.stderr and "lo    latency" in p.stdout,
          "a malformed line is named on stderr, the tables still print, exit non-zero")

# The xdp path (issue 15): its goals take the veth's peers, and a table
# sets it against udp on the same veth, with CPU per million messages.
XDP_LINES = """xdp	ib_send_lat	lat_typical_us	8.0
xdp	ib_write_lat	lat_typical_us	20.0
xdp	ib_read_lat	lat_typical_us	6.0
xdp	ib_send_bw_64b	mpps	1.5
xdp	ib_send_bw_64b	cpu_s_server	1.0
xdp	ib_send_bw_64b	cpu_s_client	2.0
xdp	ib_send_bw_64b	msgs	1000000
veth	ib_send_bw_64b	cpu_s_server	2.0
veth	ib_send_bw_64b	cpu_s_client	2.0
veth	ib_send_bw_64b	msgs	1000000
xdp	ib_write_bw_64b	mpps	0.5
xdp	xdp_raw_64b	mpps	2.0
xdp	xdp_raw_64b	received	199000
xdp	xdp_raw_64b	msgs	200000
xdp	xdp_transport_64b	error	xdp_probe failed: no socket
"""
XDP_ROWS = [
    ("ib_send_lat 2 B typical, us", "8.000", "10.000", "0.80"),
    ("ib_write_lat 2 B typical, us", "20.000", "16.000", "1.25"),
    ("ib_read_lat 2 B typical, us", "6.000", "-", "-"),
    ("ib_send_bw 64 B, Mpps", "1.500", "1.500", "1.00"),
    ("  CPU s per million messages, server", "1.000", "2.000", "0.50"),
    ("  CPU s per million messages, client", "2.000", "2.000", "1.00"),
    ("ib_write_bw 64 B, Mpps", "0.500", "0.250", "2.00"),
]
with tempfile.TemporaryDirectory() as d:
    x = os.path.join(d, "xdp.tsv")
    with open(x, "w") as f:
        f.write(open(tsv).read() + XDP_LINES)
    p = run(x, d)
    print(p.stdout, p.stderr, sep="")
    check(p.returncode == 0, f"report.py with xdp exit {p.returncode}")
    out = p.stdout
    check(re.search(r"^xdp +latency: ib_send_lat .*? 8\.00 +8\.00 +1\.00 .*  yes$", out, re.M),
          "xdp goal row: ib_send_lat against the veth's UDP ping-pong")
    part = out.split("== xdp against udp", 1)[-1].split("== CPU", 1)[0]
    for title, xv, uv, ratio in XDP_ROWS:
        pat = rf"^{re.escape(title)} +{re.escape(xv)} +{re.escape(uv)} +{re.escape(ratio)}$"
        check(re.search(pat, part, re.M), f"xdp row {title!r} {xv} {uv} {ratio}")
    check(re.search(r"^goal: 64 B message rate over xdp >= 1.2 Mpps +1\.500  yes$", part, re.M),
          "xdp rate goal met at 1.5 Mpps")
    check(re.search(r"^goal: latency over xdp no worse than udp.* 1\.250  no$", part, re.M),
          "xdp latency goal not met (write_lat 1.25)")
    check(re.search(r"^goal: 64 B rate over xdp / a bare AF_XDP loop >= 1 +2\.000  no  ratio 0\.75$",
                    part, re.M),
          "xdp rate against the bare AF_XDP loop: 1.5 of 2.0 Mpps, not met")
    check(re.search(r"^beneath: bare AF_XDP loop +2\.000 Mpps sent, 199000 of 200000 received$", part, re.M),
          "the bare loop's figure and how many of its packets arrived")
    check(re.search(r"^beneath: xdp transport alone +ERROR: xdp_probe failed: no socket$", part, re.M),
          "a failed peer is named as such")

# A peer measured again after uroce's runs: the goals take the mean of the
# two figures, and both are printed.
with tempfile.TemporaryDirectory() as d:
    x = os.path.join(d, "after.tsv")
    with open(x, "w") as f:
        f.write(open(tsv).read() + "lo\tiperf3_tcp_after\tgbit_s\t30.0\n")
    p = run(x, d)
    check(p.returncode == 0, f"report.py with iperf3_tcp_after exit {p.returncode}")
    check(re.search(r"^lo +bandwidth: ib_write_bw 1 MiB / iperf3 TCP +25\.00 +25\.00 +1\.00 ", p.stdout, re.M),
          "lo write_bw 1 MiB against the mean of iperf3 before (20) and after (30)")
    check(re.search(r"^veth +bandwidth: ib_write_bw 1 MiB / iperf3 TCP +25\.00 +20\.00 +1\.25 ", p.stdout, re.M),
          "veth, measured once, keeps its one figure")
    check(re.search(r"^lo +iperf3_tcp measured before and after uroce's runs: 20\.00 and 30\.00 Gbit/s",
                    p.stdout, re.M), "the drift line names both figures")


# Issue 47: distributions.  lo's udp_ping (4.0 typical in the fixture) gains
# a mean, p99 and p99.9; ib_send_lat (5.0) its others; the CM and channel
# variants, sockets and UCX come with their peers.
DIST_LINES = """lo	udp_ping	oneway_us_mean	4.5
lo	udp_ping	oneway_us_p999	20.0
lo	ib_send_lat	lat_avg_us	6.0
lo	ib_send_lat	lat_p99_us	30.0
lo	ib_send_lat	lat_p999_us	90.0
lo	ib_send_lat_cm	lat_typical_us	5.0
lo	ib_send_lat_cm	lat_avg_us	9.0
lo	ib_send_lat_cm	lat_p99_us	20.0
lo	ib_send_lat_cm	lat_p999_us	300.0
lo	udp_block	oneway_us	10.0
lo	udp_block	oneway_us_mean	12.0
lo	udp_block	oneway_us_p99	30.0
lo	udp_block	oneway_us_p999	60.0
lo	ib_send_lat_ev	error	Couldn't connect to 127.0.0.1
lo	tcp_ping	oneway_us	10.0
lo	tcp_ping	oneway_us_mean	11.0
lo	rs_ping	oneway_us	30.0
lo	rs_ping	oneway_us_mean	33.0
lo	tcp_stream	gbit_s	20.0
lo	rs_stream	gbit_s	12.0
lo	rs_stream_tuned	gbit_s	8.0
lo	ucx_tcp_tag_lat	lat_us	8.0
lo	ucx_rc_tag_lat	lat_us	10.0
lo	ucx_tcp_tag_bw	gbit_s	4.0
lo	ucx_rc_tag_bw	gbit_s	2.0
"""
# (figure title starts with, side, typical, mean, p99, p99.9)
DIST_ROWS = [
    ("ib_send_lat, QPs by hand", "uroce", "5.00", "6.00", "30.00", "90.00"),
    ("", "peer", "4.00", "4.50", "8.00", "20.00"),
    ("", "ratio", "1.25", "1.33", "3.75", "4.50"),
    ("ib_send_lat -e", "peer", "10.00", "12.00", "30.00", "60.00"),
    ("ib_send_lat -R", "ratio", "1.25", "2.00", "2.50", "15.00"),
    ("ib_read_lat", "peer", "8.00", "9.00", "16.00", "40.00"),
    ("rsockets ping-pong", "ratio", "3.00", "3.00", "-", "-"),
]
# (where, goal starts with, uroce, peer, ratio, verdict)
DIST_GOALS = [
    ("polling, by hand: mean", "6.00", "4.50", "1.33", "yes"),
    ("polling, by hand: p99 ", "30.00", "8.00", "3.75", "no"),
    ("polling, by hand: p99.9", "90.00", "-", "90.00", "yes"),
    ("polling, rdma CM: p99.9", "300.00", "-", "300.00", "no"),
    ("channel: mean", "-", "12.00", "-", "ERROR: Couldn't connect to 127.0.0.1"),
    ("ib_read_lat typical / UDP round trip", "6.00", "8.00", "0.75", "yes"),
    ("sockets: rsockets ping-pong mean", "33.00", "11.00", "3.00", "no"),
    ("sockets: rsockets 16 KiB stream", "12.00", "20.00", "0.60", "yes"),
    ("sockets: tuned rsockets 16 KiB stream", "8.00", "20.00", "0.40", "no"),
    ("UCX: tag_lat", "10.00", "8.00", "1.25", "no"),
    ("UCX: tag_bw", "2.00", "4.00", "0.50", "no"),
]
with tempfile.TemporaryDirectory() as d:
    x = os.path.join(d, "dist.tsv")
    with open(x, "w") as f:
        f.write(open(tsv).read() + DIST_LINES)
    os.mkdir(os.path.join(d, "samples"))
    for name, xs in (("ib_send_lat", (5, 5, 6, 90)), ("udp_ping", (4, 4, 4.5, 20))):
        with open(os.path.join(d, "samples", f"lo.{name}.txt"), "w") as f:
            f.write("".join(f"{v}\n" for v in xs))
    p = run(x, d)
    print(p.stdout, p.stderr, sep="")
    check(p.returncode == 0, f"report.py with distributions exit {p.returncode}")
    part = p.stdout.split("== latency distributions", 1)[-1].split("\n== ", 1)[0].splitlines()
    block = []
    for title, side, *vals in DIST_ROWS:
        # Each figure is three lines (uroce, peer, ratio); its title is on the first.
        if title:
            at = [i for i, l in enumerate(part) if re.match(rf"^lo +{re.escape(title)}", l)]
            block = part[at[0]:at[0] + 3] if at else []
        pat = rf" {side} +" + " +".join(re.escape(v) for v in vals) + r"( |$)"
        check(any(re.search(pat, l) for l in block), f"distribution row {title or 'same'!r} {side} {vals}")
    check(not any(re.match(r"^veth +ib_send_lat -R", l) for l in part),
          "a figure not measured on a path (veth -R) has no rows")
    gpart = p.stdout.split("== distribution goals", 1)[-1].split("\n== ", 1)[0]
    for title, u, peer, ratio, met in DIST_GOALS:
        pat = (rf"^lo +{re.escape(title)}.*? {re.escape(u)} +{re.escape(peer)} +{re.escape(ratio)} +"
               rf"[<>]= [0-9.]+  {re.escape(met)}$")
        check(re.search(pat, gpart, re.M), f"distribution goal {title!r} {u} {peer} {ratio} {met}")
    check("latency_cdf.png" in p.stdout and os.path.getsize(os.path.join(d, "latency_cdf.png")) > 0,
          "the CDF plot is written from the samples")
    j = json.load(open(os.path.join(d, "results.json")))
    check(len(j["distribution_goals"]) == 18, f"results.json: {len(j['distribution_goals'])} distribution goals, want 18 (lo 14, veth 4)")

print("FAILED:" if fails else "ok", len(fails), "failures")
sys.exit(1 if fails else 0)
