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

`--parts DEPTH` also breaks each operation's instructions down by where they come from in
the source, with nothing changed in the build: each executed instruction's chain of inlined
functions (`addr2line -i`), outermost first, cut to DEPTH levels, sifter's and its
dependencies' functions only (the standard library's frames left out), summed per call of the
operation (one more callgrind run per operation, without the cache simulation). A part names
the whole call path inlined into the operation, e.g. `insert_inner > acquire > evict_some`.

`--locked` also counts the locked instructions (`lock`-prefixed ones, and `xchg` with a memory
operand, from `objdump -d`) each operation executes per call, by source site (`addr2line -i`,
innermost first): the barriers a one-thread path waits on, which a simulation without timing
does not weigh. It shares `--parts`'s run of each operation.

`--parts` and `--locked` count the calls in their own run, at the adapter function's entry
instruction (`nm`): the bench's warm-up is timed, so two runs of one binary make different
numbers of calls.

`--sites N` also lists, per cache, the N instructions with the most first-level data misses
and where they are in the source: the chain of inlined functions (innermost first, the
standard library's frames left out) as `addr2line -i` (binutils) reads it from the binary's
debug information, with the misses per get call (every request of a read-through run starts
with one). With `--sites`, events are collected only inside those two functions. Callgrind
does not simulate software prefetches, so a miss a prefetch hides on the hardware still
counts here.
"""
import argparse
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

FUNCS = {"get": "BenchCache>::get", "insert": "BenchCache>::insert"}

# Events in the order callgrind writes them with --cache-sim=yes.
EVENTS = ["Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"]


def self_costs(path):
    """(instruction address, [event counts]) for each cost line of a callgrind file written
    with --dump-instr=yes --compress-pos=no: self costs only (a `calls=` line's following line
    is the call's inclusive cost, skipped). An address may come more than once."""
    after_call = False
    for line in open(path):
        if line.startswith("calls="):
            after_call = True
            continue
        m = re.match(r"^(0x[0-9a-f]+)\s+\d+\s+(.*)$", line)
        if not m:
            continue
        if after_call:
            after_call = False
            continue
        yield int(m.group(1), 16), [int(x) for x in m.group(2).split()]


def miss_sites(path):
    """{instruction address: (first-level data misses, instructions executed)} from a run
    with --cache-sim=yes (see `self_costs`)."""
    sites = {}
    for a, vals in self_costs(path):
        ev = dict(zip(EVENTS, vals + [0] * len(EVENTS)))
        d1, ir = sites.get(a, (0, 0))
        sites[a] = (d1 + ev["D1mr"] + ev["D1mw"], ir + ev["Ir"])
    return sites


def self_ir(path):
    """{instruction address: instructions executed} from a run without the cache simulation
    (its one event is Ir; see `self_costs`)."""
    ir = {}
    for a, vals in self_costs(path):
        ir[a] = ir.get(a, 0) + vals[0]
    return ir


def function_chains(binary, addrs):
    """{address: [function, ...]} outermost first, the standard library's frames left out and
    generic parameters dropped, by `addr2line -a -f -i` (in batches)."""
    chains = {}
    addrs = sorted(addrs)
    for i in range(0, len(addrs), 4000):
        out = subprocess.run(["addr2line", "-a", "-f", "-i", "-C", "-e", binary]
                             + [hex(a) for a in addrs[i:i + 4000]],
                             capture_output=True, text=True, check=True).stdout.splitlines()
        cur, funcs, expect_func = None, [], False
        for line in out:
            if re.fullmatch(r"0x[0-9a-f]+", line):
                if cur is not None:
                    chains[cur] = funcs
                cur, funcs, expect_func = int(line, 16), [], True
            elif expect_func:
                funcs.append(line)
                expect_func = False
            else:
                # The place line after each function line: std's frames are dropped with it.
                if "/rustc/" in line and funcs:
                    funcs.pop()
                expect_func = True
        if cur is not None:
            chains[cur] = funcs
    def simple(f):
        while True:
            g = re.sub(r"<[^<>]*>", "", f)
            if g == f:
                break
            f = g
        return f.replace("{{closure}}", "{closure}").split("::")[-1] or f
    return {a: [simple(f) for f in reversed(fs)] for a, fs in chains.items()}


@functools.cache
def symbols(binary):
    """The defined symbols of `binary` as (address, demangled name), by `nm -C` (read once)."""
    out = subprocess.run(["nm", "-C", binary], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return [(int(l[:16], 16), l[19:]) for l in out if l[:1] in "0123456789abcdef"]


@functools.cache
def locked_instructions(binary):
    """{address: instruction} of every locked instruction in `binary` (`lock`-prefixed ones
    and `xchg` with a memory operand), by `objdump -d` (read once)."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True,
                         text=True, check=True).stdout
    found = {}
    for line in dis.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(.*)", line)
        if m and (m.group(2).startswith("lock ")
                  or (m.group(2).startswith("xchg") and "(" in m.group(2))):
            found[int(m.group(1), 16)] = m.group(2).split("#")[0].strip()
    return found


def entry_calls(binary, pattern, ir):
    """Calls of the functions whose names end with `pattern` in a run's instruction counts
    `ir`: the executions of their entry instructions (a function's first instruction is no
    loop's target in the adapter's functions)."""
    return sum(ir.get(a, 0) for a, name in symbols(binary) if name.endswith(pattern))


def locked(binary, ir, calls):
    """Lines `locked instructions per call  instruction  site`, most first, and a total."""
    sites = {a: ins for a, ins in locked_instructions(binary).items() if ir.get(a)}
    lines = [f"    {ir[a] / calls:8.3f}  {ins[:32]:32}  {inline_chain(binary, a)}"
             for a, ins in sorted(sites.items(), key=lambda kv: -ir[kv[0]]) if ir[a] / calls >= 0.005]
    lines.append(f"    {sum(ir[a] for a in sites) / calls:8.3f}  (total)")
    return lines


def parts(binary, ir, calls, depth):
    """Lines `instructions per call  part`, most first, from a run toggled on one operation."""
    chains = function_chains(binary, ir)
    by = {}
    for a, n in ir.items():
        key = " > ".join(chains.get(a, [])[:depth]) or "?"
        by[key] = by.get(key, 0) + n
    lines = [f"    {n / calls:8.1f}  {k}" for k, n in sorted(by.items(), key=lambda kv: -kv[1])
             if n / calls >= 0.5]
    lines.append(f"    {sum(by.values()) / calls:8.1f}  (total)")
    return lines


def inline_chain(binary, addr, frames=4):
    """The source places of `addr`, innermost first, without the standard library's."""
    out = subprocess.run(["addr2line", "-i", "-f", "-C", "-e", binary, hex(addr)],
                         capture_output=True, text=True).stdout.split("\n")
    places = [out[i + 1] for i in range(0, len(out) - 1, 2)]
    own = [p for p in places if "/rustc/" not in p and p.strip()]
    short = [re.sub(r"^.*/(crates|deps|registry/src/[^/]+)/", "", p) for p in own]
    return " <- ".join(short[:frames]) or "?"


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
    ap.add_argument("--bench-args", default="-s 0.1 --sequence 4000000 --requests 2000000")
    ap.add_argument("--sites", type=int, default=0, metavar="N",
                    help="also list the N instructions with the most first-level data misses")
    ap.add_argument("--LL", default="33554432,16,64",
                    help="simulated last-level cache: size,associativity,line (this VM's L3 is "
                         "32 MiB per lscpu, but its cpuid reports 320 MB, which valgrind "
                         "would otherwise simulate)")
    ap.add_argument("--parts", type=int, default=0, metavar="DEPTH",
                    help="also break each operation's instructions down by inlined function "
                         "chains, DEPTH levels (see above)")
    ap.add_argument("--locked", action="store_true",
                    help="also count each operation's locked instructions per call, by site")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("valgrind not found (apt-get install valgrind)")
    needed = ["addr2line"] + (["nm", "objdump"] if args.parts or args.locked else [])
    if (args.sites or args.parts or args.locked) and not all(map(shutil.which, needed)):
        sys.exit("--sites, --parts and --locked need binutils (apt-get install binutils)")
    if args.sites < 0:
        sys.exit("--sites: a count of instructions, 0 or more")
    if args.parts < 0:
        sys.exit("--parts: a depth, 0 (off) or more")
    print(f"{'cache':12} {'op':7} {'calls':>10} {'Ir/call':>8} {'D1 miss/call':>12} "
          f"{'LL miss/call':>12}")
    for cache in args.caches.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "cg.out")
            # Events collected only inside the adapter's get and insert (and what they call),
            # so the warm-up's sequence generation does not crowd the sites.
            sites = ["--dump-instr=yes", "--compress-pos=no"] + [
                f"--toggle-collect=*{pat}" for pat in FUNCS.values()] if args.sites else []
            cmd = ["valgrind", "--tool=callgrind", "--cache-sim=yes", f"--LL={args.LL}"] + sites + [
                   f"--callgrind-out-file={out}", args.sifter, "bench", "-c", cache, "-t", "1",
                   "-r", "1", "--sample-every", "0", "-q", "--no-plots", "-o",
                   os.path.join(tmp, "bench")] + shlex.split(args.bench_args)
            print(f"# {' '.join(cmd)}", file=sys.stderr, flush=True)
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            incl, calls = parse_tree(out)
            gets = 0
            op_calls = {}
            for op, pat in FUNCS.items():
                # The adapter's function, wherever its first line was inlined from (sifter's
                # own caches inline theirs from the cache module): the entry with the most calls.
                cands = [f for f in calls if pat in f and f in incl]
                name = max(cands, key=lambda f: calls[f], default=None)
                n = calls.get(name, 0) if name else 0
                if not name or not n or name not in incl:
                    print(f"{cache:12} {op:7} {'-':>10}")
                    continue
                e = incl[name]
                if op == "get":
                    gets = n
                op_calls[op] = n
                print(f"{cache:12} {op:7} {n:>10} {e['Ir'] / n:>8.1f} "
                      f"{(e['D1mr'] + e['D1mw']) / n:>12.2f} {(e['DLmr'] + e['DLmw']) / n:>12.3f}",
                      flush=True)
            for op, pat in FUNCS.items() if args.parts or args.locked else ():
                if not op_calls.get(op):
                    continue
                pout = os.path.join(tmp, f"parts-{op}.out")
                pcmd = ["valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-pos=no",
                        "--collect-atstart=no", f"--toggle-collect=*{pat}",
                        f"--callgrind-out-file={pout}"] + cmd[cmd.index(args.sifter):]
                print(f"# {' '.join(pcmd)}", file=sys.stderr, flush=True)
                subprocess.run(pcmd, check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
                ir = self_ir(pout)
                n = entry_calls(args.sifter, pat, ir)
                if not n:
                    print(f"  {cache} {op}: no call at the entry of a function named *{pat}")
                    continue
                if args.parts:
                    print(f"  {cache} {op}: instructions per call by part ({n} calls)")
                    print("\n".join(parts(args.sifter, ir, n, args.parts)), flush=True)
                if args.locked:
                    print(f"  {cache} {op}: locked instructions per call by site ({n} calls)")
                    print("\n".join(locked(args.sifter, ir, n)), flush=True)
            if args.sites:
                top = sorted(miss_sites(out).items(), key=lambda kv: -kv[1][0])[:args.sites]
                for addr, (d1, ir) in top:
                    per = f"{d1 / gets:.3f}" if gets else "-"
                    print(f"  {cache:12} {per:>7} D1 misses/get  {d1:>10} of {ir:>10} executions  "
                          f"{inline_chain(args.sifter, addr)}", flush=True)


if __name__ == "__main__":
    main()
