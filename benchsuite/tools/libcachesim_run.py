#!/usr/bin/env python3
"""libCacheSim (its Python bindings, `libcachesim` 0.3.5) on one oracleGeneral trace, end to
end and timed the way a user runs it: open the reader, build the cache at a fraction of the
working set, `process_trace`. Prints one CSV row per run: policy,size,miss_ratio,seconds.

    libcachesim_run.py TRACE POLICIES SIZES [--jobs N]

POLICIES and SIZES are comma-separated (fifo, lru, sieve, s3fifo, clock, arc; sizes are
fractions of the working set, which costs libCacheSim a pass over the trace, or object
counts, which do not).
With --jobs N the policy x size runs go to N worker processes (libCacheSim's sweep on all
cores); the total wall time is printed last as `total,,,SECONDS`.
"""
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import libcachesim as lcs

CACHES = {
    "fifo": lcs.FIFO,
    "lru": lcs.LRU,
    "sieve": lcs.Sieve,
    "s3fifo": lcs.S3FIFO,
    "clock": lcs.Clock,
    "arc": lcs.ARC,
}


def run(args):
    path, policy, size = args
    t0 = time.perf_counter()
    params = lcs.ReaderInitParam(ignore_obj_size=True)
    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE, params)
    wss = reader.get_working_set_size()[0] if size < 1 else None
    cache = CACHES[policy](int(size) if size >= 1 else int(wss * size))
    miss_ratio, _ = cache.process_trace(reader)
    return policy, size, miss_ratio, time.perf_counter() - t0


def main():
    path, policies, sizes = sys.argv[1], sys.argv[2].split(","), [float(s) for s in sys.argv[3].split(",")]
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else 1
    work = [(path, p, s) for p in policies for s in sizes]
    t0 = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            rows = list(ex.map(run, work))
    else:
        rows = [run(w) for w in work]
    total = time.perf_counter() - t0
    for p, s, mr, secs in rows:
        print(f"{p},{s},{mr:.6f},{secs:.3f}")
    print(f"total,,,{total:.3f}")


if __name__ == "__main__":
    main()
