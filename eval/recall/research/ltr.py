#!/usr/bin/env python3
"""A learned fusion ("feature reranker", no neural reranker weights needed).

Candidates per question: union of the BM25-replay top 50 and each dense ranking's top 50.
Features per (question, turn): BM25 score (normalised by the question's max) and reciprocal rank,
cosine and per-question z-score for each embedding variant, the same for the previous/next turn of
the same session (neighbour evidence), "turn speaker is named in the question", log length.
Model: logistic regression (scikit-learn), trained on one set, scored on the other; also 5-fold
cross-validation by conversation inside LoCoMo (what a LoCoMo-like training set could give).
Cost at query time: a dot product over ~100 candidates x ~20 features (microseconds).

  ~/.cache/mira/research-venv/bin/python ltr.py --embs minilm-turn,minilm-chunk3,e5q4-turn,e5q4-chunk3
"""
import argparse, math, re, sys
from pathlib import Path
import numpy as np
from sklearn.linear_model import LogisticRegression

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import exp  # noqa
from analyze import DS  # noqa


def features(d: DS, embs):
    """returns list of (conv id, category, evidence set, cand turn list, X matrix)"""
    out = []
    names_by_conv = {}
    for c in d.convs:
        spk = {}
        nb = {}
        for _, ts in c["sessions"]:
            for i, (dia, s, text) in enumerate(ts):
                spk[dia] = (s.lower(), len(text.split()))
                nb[dia] = (ts[i - 1][0] if i > 0 else None, ts[i + 1][0] if i + 1 < len(ts) else None)
        names_by_conv[c["id"]] = (spk, nb, {n for s, _ in spk.values() for n in s.split()})
    for cid, qi, q in d.qs:
        spk, nb, names = names_by_conv[cid]
        bl = d.bm[cid][qi]
        mx = max([x for _, x in bl], default=1.0) or 1.0
        bms, bmr = {}, {}
        for r, (ts, x) in enumerate(bl):
            for t in ts:
                bms.setdefault(t, x / mx); bmr.setdefault(t, 1.0 / (r + 1))
        cand = list(bms)[:50]
        dense = {}
        for e in embs:
            dias, S = d.dense[e][cid]
            s = S[qi]
            z = (s - s.mean()) / (s.std() + 1e-9)
            idx = {t: j for j, t in enumerate(dias)}
            order = np.argsort(-s)
            rank = np.empty(len(s), dtype=np.int64); rank[order] = np.arange(1, len(s) + 1)
            dense[e] = (idx, s, z, rank)
            cand += [dias[j] for j in order[:50]]
        seen = set(); cand = [t for t in cand if not (t in seen or seen.add(t))]
        named = {w for w in re.findall(r"\w+", q["question"].lower()) if w in names}
        X = []
        for t in cand:
            p, n = nb.get(t, (None, None))
            f = [bms.get(t, 0.0), bmr.get(t, 0.0), max(bms.get(p, 0.0) if p else 0.0, bms.get(n, 0.0) if n else 0.0)]
            for e in embs:
                idx, s, z, rank = dense[e]
                j = idx[t]
                zp = z[idx[p]] if p in idx else -3.0
                zn = z[idx[n]] if n in idx else -3.0
                f += [s[j], z[j], 1.0 / rank[j], max(zp, zn)]
            sp, ln = spk.get(t, ("", 1))
            f += [1.0 if any(x in sp.split() for x in named) else 0.0, 1.0 if named else 0.0, math.log(1 + ln)]
            X.append(f)
        X = np.array(X, dtype=np.float32).reshape(len(cand), -1) if cand else np.zeros((0, 6 + 4 * len(embs)), dtype=np.float32)
        out.append((cid, q["category"], set(q["evidence"]), cand, X))
    return out


def train(rows):
    X = np.concatenate([r[4] for r in rows])
    y = np.concatenate([[1 if t in r[2] else 0 for t in r[3]] for r in rows])
    m = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced")
    mu, sd = X.mean(0), X.std(0) + 1e-9
    m.fit((X - mu) / sd, y)
    return m, mu, sd


def score(model, rows, cats):
    m, mu, sd = model
    res = []
    for cid, cat, ev, cand, X in rows:
        p = m.decision_function((X - mu) / sd) if len(cand) else np.zeros(0)
        ranked = [cand[j] for j in np.argsort(-p)]
        res.append((cat, exp.first_rank(ranked, ev)))
    return exp.metrics(res, cats)


def line(name, r, cats):
    o = r["overall"]
    return (f"| {name} | " + " | ".join(f"{r[c]['hit5']:.3f}" if r.get(c) else "-" for c in cats)
            + f" | {o['hit1']:.3f} | **{o['hit5']:.3f}** | {o['hit10']:.3f} | {o['mrr']:.3f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--embs", default="minilm-turn,minilm-chunk3,e5q4-turn,e5q4-chunk3")
    a = ap.parse_args()
    embs = [e for e in a.embs.split(",") if e]
    dev, loc = DS("dev", embs), DS("locomo", embs)
    fd, fl = features(dev, embs), features(loc, embs)
    print(f"\n### learned fusion (logistic regression), signals: BM25 replay + {', '.join(embs)}\n")
    for d, rows, other, title in ((loc, fl, fd, "LoCoMo 1-4"), (dev, fd, fl, "dev")):
        print(f"\n{title}\n\n| model | " + " | ".join(f"{c} h@5" for c in d.cats) + " | h@1 | **h@5** | h@10 | MRR@10 |")
        print("|---" * (len(d.cats) + 5) + "|")
        m = train(other)
        print(line(f"trained on the {'dev set' if d is loc else 'LoCoMo'} only (held out)", score(m, rows, d.cats), d.cats))
        # 5-fold by conversation
        convs = sorted({r[0] for r in rows})
        folds = [convs[i::5] for i in range(5)]
        res_rows = []
        for f in folds:
            tr = [r for r in rows if r[0] not in f]
            te = [r for r in rows if r[0] in f]
            mm = train(tr)
            mm_, mu, sd = mm
            for cid, cat, ev, cand, X in te:
                p = mm_.decision_function((X - mu) / sd) if len(cand) else np.zeros(0)
                res_rows.append((cat, exp.first_rank([cand[j] for j in np.argsort(-p)], ev)))
        print(line("5-fold CV by conversation within this set", exp.metrics(res_rows, d.cats), d.cats))
        m2 = train(other + [r for r in rows if r[0] in convs[: len(convs) // 2]])
        te = [r for r in rows if r[0] in convs[len(convs) // 2:]]
        print(line(f"trained on the other set + first half of this set, scored on the second half ({len(te)} q)", score(m2, te, d.cats), d.cats))
        if d is loc:
            fn = ["bm25", "bm25 1/rank", "bm25 nbr max"] + [f"{e} {k}" for e in embs for k in ("cos", "z", "1/rank", "nbr z max")] + ["speaker named", "question names someone", "log len"]
            mm, mu, sd = train(rows)
            print("\ncoefficients (standardised features), fit on all of LoCoMo: " + ", ".join(f"{n} {c:+.2f}" for n, c in zip(fn, mm.coef_[0])))
        cr = np.mean([bool(set(r[3]) & r[2]) for r in rows if r[1] in d.cats])
        print(f"\ncandidate recall (union of top-50s): {cr:.3f}")


if __name__ == "__main__":
    main()
