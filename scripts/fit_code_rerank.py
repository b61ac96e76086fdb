#!/usr/bin/env python3
"""Fits the weights of code search's reranker (src/index/rerank.rs) on candidates dumped by
`examples/code_eval.rs --dump`: per question, BM25's list (60) and the built-in code model's
(32) with their scores, and what each candidate is. Features here and in rerank.rs must
agree; the Rust tests pin the splitting and stemming.

    python3 scripts/fit_code_rerank.py DEV.jsonl [HELD_OUT.jsonl] [--cv]

A softmax over each question's candidates (the target's log-likelihood, L2 1e-2, Adam),
fitted on DEV; `--cv` first prints leave-one-crate-out figures on DEV. Prints hit@1/5/10 and
MRR@10 for weighted RRF (bm25 1, vector 1, k 10: today's CodeWeights) and for the model,
then the weights divided by each feature's deviation, as rerank.rs's WEIGHTS. First it checks
that rerank.rs, with the weights it holds now, orders each dev question as these features
would (the dump's `found` is what `search::search` returned). numpy only.
"""

import json
import math
import pathlib
import re
import sys

import numpy as np

STOP = set("a an the of to in for and or is are be by with from this that it its as on at if "
           "into when which whose returns return given new".split())
BM25_N, VEC_N = 60, 32
NAMES = ("in_bm25 bm25_rrf bm25_rel bm25_log_rank in_vec vec_rrf dot dot_gap dot_z "
         "vec_log_rank name_share name_hits container_share file_share log_lines test").split()


def split_identifier(word):
    """text::split_identifier."""
    parts, cur = [], ""
    for i, c in enumerate(word):
        if c == "_":
            if cur:
                parts.append(cur)
            cur = ""
            continue
        if i > 0:
            p = word[i - 1]
            nxt = word[i + 1] if i + 1 < len(word) else ""
            if (p.islower() and c.isupper()) or (p.isalpha() and c.isnumeric()) or \
               (p.isnumeric() and c.isalpha()) or (p.isupper() and c.isupper() and nxt.islower()):
                if cur:
                    parts.append(cur)
                cur = ""
        cur += c.lower()
    if cur:
        parts.append(cur)
    return parts


def parts(s):
    """text::words, then split_identifier on each."""
    out = []
    for w in "".join(ch if (ch.isalnum() or ch == "_") else " " for ch in s).split():
        out += split_identifier(w)
    return out


def stem(w):
    for suf in ("ing", "ies", "es", "ed", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)]
    return w


def question(q):
    return [stem(w) for w in parts(q) if w not in STOP]


def names(qs, text):
    ps = parts(text)
    if not ps:
        return 0.0, 0
    hit = 0
    for p in map(stem, ps):
        if any(p == w or (len(p) >= 4 and len(w) >= 4 and p[:4] == w[:4]) for w in qs):
            hit += 1
    return hit / len(ps), hit


def features(o):
    q = question(o["query"])
    bm = o["bm25"][:BM25_N]
    vec = o["vector"][:VEC_N]
    brank = {i: r + 1 for r, (i, _) in enumerate(bm)}
    bscore = dict(bm)
    vrank = {i: r + 1 for r, (i, _) in enumerate(vec)}
    vscore = dict(vec)
    btop = bm[0][1] if bm else -1.0
    vtop = vec[0][1] if vec else 0.0
    if vec:
        vs = [s for _, s in vec]
        vmean = sum(vs) / len(vs)
        vsd = math.sqrt(sum((s - vmean) ** 2 for s in vs) / len(vs)) + 1e-6
    else:
        vmean, vsd = 0.0, 1.0
    ids = sorted(set(brank) | set(vrank))
    rows = []
    for i in ids:
        c = o["cand"][str(i)]
        rb, rv = brank.get(i), vrank.get(i)
        file = c["path"].rsplit("/", 1)[-1]
        name_share, name_hits = names(q, c["name"])
        rows.append([
            1.0 if rb else 0.0,
            10.0 / (10 + rb) if rb else 0.0,
            bscore[i] / btop if rb and btop else 0.0,
            math.log(rb) if rb else math.log(150),
            1.0 if rv else 0.0,
            10.0 / (10 + rv) if rv else 0.0,
            vscore[i] if rv else vmean - 2 * vsd,
            vscore[i] - vtop if rv else -1.0,
            (vscore[i] - vmean) / vsd if rv else -2.5,
            math.log(rv) if rv else math.log(60),
            name_share,
            min(name_hits, 3),
            names(q, c["container"] or "")[0],
            names(q, file.rsplit(".", 1)[0])[0],
            math.log(1 + c["lines"]),
            1.0 if ("test" in file or c["name"].startswith("test")) else 0.0,
        ])
    return ids, np.array(rows, dtype=np.float64)


def load(path):
    out = []
    for line in open(path):
        o = json.loads(line)
        ids, x = features(o)
        out.append((o["crate"], o["target"], ids, x, o))
    return out


def rrf(o, k=10.0):
    s = {}
    for lst in (o["bm25"][:BM25_N], o["vector"][:VEC_N]):
        for r, (i, _) in enumerate(lst):
            s[i] = s.get(i, 0) + 1 / (k + r + 1)
    return [i for i, _ in sorted(s.items(), key=lambda x: (-x[1], x[0]))]


def score(ranked, targets):
    h1 = h5 = h10 = mrr = 0.0
    for r, t in zip(ranked, targets):
        if t in r[:10]:
            p = r.index(t)
            h1 += p < 1
            h5 += p < 5
            h10 += p < 10
            mrr += 1 / (p + 1)
    n = len(targets)
    return f"hit@1 {h1 / n:.3f}  hit@5 {h5 / n:.3f}  hit@10 {h10 / n:.3f}  MRR@10 {mrr / n:.3f}"


def fit(data, l2=1e-2, iters=300, lr=0.1):
    allx = np.vstack([x for *_, x, _ in data])
    mu, sd = allx.mean(0), allx.std(0) + 1e-9
    qs = [((x - mu) / sd, ids.index(t)) for _, t, ids, x, _ in data if t in ids]
    w = np.zeros(len(mu))
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for it in range(1, iters + 1):
        g = l2 * w
        for xn, ti in qs:
            z = xn @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            g += (xn.T @ p - xn[ti]) / len(qs)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= lr * (m / (1 - 0.9 ** it)) / (np.sqrt(v / (1 - 0.999 ** it)) + 1e-8)
    return w / sd


def rank(a, ids, x):
    return [ids[i] for i in np.argsort(-(x @ a), kind="stable")]


def committed_weights():
    src = (pathlib.Path(__file__).parent.parent / "src/index/rerank.rs").read_text()
    block = src[src.index("const WEIGHTS"):]
    block = block[block.index("[") + 1:block.index("];")]
    return np.array([float(x) for x in re.findall(r"^\s*(-?[0-9.]+),", block, re.M)])


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    dev = load(args[0])
    dt = [t for _, t, *_ in dev]
    now = committed_weights()
    # One-word queries are ranked by RRF in Mira, not by the model.
    asked = [d for d in dev if len(d[4]["query"].split()) > 1 and d[4]["vector"]]
    differ = sum(rank(now, d[2], d[3])[:10] != d[4]["found"] for d in asked)
    print(f"rerank.rs's weights: {len(asked) - differ} of {len(asked)} dev questions ordered "
          f"as here{'' if differ == 0 else '  *** Rust and these features disagree'}")
    print(f"dev {len(dev)}: target among the candidates "
          f"{sum(t in ids for _, t, ids, *_ in dev) / len(dev):.3f}")
    print(f"  weighted RRF        {score([rrf(o) for *_, o in dev], dt)}")
    if "--cv" in sys.argv:
        ranked = [None] * len(dev)
        for c in sorted({c for c, *_ in dev}):
            a = fit([d for d in dev if d[0] != c], iters=200)
            for i, d in enumerate(dev):
                if d[0] == c:
                    ranked[i] = rank(a, d[2], d[3])
        print(f"  model, by crate CV  {score(ranked, dt)}")
    a = fit(dev)
    print(f"  model, fitted here  {score([rank(a, d[2], d[3]) for d in dev], dt)}")
    if len(args) > 1:
        ho = load(args[1])
        ht = [t for _, t, *_ in ho]
        print(f"held out {len(ho)}:")
        print(f"  weighted RRF        {score([rrf(o) for *_, o in ho], ht)}")
        print(f"  model               {score([rank(a, d[2], d[3]) for d in ho], ht)}")
    print("const WEIGHTS: [f64; 16] = [")
    for n, x in zip(NAMES, a):
        print(f"    {x:.6},  // {n}")
    print("];")


if __name__ == "__main__":
    main()
