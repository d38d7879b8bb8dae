#!/usr/bin/env python3
"""Instructions and simulated cache misses per query of `sifter bench` caches, under callgrind.

Where hardware counters are unavailable (this VM has none for `perf stat`), callgrind counts
instructions exactly and simulates the caches (`--cache-sim=yes`: the first-level data cache
and the last level, `--LL` sized like this machine's L3). For each cache this runs
`sifter bench -c CACHE -t 1 ...` once under callgrind and reports, per call of the bench
adapter's `get` and `insert` (a read-through miss: the insert includes the eviction), the
inclusive instructions (Ir), first-level data misses (D1mr + D1mw) and last-level misses
(DLmr + DLmw). The warm-up and the sequence generation run under callgrind too but are not in
those functions. Needs valgrind (apt-get install valgrind). Usage:

  callgrind_percall.py --sifter target/release/sifter -c multistep,lru,clock \
      [--bench-args "-w zipf:alpha=1.0,keys=10000000 -s 0.9 --sequence 8000000 --requests 1000000"]
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

FUNCS = {"get": "BenchCache>::get", "insert": "BenchCache>::insert"}


def parse_tree(path):
    """({function: {event: inclusive count}}, {function: calls}) from callgrind_annotate's
    calling tree: `*` lines carry a function's inclusive counts, `>` lines its calls."""
    out = subprocess.run(["callgrind_annotate", "--tree=calling", "--inclusive=yes",
                          "--threshold=100", path], capture_output=True, text=True, check=True)
    events = None
    incl, calls = {}, {}
    for line in out.stdout.splitlines():
        if line.startswith("Events shown:"):
            events = line.split(":", 1)[1].split()
            continue
        m = re.match(r"^(.*?)\s([*>])\s+(\S.*)$", line)
        if not m or events is None:
            continue
        nums = re.sub(r"\([^)]*\)", " ", m.group(1)).split()
        if len(nums) != len(events) or not all(re.fullmatch(r"[\d,]+|\.", n) for n in nums):
            continue
        vals = dict(zip(events, (0 if n == "." else int(n.replace(",", "")) for n in nums)))
        name = re.sub(r" \[[^\]]*\]$", "", m.group(3))
        if m.group(2) == "*":
            incl[name] = vals
        else:
            c = re.match(r"(.*) \(([\d,]+)x\)$", name)
            if c:
                calls[c.group(1)] = calls.get(c.group(1), 0) + int(c.group(2).replace(",", ""))
    return incl, calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sifter", default="target/release/sifter")
    ap.add_argument("-c", "--caches", required=True)
    ap.add_argument("--bench-args", default="-s 0.1 --sequence 2000000 --requests 2000000")
    ap.add_argument("--LL", default="33554432,16,64",
                    help="simulated last-level cache: size,associativity,line (this VM's L3 is "
                         "32 MiB per lscpu, but its cpuid reports 320 MB, which valgrind "
                         "would otherwise simulate)")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("valgrind not found (apt-get install valgrind)")
    print(f"{'cache':12} {'op':7} {'calls':>10} {'Ir/call':>8} {'D1 miss/call':>12} "
          f"{'LL miss/call':>12}")
    for cache in args.caches.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "cg.out")
            cmd = ["valgrind", "--tool=callgrind", "--cache-sim=yes", f"--LL={args.LL}",
                   f"--callgrind-out-file={out}", args.sifter, "bench", "-c", cache, "-t", "1",
                   "-r", "1", "--sample-every", "0", "-q", "--no-plots", "-o",
                   os.path.join(tmp, "bench")] + shlex.split(args.bench_args)
            print(f"# {' '.join(cmd)}", file=sys.stderr, flush=True)
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            incl, calls = parse_tree(out)
            for op, pat in FUNCS.items():
                # The adapter's function, wherever its first line was inlined from (sifter's
                # own caches inline theirs from cache.rs): the entry with the most calls.
                cands = [f for f in calls if pat in f and f in incl]
                name = max(cands, key=lambda f: calls[f], default=None)
                n = calls.get(name, 0) if name else 0
                if not name or not n or name not in incl:
                    print(f"{cache:12} {op:7} {'-':>10}")
                    continue
                e = incl[name]
                print(f"{cache:12} {op:7} {n:>10} {e['Ir'] / n:>8.1f} "
                      f"{(e['D1mr'] + e['D1mw']) / n:>12.2f} {(e['DLmr'] + e['DLmw']) / n:>12.3f}",
                      flush=True)


if __name__ == "__main__":
    main()
