#!/usr/bin/env python3
"""Locked instructions executed per call of a callgrind-collected function.

Usage: locked_census.py BINARY CALLGRIND_OUT INSTRUCTIONS_PER_CALL
CALLGRIND_OUT from `valgrind --tool=callgrind --dump-instr=yes --compress-pos=no
--compress-strings=no --collect-atstart=no --toggle-collect=FN ...`; the calls are the
collected instruction total divided by INSTRUCTIONS_PER_CALL (callgrind_percall.py's Ir/call).
Prints each locked instruction (`lock`-prefixed, `xchg` with memory) with its executions per
call and its source chain (addr2line -i), most executed first.
"""
import re
import subprocess
import sys

binary, out, per_call = sys.argv[1], sys.argv[2], float(sys.argv[3])
locked = {}
dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True,
                     text=True, check=True).stdout
for line in dis.splitlines():
    m = re.match(r"^\s*([0-9a-f]+):\s+(.*)$", line)
    if m and re.search(r"\block\b|\bxchg\b.*\(", m.group(2)):
        locked[int(m.group(1), 16)] = m.group(2).strip()
counts, total, skip = {}, 0, False
for line in open(out):
    if line.startswith("summary:"):
        total = int(line.split()[1])
    if line.startswith("calls="):
        skip = True  # the next cost line is a call's inclusive cost
        continue
    m = re.match(r"^(0x[0-9a-f]+)\s+\d+\s+(\d+)", line)
    if m:
        if skip:
            skip = False
            continue
        a = int(m.group(1), 16)
        if a in locked:
            counts[a] = counts.get(a, 0) + int(m.group(2))
calls = total / per_call
s = 0.0
for a, c in sorted(counts.items(), key=lambda x: -x[1]):
    s += c / calls
    chain = subprocess.run(["addr2line", "-e", binary, "-i", "-f", "-C", hex(a)],
                           capture_output=True, text=True).stdout.split("\n")
    where = " < ".join(chain[i].split("<")[0].split("::")[-1] for i in range(2, len(chain) - 1, 2))
    print(f"{c / calls:6.3f}  {hex(a)}  {locked[a]:45s} {where[:90]}")
print(f"{s:6.3f}  in all, per call")
