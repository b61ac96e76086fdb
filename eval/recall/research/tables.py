#!/usr/bin/env python3
"""Summary table (LoCoMo 1-4 and dev, hit@1/5/10, MRR@10) from out/exp-*.json"""
import json, glob
rows = {}
for f in sorted(glob.glob("/tmp/r21/out/exp-*.json")):
    ds = f.split("exp-")[1].split("-")[0]
    for name, r in json.load(open(f))["results"].items():
        rows.setdefault(name, {})[ds] = r["overall"]
want = lambda n: (n.startswith("dense") or n.startswith("mira") or n.startswith("bm25") or "w=0.5" in n or "w=1.0" in n)
print("| ranking | LoCoMo h@1 | h@5 | h@10 | MRR | dev h@1 | h@5 | h@10 | MRR |\n|---|---|---|---|---|---|---|---|---|")
for n, d in rows.items():
    if not want(n) or "RRF(mira" in n:
        continue
    cell = lambda ds: " | ".join(f"{d[ds][k]:.3f}" if k != "hit5" else f"**{d[ds][k]:.3f}**" for k in ("hit1", "hit5", "hit10", "mrr")) if ds in d else "- | - | - | -"
    print(f"| {n} | {cell('locomo')} | {cell('dev')} |")
