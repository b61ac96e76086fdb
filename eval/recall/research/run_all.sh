#!/bin/bash
# runs every (dataset, embedder, variant) experiment; results in out/exp-*.md/json
PY=~/.cache/mira/research-venv/bin/python
cd /tmp/r21
for ds in dev locomo; do
  $PY exp.py --dataset $ds --embedders minilm --variants turn,nospk,chunk3 --fuse-weights 0.5,1,2,3 --json out/exp-$ds-minilm.json > out/exp-$ds-minilm.md 2>out/exp-$ds-minilm.err
done
for ds in dev locomo; do
  $PY exp.py --dataset $ds --embedders e5q4 --variants turn,chunk3 --fuse-weights 0.5,1,2,3 --json out/exp-$ds-e5q4.json > out/exp-$ds-e5q4.md 2>out/exp-$ds-e5q4.err
done
for ds in dev locomo; do
  $PY exp.py --dataset $ds --embedders minilm-int8,para-l3 --variants turn --fuse-weights 1,2 --json out/exp-$ds-small.json > out/exp-$ds-small.md 2>out/exp-$ds-small.err
done
echo done > out/run_all.done
