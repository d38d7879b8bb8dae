T=0.5,0.9,0.98,0.995
for i in 1 2; do for b in base mine; do
/tmp/sifter-$b bench closed-loop -p lru,mobius --mpl 2 --backend-latency 100us --hit-ratios $T --secs 0.5 --csv $b-r$i-mpl2.csv > /dev/null 2>&1
/tmp/sifter-$b bench closed-loop -p lru,mobius --mpl 8 --backend-latency 100us --workers loops --hit-ratios $T --secs 0.5 --csv $b-r$i-mpl8.csv > /dev/null 2>&1
/tmp/sifter-$b bench closed-loop -p lru,mobius --mpl 2 --spin --backend-latency 5us --hit-ratios $T --secs 0.5 --csv $b-r$i-spin5.csv > /dev/null 2>&1
/tmp/sifter-$b bench closed-loop -p lru,mobius --mpl 72 --backend-latency 20us --workers loops --hit-ratios $T --secs 0.5 --csv $b-r$i-20us.csv > /dev/null 2>&1
done; done
echo done > done
