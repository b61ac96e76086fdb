"""Reduces the raw distillation (examples/distill_static.rs) to the built-in table.

Per word piece: the mean of its in-context MiniLM outputs, shrunk towards its output alone
when the corpus saw it rarely; then PCA to DIM (centred: the mean direction that every
MiniLM output shares carries no meaning), a SIF weight from the piece's estimated frequency
(frequent pieces such as "the" or "##s" say little), and int8 rows with one f32 scale each.

Writes OUT/static.bin: b"MST1", vocab u32, dim u32, scale f32[vocab], row i8[vocab*dim]
(little-endian), and copies vocab.txt beside it.
"""
import shutil
import sys

import numpy as np

DIM = 256
PRIOR = 2.0  # occurrences' worth of weight given to the piece alone
SIF_A = 1e-3

raw, vocab_path, out = sys.argv[1:4]
b = open(raw, "rb").read()
assert b[:4] == b"MDST"
v, d = np.frombuffer(b[4:12], dtype="<u4")
v, d = int(v), int(d)
o = 12
alone = np.frombuffer(b[o:o + v * d * 4], dtype="<f4").reshape(v, d).astype(np.float64)
o += v * d * 4
ctx = np.frombuffer(b[o:o + v * d * 4], dtype="<f4").reshape(v, d).astype(np.float64)
o += v * d * 4
count = np.frombuffer(b[o:o + v * 4], dtype="<u4").astype(np.float64)

emb = (ctx + PRIOR * alone) / (count + PRIOR)[:, None]
mean = emb.mean(axis=0)
centred = emb - mean
_, s, vt = np.linalg.svd(centred, full_matrices=False)
explained = (s[:DIM] ** 2).sum() / (s ** 2).sum()
reduced = centred @ vt[:DIM].T

# BERT's vocabulary lists whole words roughly by frequency from id 1996 on (model2vec relies
# on the same): a Zipf estimate from the rank knows conversational words that a code corpus
# never shows, which a corpus count would weight as if they were rare.
rank = np.maximum(np.arange(v) - 1995, 1).astype(np.float64)
p = 1.0 / (rank * np.log(v))
weight = SIF_A / (SIF_A + p)
rows = reduced * weight[:, None]

scale = np.abs(rows).max(axis=1) / 127.0
scale[scale == 0] = 1.0
q = np.clip(np.rint(rows / scale[:, None]), -127, 127).astype(np.int8)

with open(f"{out}/static.bin", "wb") as f:
    f.write(b"MST1")
    f.write(np.array([v, DIM], dtype="<u4").tobytes())
    f.write(scale.astype("<f4").tobytes())
    f.write(q.tobytes())
shutil.copy(vocab_path, f"{out}/vocab.txt")
seen = int((count > 0).sum())
print(f"static.bin: {v} pieces x {DIM} dims (PCA keeps {explained:.3f} of the variance), "
      f"{seen} pieces seen in context, {int(count.sum())} occurrences", file=sys.stderr)
