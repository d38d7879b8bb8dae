#!/usr/bin/env python3
"""Interleaved A/B runs of `sifter bench` builds on a noisy host.

Runs each build's `sifter bench` in turn, round after round (so host slowdowns hit every build
alike), keeps each run's results.csv under OUT/<name>-<round>/, and prints, per build and
configuration, the ratio of one cache to another within each run (the only figure that means
anything on a shared machine), their mean, and the mean throughput and hit ratios. Then,
paired by round: each build's ratio over the base build's (the first --build, or --base), and
each build's own scaling (the numerator cache at each thread count over its fewest threads in
the same run), as geometric means over rounds with [2 standard errors].

    python3 benchsuite/tools/interleave.py --rounds 6 --out /tmp/ab \\
        --build old=/tmp/sifter-old --build new=target/release/sifter \\
        --num mobius --den quick_cache -- -c mobius,quick_cache -t 1,2 -s 0.01,0.1 -r 3 --duration 300ms

With --summarize-only, only reads OUT (runs made earlier).
"""
import argparse
import collections
import csv
import glob
import os
import statistics
import math
import subprocess
import sys


def entries(row):
    """The cache's size in entries where the CSV has it (else its `size` column, a fraction
    of the keys the stream touches)."""
    return row.get("capacity") or row["size"]


def run(builds, rounds, out, bench_args):
    for r in range(1, rounds + 1):
        for name, binary in builds:
            d = os.path.join(out, f"{name}-{r}")
            print(f"round {r}/{rounds}: {name}", file=sys.stderr, flush=True)
            subprocess.run(
                [binary, "bench", *bench_args, "-q", "--no-plots", "-o", d],
                check=True,
                stdout=subprocess.DEVNULL,
            )


def summarize(runs, num, den):
    res = collections.defaultdict(list)
    for (name, _), run in sorted(runs.items()):
        for k, (v, h) in run.items():
            d = run.get((den,) + k[1:])
            if k[0] == num and d and d[0] > 0:
                res[(name,) + k[1:]].append((v / d[0], v, h, d[1]))
    print(f"{'build':<10} {'mode':<8} {'size':<6} {'thr':>3}  {num} / {den} per round  "
          f"(mean)  {num} Mops/s  hit ratios")
    for k in sorted(res, key=lambda k: (k[1], float(k[2]), int(k[3]), k[0])):
        v = res[k]
        ratios = " ".join(f"{x[0]:.2f}" for x in v)
        print(f"{k[0]:<10} {k[1]:<8} {k[2]:<6} {k[3]:>3}  {ratios}  "
              f"({statistics.mean(x[0] for x in v):.3f})  "
              f"{statistics.mean(x[1] for x in v):.2f}  "
              f"{statistics.mean(x[2] for x in v):.4f} / {statistics.mean(x[3] for x in v):.4f}")


def load_runs(out):
    """{(build, round): {(cache, mode, size, threads): (mops, hit ratio)}}"""
    runs = {}
    for d in glob.glob(os.path.join(out, "*-*")):
        name, _, rnd = os.path.basename(d).rpartition("-")
        path = os.path.join(d, "results.csv")
        if not rnd.isdigit() or not os.path.exists(path):
            continue
        runs[(name, int(rnd))] = {
            (row["cache"], row["mode"], entries(row), row["threads"]):
                (float(row["mops_median"]), float(row["hit_ratio"] or 0))
            for row in csv.DictReader(open(path))
        }
    return runs


def geo(values):
    """Geometric mean [2 s.e.] of positive values, as text."""
    logs = [math.log(v) for v in values]
    g = statistics.mean(logs)
    if len(logs) < 2:
        return f"{math.exp(g):.3f} (1 round)"
    se = statistics.stdev(logs) / math.sqrt(len(logs))
    return f"{math.exp(g):.3f} [{math.exp(g - 2 * se):.3f}, {math.exp(g + 2 * se):.3f}]"


def paired(runs, num, den, base):
    names = sorted({n for n, _ in runs})
    if base is None:
        base = names[0] if names else None
    if base not in names:
        print(f"\nno runs of the base build {base!r} to pair against", file=sys.stderr)
        return
    configs = sorted({k[1:] for r in runs.values() for k in r if k[0] == num},
                     key=lambda c: (c[0], float(c[1]), int(c[2])))

    def ratio(run, c):
        n, d = run.get((num,) + c), run.get((den,) + c)
        return n[0] / d[0] if n and d and d[0] > 0 else None

    others = [n for n in names if n != base]
    if others:
        print(f"\npaired by round: ({num} / {den}) of each build over {base}'s, geomean [2 s.e.]")
        for c in configs:
            for n in others:
                v = []
                for (b, r), run in runs.items():
                    if b != n or (base, r) not in runs:
                        continue
                    x, y = ratio(run, c), ratio(runs[(base, r)], c)
                    if x and y:
                        v.append(x / y)
                if v:
                    print(f"  {c[0]:<8} {c[1]:<6} {c[2]:>3} thr  {n} / {base}: {geo(v)}")
    print(f"\nscaling: {num} at each thread count over its fewest threads, same run")
    for c in configs:
        lo = min((k for k in configs if k[:2] == c[:2]), key=lambda k: int(k[2]))
        if lo == c:
            continue
        for n in names:
            v = [run[(num,) + c][0] / run[(num,) + lo][0]
                 for (b, _), run in runs.items()
                 if b == n and (num,) + c in run and (num,) + lo in run
                 and run[(num,) + lo][0] > 0]
            if v:
                print(f"  {c[0]:<8} {c[1]:<6} {c[2]:>3} ÷ {lo[2]} thr  {n}: {geo(v)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="append", default=[], metavar="NAME=BINARY",
                    help="a sifter binary to run (repeatable; names must not contain '-')")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", required=True)
    ap.add_argument("--num", default="mobius", help="cache whose throughput is the numerator")
    ap.add_argument("--den", default="quick_cache", help="cache whose throughput is the denominator")
    ap.add_argument("--summarize-only", action="store_true")
    ap.add_argument("--base", help="build the others are paired against (default: the first "
                    "--build, or the first name in OUT with --summarize-only)")
    ap.add_argument("bench_args", nargs=argparse.REMAINDER,
                    help="after --: the arguments of `sifter bench` (both caches must be in -c)")
    a = ap.parse_args()
    bench_args = a.bench_args[1:] if a.bench_args[:1] == ["--"] else a.bench_args
    if not a.summarize_only:
        builds = []
        for b in a.build:
            name, sep, binary = b.partition("=")
            if not sep or not name or "-" in name or not os.path.exists(binary):
                ap.error(f"--build {b!r}: expected NAME=BINARY (an existing file, NAME without '-')")
            builds.append((name, binary))
        if not builds or not bench_args:
            ap.error("give at least one --build and the bench arguments after --")
        run(builds, a.rounds, a.out, bench_args)
        if a.base is None:
            a.base = builds[0][0]
    runs = load_runs(a.out)
    summarize(runs, a.num, a.den)
    paired(runs, a.num, a.den, a.base)


if __name__ == "__main__":
    main()
