#!/usr/bin/env python3
"""Median Mops/s per cache, thread count and capacity, for each binary's directory of
`layouts.sh` results (DIR/<binary>/r*/results.json): which cache's figure moves with the
layout. Usage: python3 layouts_mops.py DIR"""
import glob
import json
import statistics
import sys

root = sys.argv[1]
for d in sorted(glob.glob(f"{root}/*/")):
    acc = {}
    for f in glob.glob(f"{d}r*/results.json"):
        for r in json.load(open(f))["report"]["rows"]:
            acc.setdefault((r["cache"], r["threads"], r["capacity"]), []).append(r["mops"])
    cells = [f"{c}@{t}/{cap // 1000}k {statistics.median(v):6.2f}" for (c, t, cap), v in sorted(acc.items())]
    print(d.rstrip("/").split("/")[-1].ljust(14), " | ".join(cells))
