#!/bin/bash
PY=~/.cache/mira/research-venv/bin/python
cd /tmp/r21
while [ ! -f out/run_all.done ]; do sleep 10; done
for ds in dev locomo; do
  $PY exp.py --dataset $ds --embedders tokenlearn --variants turn --fuse-weights 0.5,1 --json out/exp-$ds-tokenlearn.json > out/exp-$ds-tokenlearn.md 2>out/exp-$ds-tokenlearn.err
done
REPS=30 $PY lat.py emb > out/latency-emb.md 2> out/latency-emb.err
REPS=20 $PY lat.py ce > out/latency-ce.md 2> out/latency-ce.err
echo done > out/run_more.done
