for r in 1 2 3; do for v in base net; do
  $SIFTER_DIR/sifter-$v bench closed-loop -p mobius,fifo,clock --mpl 72 --backend-latency 100us --workers loops --hit-ratios 0.98,0.99,0.995 --secs 0.5 --csv $v-r$r.csv > $v-r$r.log 2>&1
done; done
