# base = 89e5482, still = /tmp/still.patch on it (dropped); two alternated rounds.
for i in 1 2; do for b in base still; do /tmp/sifter-$b bench closed-loop -p problru-mpl,problru,lru --mpl 72 --backend-latency 100us --workers loops --hit-ratios 0.95,0.98,0.99,0.995 --secs 0.5 --csv $b-r$i.csv > $b-r$i.txt 2>&1; done; done
