for i in 1 2 3; do for b in base mine; do /tmp/sifter-$b bench closed-loop -p lru,problru,problru-mpl,fifo,clock,sieve,mobius,s3fifo,nbq-clock --mpl 72 --backend-latency 100us --workers loops --hit-ratios 0.95,0.98,0.99,0.995 --secs 0.5 --csv $b-r$i.csv > $b-r$i.txt 2>&1; done; done
echo done > done
