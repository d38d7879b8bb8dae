#!/usr/bin/env python3
"""A sweep over many traces fanned out over a Dask cluster, one `sifter.simulate` call per
task (the SIEVE paper ran 1,559 traces; a real cluster is a `Client("scheduler:8786")` away —
nothing here is specific to one machine). Run locally with two worker processes:

  cluster_sweep.py [TRACE_OR_SPEC ...] [--workers 2] [--check]

--check also runs the sweep in this process and requires identical rows. With no traces, eight
synthetic Zipf workloads of different skews are swept.
"""
import argparse

import pandas as pd
from dask.distributed import Client, LocalCluster

import sifter

POLICIES = "fifo,lru,sieve,s3fifo"
SIZES = "0.01,0.1"


def one(trace):
    # Each task is one simulate call on one worker, single-threaded (the cluster parallelises).
    return sifter.simulate(trace, POLICIES, SIZES, threads=1, progress=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="*")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    traces = a.traces or [f"zipf:alpha={0.6 + 0.1 * i:.1f},n=20000,requests=200000,seed={i}" for i in range(8)]
    with LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        futures = client.map(one, traces)
        df = pd.concat(client.gather(futures), ignore_index=True)
    print(df.pivot_table(index=["trace", "size"], columns="policy", values="miss_ratio").round(4).to_string())
    if a.check:
        local = pd.concat([one(t) for t in traces], ignore_index=True)
        cols = ["trace", "spec", "size", "capacity", "requests", "misses"]
        if not df[cols].equals(local[cols]):
            raise SystemExit("the cluster's rows differ from the local sweep's")
        print(f"check: {len(df)} rows from {a.workers} workers equal the local sweep")


if __name__ == "__main__":
    main()
