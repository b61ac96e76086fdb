#!/bin/bash
PY=~/.cache/mira/research-venv/bin/python
cd /tmp/r21
while [ ! -f out/run_l3.done ]; do sleep 5; done
for ds in locomo dev; do
  $PY exp.py --dataset $ds --embedders e5q4-enpt --variants turn --fuse-weights 0.5 --json out/exp-$ds-enpt.json > out/exp-$ds-enpt.md 2>out/exp-$ds-enpt.err
done
echo done > out/run_enpt.done
