#!/usr/bin/env bash
# Pairs of small_tasks.py runs, before and after, alternating which goes first.
cd /work/wt-flushes
log=bench/results/small-tasks/commit-flush-pacing/small-tasks.log
for pair in 1 2; do
  for shards in 4096 1024 16; do
    writes=2
    if [ $((pair % 2)) = 1 ]; then order="before after"; else order="after before"; fi
    for jar in $order; do
      echo "$(date -u +%H:%M:%S) pair=$pair shards=$shards jar=$jar load=$(cut -d' ' -f1 /proc/loadavg)" >> $log
      SHARDS=$shards WRITES=$writes SPARK_KPL_JAR=/tmp/flushes/$jar.jar .venv/bin/python bench/small_tasks.py 2>/tmp/flushes/err-$pair-$shards-$jar.log | grep '^RESULT' >> $log
    done
  done
done
echo "$(date -u +%H:%M:%S) done" >> $log
