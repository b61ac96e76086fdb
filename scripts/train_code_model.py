#!/usr/bin/env python3
"""Trains the built-in code-search tables: a static two-tower model, one table for the
question and one for the code, over bert-base-uncased's word pieces.

A text's vector is the normalised sum of its pieces' rows (as `src/embed/builtin.rs` reads
them). Both tables start from the built-in memory table (`assets/embed/static.bin`, distilled
from all-MiniLM-L6-v2), then learn from doc → function pairs: the first sentence of a
function's doc comment is its question, and the function's chunk with the doc comments
removed is its code (`examples/code_pairs.rs` writes both as the index sees them). The loss
is the symmetric in-batch contrastive one (InfoNCE), with batches drawn from one crate at a
time so that the other functions of a batch are the ones a search must tell apart; an L2
pull towards the starting table keeps pieces the pairs rarely show where MiniLM put them.

    python3 scripts/train_code_model.py TRAIN.jsonl DEV.jsonl assets/embed/static.bin OUT_DIR
        [--epochs N] [--lr X] [--tau X] [--batch N] [--pull X] [--fixed-query] [--seed N]

Prints vector-only hit@1/5/10 and MRR@10 on DEV (every chunk of DEV's crates is a
candidate, as in examples/code_eval.rs) before training and after each epoch, then writes
OUT_DIR/code-query.bin and OUT_DIR/code-chunk.bin in the MST1 layout of static.bin (the
epoch with the best dev MRR). numpy and scipy only; a few minutes on 2 cores.
"""

import argparse
import json
import struct
import sys
import time
from collections import defaultdict

import numpy as np
import scipy.sparse as sp


def read_table(path):
    b = open(path, "rb").read()
    assert b[:4] == b"MST1", "not a MST1 table"
    n, dim = struct.unpack_from("<II", b, 4)
    scale = np.frombuffer(b, dtype="<f4", count=n, offset=12)
    rows = np.frombuffer(b, dtype=np.int8, count=n * dim, offset=12 + 4 * n).reshape(n, dim)
    return rows.astype(np.float32) * scale[:, None]


def write_table(path, m):
    n, dim = m.shape
    peak = np.abs(m).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype("<f4")
    rows = np.clip(np.rint(m / scale[:, None]), -127, 127).astype(np.int8)
    with open(path, "wb") as f:
        f.write(b"MST1")
        f.write(struct.pack("<II", n, dim))
        f.write(scale.tobytes())
        f.write(rows.tobytes())


def load(path):
    return [(o["crate"], o["chunk"], o["query"]) for o in map(json.loads, open(path))]


def bag(seqs, vocab):
    """Counts of each piece per text, as a CSR matrix (texts × vocab)."""
    indptr, indices = [0], []
    for s in seqs:
        indices.extend(s)
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float32)
    m = sp.csr_matrix((data, np.array(indices, dtype=np.int64), np.array(indptr)), shape=(len(seqs), vocab))
    m.sum_duplicates()
    return m


def unit(u):
    n = np.linalg.norm(u, axis=1, keepdims=True)
    return u / np.maximum(n, 1e-9), n


def evaluate(Q, C, dev, vocab):
    crates = defaultdict(list)
    for i, (c, _, _) in enumerate(dev):
        crates[c].append(i)
    chunks, _ = unit(bag([d[1] for d in dev], vocab) @ C)
    qi = [i for i, d in enumerate(dev) if d[2]]
    qs, _ = unit(bag([dev[i][2] for i in qi], vocab) @ Q)
    scores = qs @ chunks.T
    target = scores[np.arange(len(qi)), qi]
    rank = (scores > target[:, None]).sum(axis=1)
    h = lambda k: float((rank < k).mean())
    mrr = float(np.where(rank < 10, 1.0 / (rank + 1), 0.0).mean())
    return h(1), h(5), h(10), mrr, len(qi)


class Adam:
    def __init__(self, shape, lr):
        self.m = np.zeros(shape, np.float32)
        self.v = np.zeros(shape, np.float32)
        self.t = 0
        self.lr = lr

    def step(self, w, g, rows):
        # Lazy Adam: only the rows this batch touched move (the rest have no gradient).
        self.t += 1
        b1, b2 = 0.9, 0.999
        m, v = self.m[rows], self.v[rows]
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        self.m[rows], self.v[rows] = m, v
        mh = m / (1 - b1**self.t)
        vh = v / (1 - b2**self.t)
        w[rows] -= self.lr * mh / (np.sqrt(vh) + 1e-8)


def batches(train, size, rng):
    """Shuffled batches, each from one crate where the crate is big enough."""
    by_crate = defaultdict(list)
    for i, (c, _, _) in enumerate(train):
        by_crate[c].append(i)
    out, rest = [], []
    for ids in by_crate.values():
        ids = list(rng.permutation(ids))
        while len(ids) >= size // 4:
            out.append(ids[:size])
            ids = ids[size:]
        rest.extend(ids)
    rest = list(rng.permutation(rest))
    out.extend(rest[i : i + size] for i in range(0, len(rest), size))
    rng.shuffle(out)
    return [b for b in out if len(b) > 1]


def train_step(Q, C, Q0, C0, opt_q, opt_c, xq, xc, tau, pull, fixed_query):
    uq, nq = unit(xq @ Q)
    uc, nc = unit(xc @ C)
    s = uq @ uc.T / tau
    b = s.shape[0]
    p_row = np.exp(s - s.max(axis=1, keepdims=True))
    p_row /= p_row.sum(axis=1, keepdims=True)
    p_col = np.exp(s - s.max(axis=0, keepdims=True))
    p_col /= p_col.sum(axis=0, keepdims=True)
    eye = np.eye(b, dtype=np.float32)
    loss = -0.5 * (np.log(np.diag(p_row) + 1e-12).mean() + np.log(np.diag(p_col) + 1e-12).mean())
    ds = ((p_row - eye) + (p_col - eye)) / (2 * b * tau)
    for (x, u, n, other, w, w0, opt, grad_of) in (
        (xq, uq, nq, uc, Q, Q0, opt_q, ds),
        (xc, uc, nc, uq, C, C0, opt_c, ds.T),
    ):
        if fixed_query and w is Q:
            continue
        du = grad_of @ other
        du = (du - u * (du * u).sum(axis=1, keepdims=True)) / n
        xt = x.T.tocsr()
        rows = np.unique(x.indices)
        g = (xt[rows] @ du).astype(np.float32)
        g += pull * (w[rows] - w0[rows])
        opt.step(w, g, rows)
    return loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("dev")
    ap.add_argument("init")
    ap.add_argument("out")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--tau", type=float, default=0.05)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--pull", type=float, default=0.0)
    ap.add_argument("--fixed-query", action="store_true")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cap", type=int, default=5000, help="pairs per crate at most")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    base = read_table(a.init)
    vocab = base.shape[0]
    train, per_crate = [], defaultdict(int)
    for t in load(a.train):
        # A crate with thousands of documented functions would otherwise teach its own words.
        if t[2] and per_crate[t[0]] < a.cap:
            per_crate[t[0]] += 1
            train.append(t)
    dev = load(a.dev)
    print(f"{len(train)} training pairs; dev {sum(1 for d in dev if d[2])} queries over {len(dev)} chunks", flush=True)
    Q, C = base.copy(), base.copy()
    print("start        hit@1 %.3f  hit@5 %.3f  hit@10 %.3f  MRR@10 %.3f  (n %d)" % evaluate(Q, C, dev, vocab), flush=True)
    opt_q, opt_c = Adam(Q.shape, a.lr), Adam(C.shape, a.lr)
    best = (-1.0, None)
    for epoch in range(1, a.epochs + 1):
        t0, losses = time.time(), []
        for ids in batches(train, a.batch, rng):
            xq = bag([train[i][2] for i in ids], vocab)
            xc = bag([train[i][1] for i in ids], vocab)
            losses.append(train_step(Q, C, base, base, opt_q, opt_c, xq, xc, a.tau, a.pull, a.fixed_query))
        r = evaluate(Q, C, dev, vocab)
        print(f"epoch {epoch:>2} loss {np.mean(losses):.3f}  " + "hit@1 %.3f  hit@5 %.3f  hit@10 %.3f  MRR@10 %.3f  (n %d)" % r + f"  {time.time() - t0:.0f} s", flush=True)
        if r[3] > best[0]:
            best = (r[3], (Q.copy(), C.copy(), epoch))
    Qb, Cb, epoch = best[1]
    write_table(f"{a.out}/code-query.bin", Qb)
    write_table(f"{a.out}/code-chunk.bin", Cb)
    print(f"wrote epoch {epoch} (dev MRR@10 {best[0]:.3f}) to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
