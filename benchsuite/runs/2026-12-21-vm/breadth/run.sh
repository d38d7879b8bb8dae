#!/bin/sh
# Stop 70: Mobius and S3-FIFO against quick_cache and moka on workloads the table does
# not cover (skews, uniform keys, a 1M-entry cache, writes). One `sifter bench` per workload,
# every cache paired inside each repetition. Run from the repository root after
# `cargo build --release -p sifter-cli`.
set -e
S=${SIFTER:-target/release/sifter}
D=benchsuite/runs/2026-12-21-vm/breadth
run() { name=$1; shift; "$S" bench -c mobius,s3fifo,quick_cache,moka -t 1,2 -r 3 --no-plots -q -o "$D/$name" "$@"; }
run zipf0.7      -w zipf:alpha=0.7,keys=1000000 -s 10k,100k
run zipf1.2      -w zipf:alpha=1.2,keys=1000000 -s 10k,100k
run uniform      -w uniform:n=1000000,requests=8000000 -s 100k,500k
run zipf1.0-big  -w zipf:alpha=1.0,keys=10000000 -s 1M --sequence 8000000
run ycsb-a       -w ycsb:a -s 10k,100k
run cachebench   -w cachebench:lookup=50,insert=20,lookup-insert=10,erase=20 -s 10k,100k
