"""Per round: Mobius ÷ quick_cache at each thread count, and Mobius at 8 / 16 threads ÷ Mobius
at 2 (issue 11's thread targets), from round*/results.csv. Usage: python3 table.py"""
import csv
import glob

for path in sorted(glob.glob("round*/results.csv")):
    rows = {(r["cache"], r["size"], int(r["threads"])): float(r["mops_median"])
            for r in csv.DictReader(open(path))}
    print(path.split("/")[0])
    for size in ("0.01", "0.1"):
        m = {t: rows[("mobius", size, t)] for t in (1, 2, 8, 16)}
        q = {t: rows[("quick_cache", size, t)] for t in (1, 2, 8, 16)}
        vs_qc = " ".join(f"{t}:{m[t] / q[t]:.2f}" for t in (1, 2, 8, 16))
        vs_2 = " ".join(f"{t}:{m[t] / m[2]:.2f}" for t in (8, 16))
        qc_2 = " ".join(f"{t}:{q[t] / q[2]:.2f}" for t in (8, 16))
        print(f"  size {size}: Mobius/qc {vs_qc} | Mobius t/2thr {vs_2} | qc t/2thr {qc_2}")
