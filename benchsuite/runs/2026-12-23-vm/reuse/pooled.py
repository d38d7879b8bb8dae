"""Sound reuse at once (`reuse`, `quiet2`) over `base` at one thread and 10k, paired round by
round over every run of this directory: the mean log ratio of the per-process values (each the
geometric mean of a process's Mobius ÷ quick_cache repetitions), with two standard errors."""
import glob, json, math, os, statistics

def val(f):
    rows = json.load(open(f))["report"]["rows"]
    by = {r["cache"]: r["mops_runs"] for r in rows}
    return statistics.mean(math.log(a / b) for a, b in zip(by["mobius"], by["quick_cache"]))

here = os.path.dirname(os.path.abspath(__file__))
pooled = []
for name, d, sound in [("first", "first", ["quiet2"]), ("t1-s10k", "t1-s10k", ["reuse"]),
                       ("second", "second/t1-s10k", ["reuse"]),
                       ("third", "third/t1-s10k", ["reuse", "quiet2"])]:
    d = os.path.join(here, d)
    n = len(glob.glob(f"{d}/round*-base"))
    diffs = []
    for r in range(1, n + 1):
        b = val(f"{d}/round{r}-base/results.json")
        diffs += [val(f"{d}/round{r}-{s}/results.json") - b for s in sound]
    pooled += diffs
    for label, x in [(name, diffs)] + ([("pooled", pooled)] if name == "third" else []):
        m, se = statistics.mean(x), statistics.stdev(x) / math.sqrt(len(x))
        print(f"{label:8} pairs={len(x):3}  {math.exp(m):.3f} [{math.exp(m - 2 * se):.3f}, {math.exp(m + 2 * se):.3f}]")
