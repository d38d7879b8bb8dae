#!/usr/bin/env python3
"""Locked instructions executed per call of the bench adapter's insert, by site.

usage: locked.py BINARY CALLGRIND_OUT
CALLGRIND_OUT from `valgrind --tool=callgrind --dump-instr=yes --compress-pos=no
--collect-atstart=no "--toggle-collect=*BenchCache>::insert" BINARY bench -c CACHE -t 1 ...`.
The calls are counted at the adapter's entry instruction (`nm -C BINARY`). Locked
instructions: `lock`-prefixed ones and `xchg` with memory, from `objdump -d BINARY`; sites
named by `addr2line -i`.
"""
import collections, re, subprocess, sys
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tools'))
from callgrind_percall import self_costs

binary, out = sys.argv[1], sys.argv[2]
syms = subprocess.run(['nm', '-C', binary], capture_output=True, text=True).stdout
entry = next(int(l.split()[0], 16) for l in syms.splitlines()
             if l.endswith('adapter::Sifter as sifter_bench::adapter::BenchCache>::insert'))
dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', binary], capture_output=True,
                     text=True).stdout
locked = {}
for l in dis.splitlines():
    m = re.match(r'\s*([0-9a-f]+):\s+(.*)', l)
    if m and (m.group(2).startswith('lock ') or (m.group(2).startswith('xchg') and '(' in m.group(2))):
        locked[int(m.group(1), 16)] = m.group(2).strip()
cnt = collections.Counter()
calls = ir = 0
for a, ev in self_costs(out):
    ir += ev[0]
    if a == entry:
        calls += ev[0]
    if a in locked:
        cnt[a] += ev[0]
print(f"{calls} inserts, {ir / calls:.0f} instructions and "
      f"{sum(cnt.values()) / calls:.2f} locked instructions per insert")
for a, c in cnt.most_common(20):
    src = subprocess.run(['addr2line', '-i', '-f', '-C', '-e', binary, hex(a)],
                         capture_output=True, text=True).stdout.split('\n')
    pairs = list(zip(src[0::2], src[1::2]))[:4]
    chain = ' < '.join(f"{n.split('::')[-1][:30]}@{l.split('/')[-1]}" for n, l in pairs)
    print(f"{c / calls:6.3f} {locked[a][:28]:28} {chain}")
