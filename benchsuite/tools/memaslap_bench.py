#!/usr/bin/env python3
"""`sifter serve` against stock memcached under memaslap (`memcaslap`), throughput and latency.

The design note's workload (90 % get / 10 % set, keys 16-32 bytes, 100-byte values, ASCII,
2 client threads), 16 and 64 connections, both servers `-t 2 -m 1024`, a fresh server per run,
alternating in the same time window, stopped by PID. memaslap reports latency as a log2
histogram (`Log2 Dist`: counts per [2^k, 2^(k+1)) µs); the percentiles here are read from it
by interpolating log-linearly inside the bucket that holds them, so they are estimates within a
factor-2 bucket, both servers measured the same way. Writes <out>/memaslap.csv and prints
medians. Usage:

  memaslap_bench.py --sifter target/release/sifter [--rounds 3] [--secs 8] [--out DIR]
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_bench import log, start, stop  # noqa: E402

CONFIG = """key
16 32 1
value
100 100 1
cmd
0 0.1
1 0.9
"""


def parse(out):
    """TPS and the Total Statistics log2 histogram {bucket_exponent: count}."""
    m = re.search(r"Run time: [\d.]+s Ops: (\d+) TPS: (\d+)", out)
    if not m:
        raise RuntimeError(f"no summary line in memaslap output:\n{out[-2000:]}")
    tps = int(m.group(2))
    total = out.split("Total Statistics (", 1)
    if len(total) < 2:
        raise RuntimeError("no Total Statistics block (was -S given?)")
    hist = {}
    block = total[1].split("Log2 Dist:", 1)[1]
    for line in block.splitlines()[1:]:
        m = re.match(r"\s+(\d+):\s+([\d\s]+)$", line)
        if not m:
            break
        base = int(m.group(1))
        for i, c in enumerate(m.group(2).split()):
            hist[base + i] = int(c)
    if not hist:
        raise RuntimeError("empty latency histogram")
    return tps, hist


def percentile(hist, q):
    """The q-quantile in µs, log-linear inside its [2^k, 2^(k+1)) bucket."""
    n = sum(hist.values())
    want = q * n
    seen = 0
    for k in sorted(hist):
        c = hist[k]
        if c and seen + c >= want:
            frac = (want - seen) / c
            return 2 ** (k + frac)
        seen += c
    return 2 ** (max(hist) + 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sifter", default="target/release/sifter")
    ap.add_argument("--memcached", default=shutil.which("memcached") or "memcached")
    ap.add_argument("--memaslap", default=shutil.which("memcaslap") or "memcaslap")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=int, default=8)
    ap.add_argument("--out", default="bench-memaslap")
    args = ap.parse_args()
    for tool in (args.memaslap, args.memcached):
        if not shutil.which(tool) and not os.path.exists(tool):
            sys.exit(f"{tool} not found (apt-get install memcached libmemcached-tools)")
    os.makedirs(args.out, exist_ok=True)
    cnf = tempfile.NamedTemporaryFile("w", suffix=".cnf", delete=False)
    cnf.write(CONFIG)
    cnf.close()
    rows = []
    for rnd in range(1, args.rounds + 1):
        for conns in (16, 64):
            for kind in ("memcached", "sifter"):
                proc, port = start(kind, args, 1024)
                try:
                    r = subprocess.run(
                        [args.memaslap, "-s", f"127.0.0.1:{port}", "-F", cnf.name, "-T", "2",
                         "-c", str(conns), "-t", f"{args.secs}s", "-S", f"{args.secs}s"],
                        capture_output=True, text=True, timeout=args.secs * 10 + 60)
                finally:
                    stop(proc)
                tps, hist = parse(r.stdout)
                row = {"connections": conns, "server": kind, "round": rnd, "ops_per_s": tps,
                       "p50_us": round(percentile(hist, 0.5)),
                       "p99_us": round(percentile(hist, 0.99)),
                       "p999_us": round(percentile(hist, 0.999))}
                rows.append(row)
                log(f"{conns:>3} conns {kind:10} round {rnd}: {tps:>8} ops/s "
                    f"p50 ~{row['p50_us']} µs p99 ~{row['p99_us']} µs")
    os.unlink(cnf.name)
    path = os.path.join(args.out, "memaslap.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{'conns':>5} {'server':10} {'ops/s':>9} {'p50 µs':>7} {'p99 µs':>7} {'p99.9 µs':>8}")
    for conns in (16, 64):
        for kind in ("memcached", "sifter"):
            rs = [r for r in rows if r["connections"] == conns and r["server"] == kind]
            med = lambda k: sorted(r[k] for r in rs)[len(rs) // 2]  # noqa: E731
            print(f"{conns:>5} {kind:10} {med('ops_per_s'):>9} {med('p50_us'):>7} "
                  f"{med('p99_us'):>7} {med('p999_us'):>8}")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
