#!/usr/bin/env python3
"""Merges the repetitions of several `sifter bench` results.json files of one configuration
(the same caches, thread counts and sizes) into one file, for `paired_ratios.py`.

Runs of two binaries alternated in one session (A, B, A, B, ...) give paired ratios per binary
that drift with the host alike; merging each binary's runs keeps every repetition's pairing
(the caches of one repetition ran together) and adds their count.

  merge_results.py OUT.json run1/results.json run2/results.json ...
"""
import json
import sys


def reports(d):
    return d["report"] if isinstance(d["report"], list) else [d["report"]]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, files = sys.argv[1], sys.argv[2:]
    base = json.load(open(files[0]))
    rows = {}
    for rep in reports(base):
        for r in rep["rows"]:
            rows[(r["size"], r["threads"], r["cache"])] = r
    for f in files[1:]:
        for rep in reports(json.load(open(f))):
            for r in rep["rows"]:
                k = (r["size"], r["threads"], r["cache"])
                if k not in rows:
                    sys.exit(f"{f}: (size {k[0]}, {k[1]} threads, {k[2]}) is not in {files[0]}")
                rows[k]["mops_runs"] += r["mops_runs"]
                # The host's transfer time per run (sifter bench since stop 87): kept run for
                # run beside mops_runs when both files have it, else dropped from the row.
                if "transfer_ns_runs" in rows[k] and "transfer_ns_runs" in r:
                    rows[k]["transfer_ns_runs"] += r["transfer_ns_runs"]
                else:
                    rows[k].pop("transfer_ns_runs", None)
    with open(out, "w") as o:
        json.dump(base, o)


if __name__ == "__main__":
    main()
