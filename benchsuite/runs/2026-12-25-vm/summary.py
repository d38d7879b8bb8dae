"""The model's error per closed-loop point and build, over alternated rounds `BUILD-rN.csv`
in the current directory: `python3 ../summary.py base,net` (replay-overhead/),
`python3 ../../summary.py net,long` (warm-up/long-passes/), `... net,warm4,long`
(warm-up/three-way/). Per build: the error of each round, the error of the means, the
calibrated two-thread hit (ns), and, where the CSV has them, the workers' cost charged and
the calibration loop's cost taken out of it (ns)."""
import collections
import csv
import glob
import statistics
import sys

builds = sys.argv[1].split(",")
rows = collections.defaultdict(dict)
for b in builds:
    for path in sorted(glob.glob(f"{b}-r*.csv")):
        for row in csv.DictReader(open(path)):
            rows[(row["policy"], row["target_hit"])].setdefault(b, []).append(row)
head = ["policy", "target"]
for b in builds:
    head += [f"{b}: errors by round", f"{b}: means", f"{b}: hit ns", f"{b}: charged / replay ns"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
errors = {b: [] for b in builds}
for key in sorted(rows):
    cells = list(key)
    for b in builds:
        rs = rows[key][b]
        meas = statistics.mean(float(r["measured_mops"]) for r in rs)
        model = statistics.mean(float(r["model_mops"]) for r in rs)
        errors[b].append(100 * (model / meas - 1))
        mean_ns = lambda col: statistics.mean(float(r[col]) for r in rs) * 1e3
        replay = f"{mean_ns('replay_us'):.2f}" if "replay_us" in rs[0] else "-"
        cells += [" ".join(f"{float(r['error']) * 100:+.0f}" for r in rs),
                  f"{errors[b][-1]:+.1f} %", f"{mean_ns('busy_hit_us'):.1f}",
                  f"{mean_ns('overhead_us'):.2f} / {replay}"]
    print("| " + " | ".join(cells) + " |")
print()
for b in builds:
    e = errors[b]
    print(f"{b}: mean |error| {statistics.mean(abs(x) for x in e):.1f} %, largest "
          f"{max(abs(x) for x in e):.1f} %, {sum(abs(x) < 10 for x in e)} of {len(e)} within 10 %")
