#!/usr/bin/env python3
"""Fusion analysis over the cached embeddings of exp.py (no model is run here).

Tunes fusion weights on the DEV set and reports the same configuration on LoCoMo (held out),
plus LoCoMo's own best (an optimistic ceiling), plus candidate-set recall (what any reranker of
the top N could reach at most).

  ~/.cache/mira/research-venv/bin/python analyze.py --embedder minilm > out/analyze-minilm.md
"""
import argparse, itertools, json, re, sqlite3, sys
from pathlib import Path
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import exp  # noqa
import bm25_whatif as bw  # noqa


def bm25_scored(convs, k=100):
    """like exp.bm25_lists but returns per question a list of (turns, score>0)"""
    out = {}
    stop = bw.MIRA_STOP | bw.MORE_STOP
    for c in convs:
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(body, ctx, tokenize='porter unicode61')")
        seen, id2turns, rows = {}, {}, []
        for _, ts in c["sessions"]:
            for i, (dia, spk, text) in enumerate(ts):
                prev = ts[i - 1][2] if i > 0 else ""; nxt = ts[i + 1][2] if i + 1 < len(ts) else ""
                key = text.strip().lower()
                if key in seen:
                    id2turns[seen[key]].append(dia); continue
                rid = len(rows) + 1; seen[key] = rid; id2turns[rid] = [dia]
                rows.append((rid, text, prev + " " + nxt, spk))
        db.executemany("INSERT INTO t(rowid, body, ctx) VALUES (?,?,?)", [r[:3] for r in rows])
        spk_of = {r[0]: r[3] for r in rows}
        names = {n.lower() for r in rows for n in r[3].split()}
        lists = []
        for q in c["qa"]:
            if not q["evidence"]:
                continue
            terms = bw.fts_terms(q["question"], stop, names)
            got = []
            if terms:
                got = db.execute("SELECT rowid, bm25(t, 1.0, 0.3) FROM t WHERE t MATCH ? ORDER BY bm25(t, 1.0, 0.3), rowid LIMIT ?",
                                 (" OR ".join(terms), k)).fetchall()
                named = {n for n in re.findall(r"\w+", q["question"].lower()) if n in names}
                got = [(r[0], -r[1] * (1.15 if any(x in spk_of[r[0]].lower().split() for x in named) else 1.0)) for r in got]
                got.sort(key=lambda x: -x[1])
            lists.append([(id2turns[r], s) for r, s in got])
        out[c["id"]] = lists
    return out


class DS:
    def __init__(self, ds, embs):
        self.ds = ds
        self.convs = exp.load(ds)
        self.cats = exp.main_cats(ds)
        self.bm = bm25_scored(self.convs)
        self.mira = exp.mira_lists(ds)
        self.qs = [(c["id"], qi, q) for c in self.convs for qi, q in enumerate([q for q in c["qa"] if q["evidence"]])]
        self.dense = {}  # name -> {cid: (dias, S matrix q x d)}
        for e in embs:
            f = exp.CACHE / f"{ds}-{e}.npz"
            if not f.exists():
                continue
            z = np.load(f, allow_pickle=True)
            docs, qs = z["docs"].item(), z["qs"].item()
            self.dense[e] = {cid: (docs[cid][0], qs[cid] @ docs[cid][1].T) for cid in docs}

    def run(self, ranker):
        rows = []
        for cid, qi, q in self.qs:
            rows.append((q["category"], exp.first_rank(ranker(cid, qi), set(q["evidence"]))))
        return exp.metrics(rows, self.cats)

    def recall_at(self, ranker, ks=(10, 20, 30, 50)):
        out = {}
        for k in ks:
            n = h = 0
            for cid, qi, q in self.qs:
                if q["category"] not in self.cats:
                    continue
                n += 1
                h += bool(set(ranker(cid, qi)[:k]) & set(q["evidence"]))
            out[k] = h / n
        return out

    # ---- rankers
    def r_bm25(self, cid, qi):
        seen, out = set(), []
        for ts, _ in self.bm[cid][qi]:
            for t in ts:
                if t not in seen:
                    seen.add(t); out.append(t)
        return out

    def r_mira(self, cid, qi):
        seen, out = set(), []
        for ts in self.mira[cid][qi]:
            for t in ts:
                if t not in seen:
                    seen.add(t); out.append(t)
        return out

    def r_dense(self, e, cid, qi, n=200):
        dias, S = self.dense[e][cid]
        return [dias[j] for j in np.argsort(-S[qi])[:n]]

    def r_rrf(self, parts, k=60):
        """parts: list of (ranker, weight)"""
        def fn(cid, qi):
            sc = {}
            for r, w in parts:
                if w == 0:
                    continue
                for i, t in enumerate(r(cid, qi)):
                    sc[t] = sc.get(t, 0.0) + w / (k + i + 1)
            return [t for t, _ in sorted(sc.items(), key=lambda x: -x[1])]
        return fn

    def r_convex(self, e, a, e2=None, b=0.0):
        """score = a * bm25/max(bm25) + (1-a) * cos(e) [+ b * cos(e2)] over all turns"""
        def fn(cid, qi):
            dias, S = self.dense[e][cid]
            s = (1 - a) * S[qi].copy()
            if e2:
                dias2, S2 = self.dense[e2][cid]
                s += b * S2[qi]
            bl = self.bm[cid][qi]
            if bl:
                mx = max(x for _, x in bl) or 1.0
                idx = {d: j for j, d in enumerate(dias)}
                for ts, x in bl:
                    for t in ts:
                        if t in idx:
                            s[idx[t]] += a * x / mx
            return [dias[j] for j in np.argsort(-s)[:100]]
        return fn


def table(title, rows, cats):
    print(f"\n### {title}\n")
    print("| variant | " + " | ".join(f"{c} h@5" for c in cats) + " | h@1 | **h@5** | h@10 | MRR@10 |")
    print("|---" * (len(cats) + 5) + "|")
    for name, r in rows:
        o = r["overall"]
        print(f"| {name} | " + " | ".join(f"{r[c]['hit5']:.3f}" if r.get(c) else "-" for c in cats)
              + f" | {o['hit1']:.3f} | **{o['hit5']:.3f}** | {o['hit10']:.3f} | {o['mrr']:.3f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--chunk", default="chunk3")
    a = ap.parse_args()
    e = a.embedder
    et, ec = f"{e}-turn", f"{e}-{a.chunk}"
    dev, loc = DS("dev", [et, ec]), DS("locomo", [et, ec])
    print(f"## {e}: fusion tuned on dev, applied to LoCoMo\n")
    has_chunk = ec in dev.dense and ec in loc.dense
    # grid on dev
    grid = []
    for wt, wc, k in itertools.product([0, 0.5, 1, 1.5, 2, 3, 4], [0, 0.5, 1, 2] if has_chunk else [0], [10, 30, 60]):
        grid.append(("rrf", wt, wc, k))
    for al, b in itertools.product([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0, 0.3, 0.5] if has_chunk else [0]):
        grid.append(("convex", al, b, 0))

    def build(d, g):
        kind, x, y, k = g
        if kind == "rrf":
            parts = [(d.r_bm25, 1.0), (lambda c, q: d.r_dense(et, c, q), x)]
            if y:
                parts.append((lambda c, q: d.r_dense(ec, c, q), y))
            return d.r_rrf(parts, k)
        return d.r_convex(et, x, ec if y else None, y)

    def name(g):
        kind, x, y, k = g
        if kind == "rrf":
            return f"RRF k={k}: bm25 1, {et} {x}" + (f", {ec} {y}" if y else "")
        return f"convex: {x}·bm25/max + {1 - x:.1f}·cos({et})" + (f" + {y}·cos({ec})" if y else "")

    dres = {g: dev.run(build(dev, g)) for g in grid}
    best = sorted(grid, key=lambda g: -dres[g]["overall"]["hit5"])[:5]
    lres = {g: loc.run(build(loc, g)) for g in grid}
    lbest = sorted(grid, key=lambda g: -lres[g]["overall"]["hit5"])[:2]
    jbest = sorted(grid, key=lambda g: -(dres[g]["overall"]["hit5"] + lres[g]["overall"]["hit5"]))[:2]
    base = [("Mira default build (top-30 via MCP)", "mira"), ("BM25 replay ('all')", "bm25"), (f"dense {et}", "dt")]
    if has_chunk:
        base.append((f"dense {ec}", "dc"))
    for d, title in ((dev, "dev (tuning set)"), (loc, "LoCoMo categories 1-4 (held out: dev-best configs)")):
        rows = []
        for n, kind in base:
            r = {"mira": d.r_mira, "bm25": d.r_bm25, "dt": lambda c, q: d.r_dense(et, c, q), "dc": lambda c, q: d.r_dense(ec, c, q)}[kind]
            rows.append((n, d.run(r)))
        for g in best[:3]:
            rows.append(("dev-best: " + name(g), dres[g] if d is dev else lres[g]))
        for g in jbest:
            rows.append(("joint-best (mean of both; optimistic): " + name(g), dres[g] if d is dev else lres[g]))
        if d is loc:
            for g in lbest:
                rows.append(("LoCoMo-best (optimistic): " + name(g), lres[g]))
        table(title, rows, d.cats)
    # candidate ceilings
    print("\n### candidate-set recall (any evidence turn in the top N): the ceiling of a reranker over the top N\n")
    print("| set | first stage | R@10 | R@20 | R@30 | R@50 |\n|---|---|---|---|---|---|")
    for d in (dev, loc):
        for n, r in (("Mira default", d.r_mira), ("BM25 replay", d.r_bm25), (f"dense {et}", lambda c, q: d.r_dense(et, c, q)),
                     ("dev-best fusion", build(d, best[0]))):
            rc = d.recall_at(r)
            print(f"| {d.ds} | {n} | " + " | ".join(f"{rc[k]:.3f}" for k in (10, 20, 30, 50)) + " |")
    json.dump({"dev_best": [name(g) for g in best], "dev": {name(g): dres[g] for g in grid}, "locomo": {name(g): lres[g] for g in grid}},
              open(HERE / "out" / f"analyze-{e}.json", "w"), indent=0)


if __name__ == "__main__":
    main()
