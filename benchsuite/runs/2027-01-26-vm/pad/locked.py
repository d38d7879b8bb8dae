#!/usr/bin/env python3
"""Locked instructions executed per call of the bench adapter's insert, by site.

usage: locked.py BINARY CALLGRIND_OUT CALLS
CALLGRIND_OUT from `valgrind --tool=callgrind --dump-instr=yes --compress-pos=no
--collect-atstart=no "--toggle-collect=*BenchCache>::insert" BINARY bench ...`; CALLS the
insert calls (callgrind_percall.py prints them). Locked instructions: `lock`-prefixed ones
and `xchg` with memory, from `objdump -d BINARY`; sites named by `addr2line -i`.
"""
import collections, re, subprocess, sys
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tools'))
from callgrind_percall import self_costs

binary, out, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', binary], capture_output=True,
                     text=True).stdout
locked = {}
for l in dis.splitlines():
    m = re.match(r'\s*([0-9a-f]+):\s+(.*)', l)
    if m and (m.group(2).startswith('lock ') or (m.group(2).startswith('xchg') and '(' in m.group(2))):
        locked[int(m.group(1), 16)] = m.group(2).strip()
cnt = collections.Counter()
for a, ev in self_costs(out):
    if a in locked:
        cnt[a] += ev[0]
print(f"locked per insert: {sum(cnt.values()) / calls:.2f}")
for a, c in cnt.most_common(20):
    src = subprocess.run(['addr2line', '-i', '-f', '-C', '-e', binary, hex(a)],
                         capture_output=True, text=True).stdout.split('\n')
    pairs = list(zip(src[0::2], src[1::2]))[:4]
    chain = ' < '.join(f"{n.split('::')[-1][:30]}@{l.split('/')[-1]}" for n, l in pairs)
    print(f"{c / calls:6.3f} {locked[a][:28]:28} {chain}")
