#!/usr/bin/env bash
# Stop 66: the issue-11/12 target tables on the bench's new split (warm-up on the first half of
# each thread's sequence, measurement on the rest: no measured request replays a warm-up one).
set -euo pipefail
cd "$(dirname "$0")/../../.."
S=target/release/sifter
D=benchsuite/runs/2026-12-17-vm
$S bench -c mobius,quick_cache -t 1,2 -s 10k,100k --sequence 10000000 --requests 4000000 -r 15 \
  --no-plots -q -o $D/peers-r15 > $D/peers-r15.txt
$S bench -c mobius,s3fifo,nbq-clock -t 2 -s 10k,100k --sequence 10000000 --requests 4000000 -r 15 \
  --no-plots -q -o $D/seeds-2t-r15 > $D/seeds-2t-r15.txt
$S bench -c mobius -t 2,8,16 -s 10k,100k --sequence 6000000 --requests 2000000 -r 21 \
  --no-plots -q -o $D/oversub-r21 > $D/oversub-r21.txt
$S bench -c mobius,quick_cache -t 1,2 -s 10k,100k -r 5 --no-plots -q -o $D/default-r5 > $D/default-r5.txt
