#!/bin/bash
PY=~/.cache/mira/research-venv/bin/python
cd /tmp/r21
while [ ! -f out/latency-ce.done ]; do sleep 5; done
for ds in dev locomo; do
  $PY exp.py --dataset $ds --embedders para-l3 --variants turn,chunk3 --fuse-weights 0.5,1 --json out/exp-$ds-para-l3.json > out/exp-$ds-para-l3.md 2>out/exp-$ds-para-l3.err
done
$PY ltr.py --embs para-l3-turn,para-l3-chunk3 > out/ltr-para-l3.md 2>out/ltr-para-l3.err
$PY ltr.py --embs e5q4-turn,e5q4-chunk3 > out/ltr-e5q4.md 2>out/ltr-e5q4.err
echo done > out/run_l3.done
