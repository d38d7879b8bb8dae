"""Model error per point and build over the alternated rounds of ab.sh (run from this directory)."""
import csv, collections, statistics
rows = collections.defaultdict(dict)
for v in ("base", "net"):
    for r in (1, 2, 3):
        for row in csv.DictReader(open(f"{v}-r{r}.csv")):
            rows[(row["policy"], row["target_hit"])].setdefault(v, []).append(row)
print("| policy | target | base: errors by round | base: means | net: errors by round | net: means | charged ns (base / net) | replay ns |")
print("|---|---|---|---|---|---|---|---|")
for k in sorted(rows):
    cells = []
    for v in ("base", "net"):
        rs = rows[k][v]
        errs = " ".join(f"{float(x['error']) * 100:+.0f}" for x in rs)
        meas = statistics.mean(float(x["measured_mops"]) for x in rs)
        model = statistics.mean(float(x["model_mops"]) for x in rs)
        cells += [errs, f"{100 * (model / meas - 1):+.1f} %"]
    over = [statistics.mean(float(x["overhead_us"]) for x in rows[k][v]) * 1e3 for v in ("base", "net")]
    rep = statistics.mean(float(x["replay_us"]) for x in rows[k]["net"]) * 1e3
    print(f"| {k[0]} | {k[1]} | " + " | ".join(cells) + f" | {over[0]:.2f} / {over[1]:.2f} | {rep:.2f} |")
