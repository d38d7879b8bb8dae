#!/usr/bin/env python3
"""Aggregates repeated `sifter bench closed-loop --csv` runs: per policy and target hit ratio,
the mean measured throughput with a 95 % confidence interval (Student t over the runs), the mean
achieved hit ratio, the model's prediction and its error; then, per policy, whether the measured
throughput ever falls as the hit ratio rises (a drop whose intervals do not overlap).

Usage: closed_loop_ci.py [--summary] RUN.csv [RUN.csv ...]   (prints a Markdown table)

--summary prints instead, per MPL and backend latency, one row per policy and one column per
target: the mean measured Mops/s and the model's error on it, and how many means the model has
within 10 %.
"""
import csv
import statistics
import sys

# Two-sided 95 % Student t quantiles by degrees of freedom.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def main():
    args = sys.argv[1:]
    summary = "--summary" in args
    args = [a for a in args if a != "--summary"]
    if not args or any(a in ("-h", "--help") for a in args):
        sys.exit(__doc__)
    groups = {}
    for path in args:
        try:
            with open(path) as f:
                for n, r in enumerate(csv.DictReader(f), start=2):
                    try:
                        key = (r["policy"], int(r["mpl"]), float(r["backend_us"]),
                               float(r["target_hit"]))
                    except (KeyError, TypeError, ValueError) as e:
                        sys.exit(f"{path}, line {n}: not a `sifter bench closed-loop --csv` row "
                                 f"with target hit ratios ({e!r})")
                    groups.setdefault(key, []).append(r)
        except OSError as e:
            sys.exit(f"{path}: {e.strerror}")
    if summary:
        print_summary(groups)
        return
    print("| policy | MPL | backend µs | target | hit ratio | measured Mops/s (95 % CI) | model | model error | each run's error | runs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    curves = {}
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3])):
        rs = groups[key]
        xs = [float(r["measured_mops"]) for r in rs]
        m = statistics.mean(xs)
        half = T95.get(len(xs) - 1, 2.0) * statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else float("nan")
        hit = statistics.mean(float(r["hit_ratio"]) for r in rs)
        model = statistics.mean(float(r["model_mops"]) for r in rs)
        err = (model - m) / m
        curves.setdefault(key[:3], []).append((hit, m, half))
        each = " ".join(f"{float(r['error']):+.0%}" for r in rs)
        print(f"| {key[0]} | {key[1]} | {key[2]:g} | {key[3]:g} | {hit:.4f} | {m:.3f} ± {half:.3f} | "
              f"{model:.3f} | {err:+.1%} | {each} | {len(xs)} |")
    print()
    for (pol, mpl, us), pts in sorted(curves.items()):
        pts.sort()
        drops = [
            f"{a[0]:.3f}→{b[0]:.3f}: {a[1]:.2f}→{b[1]:.2f}"
            for a, b in zip(pts, pts[1:])
            if b[1] + b[2] < a[1] - a[2]
        ]
        verdict = "falls " + "; ".join(drops) if drops else "never falls (rises or stays within the intervals)"
        print(f"- {pol}, MPL {mpl}, {us:g} µs: {verdict}")


def print_summary(groups):
    """Per (MPL, backend): policy × target, "measured (model error)" of the means."""
    settings = sorted({(k[1], k[2]) for k in groups})
    within = total = 0
    for mpl, us in settings:
        keys = [k for k in groups if (k[1], k[2]) == (mpl, us)]
        targets = sorted({k[3] for k in keys})
        policies = sorted({k[0] for k in keys})
        runs = max(len(groups[k]) for k in keys)
        print(f"MPL {mpl}, {us:g} µs, {runs} runs: mean Mops/s (model error)\n")
        print("| policy | " + " | ".join(f"{t:g}" for t in targets) + " |")
        print("|---" * (len(targets) + 1) + "|")
        for pol in policies:
            cells = []
            for t in targets:
                rs = groups.get((pol, mpl, us, t))
                if not rs:
                    cells.append("")
                    continue
                m = statistics.mean(float(r["measured_mops"]) for r in rs)
                model = statistics.mean(float(r["model_mops"]) for r in rs)
                err = (model - m) / m
                total += 1
                within += abs(err) <= 0.10
                mark = "" if abs(err) <= 0.10 else "**"
                cells.append(f"{m:.3g} ({mark}{err:+.0%}{mark})")
            print(f"| {pol} | " + " | ".join(cells) + " |")
        print()
    print(f"{within} of {total} means within 10 % of the model (bold: the others).")


if __name__ == "__main__":
    main()
