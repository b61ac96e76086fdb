#!/usr/bin/env python3
"""What-if for lexical recall, without building Mira: replays Mira's BM25 recall (an FTS5
table with `porter unicode61`, `bm25(memories_fts, 1.0, 0.6)`, the query built like
`src/text.rs::fts_terms`: words split on non-alphanumerics, Mira's stop list, identifiers
split, all OR-ed) in Python's own SQLite, then tries variants that need no model:

  base        Mira as it is (should reproduce memory_eval.py's figures closely)
  stop+       also drop third-person pronouns, the "s"/"t" left by apostrophes ("Mila's" ->
              "mila" "s", which matches every "it's"/"let's"), and a few chat verbs
  noname      the speaker prefix moved out of the indexed text, and the speakers' names
              dropped from the query (a name is in over half of a chat's turns, so its IDF
              is ~0, but it still drags in short turns of the other speaker)
  speaker     noname + a tie-breaking boost for turns spoken by the person the question names
  window      each turn indexed with its neighbours (previous and next turn of the same
              session) in a second column weighted 0.3: LoCoMo often asks with the words of
              the question turn and marks the answer turn as evidence
  all         stop+ + speaker + window

  python3 eval/recall/bm25_whatif.py --dataset locomo --locomo ~/.cache/mira/locomo/locomo10.json
  python3 eval/recall/bm25_whatif.py --dataset dev

Python's SQLite must have FTS5 (CPython's usually does). Estimates only: the real thing is
`scripts/eval-recall` against a built binary.
"""
import argparse
import re
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import memory_eval as me  # noqa: E402

MIRA_STOP = set("""a about an and are as at be by can could did do does for from had has have how i if in is it its
me my of on or our remember should so tell that the their there these this to us was we were what when where which
who why will with would you your""".split())
MORE_STOP = set("""her hers herself his him himself she he they them themselves s t d ll re ve m
get got gets getting go going went like kind any some something thing things""".split())


def split_identifier(w):
    parts, cur = [], ""
    for i, c in enumerate(w):
        if c == "_":
            if cur:
                parts.append(cur)
            cur = ""
            continue
        if i > 0:
            p = w[i - 1]
            n = w[i + 1] if i + 1 < len(w) else ""
            if ((p.islower() and c.isupper()) or (p.isalpha() and c.isdigit()) or (p.isdigit() and c.isalpha())
                    or (p.isupper() and c.isupper() and n.islower())):
                if cur:
                    parts.append(cur)
                cur = ""
        cur += c.lower()
    if cur:
        parts.append(cur)
    return parts


def fts_terms(text, stop, drop=()):
    terms = []
    for w in re.split(r"[^\w]+", text):
        if not w:
            continue
        lw = w.lower()
        if lw in drop:
            continue
        parts = split_identifier(w)
        if len(parts) >= 2:
            cands = [lw.replace("_", "")] + parts
        elif lw not in stop:
            cands = [lw]
        else:
            cands = []
        for t in cands:
            if t not in terms:
                terms.append(t)
    return ['"' + t.replace('"', '""') + '"' for t in terms]


def run(convs, variant, k=10, ctx_w=0.3, boost_f=1.15):
    stop = MIRA_STOP | (MORE_STOP if variant in ("stop+", "all") else set())
    noname = variant in ("noname", "speaker", "all")
    window = variant in ("window", "all")
    boost = variant in ("speaker", "all")
    res = []
    for c in convs:
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(body, ctx, tokenize='porter unicode61')")
        turns = []
        for _, ts in c["sessions"]:
            for i, (dia, spk, text) in enumerate(ts):
                prev = ts[i - 1][2] if i > 0 else ""
                nxt = ts[i + 1][2] if i + 1 < len(ts) else ""
                turns.append((dia, spk, text, prev + " " + nxt))
        # Mira merges identical bodies: keep the first id for a repeated text
        seen = {}
        id2turns = {}
        rows = []
        for dia, spk, text, ctx in turns:
            body = text if noname else f"{spk}: {text}"
            key = body.strip().lower()
            if key in seen:
                id2turns[seen[key]].append(dia)
                continue
            rid = len(rows) + 1
            seen[key] = rid
            id2turns[rid] = [dia]
            rows.append((rid, body, ctx if window else "", spk))
        db.executemany("INSERT INTO t(rowid, body, ctx) VALUES (?,?,?)", [r[:3] for r in rows])
        spk_of = {r[0]: r[3] for r in rows}
        names = {n.lower() for r in rows for n in r[3].split()}
        for q in c["qa"]:
            if not q["evidence"]:
                continue
            terms = fts_terms(q["question"], stop, names if noname else ())
            ids = []
            if terms:
                wctx = ctx_w if window else 0.0
                got = db.execute(f"SELECT rowid, bm25(t, 1.0, {wctx}) FROM t WHERE t MATCH ? ORDER BY bm25(t, 1.0, {wctx}), rowid LIMIT 50",
                                 (" OR ".join(terms),)).fetchall()
                if boost:
                    named = {n for n in re.findall(r"\w+", q["question"].lower()) if n in names}
                    # bm25() is negative, lower is better: scale the named speaker's turns up by 15%
                    got = sorted(got, key=lambda r: r[1] * (boost_f if any(x in spk_of[r[0]].lower().split() for x in named) else 1.0))
                ids = [r[0] for r in got[:k]]
            ev = set(q["evidence"])
            first = next((i + 1 for i, rid in enumerate(ids) if ev & set(id2turns[rid])), None)
            res.append((q["category"], first))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", choices=["dev", "locomo"], default="dev")
    ap.add_argument("--dev", default=str(Path(__file__).resolve().parent / "dev.jsonl"))
    ap.add_argument("--locomo")
    ap.add_argument("--variants", default="base,stop+,noname,speaker,window,all")
    ap.add_argument("--ctx-weight", type=float, default=0.3, help="weight of the neighbours column (window, all)")
    ap.add_argument("--boost", type=float, default=1.15, help="score factor for the named speaker's turns (speaker, all)")
    args = ap.parse_args()
    if args.dataset == "dev":
        convs = me.load_dev(args.dev)
        cats = me.DEV_CATS
        main_cats = cats
    else:
        convs = me.load_locomo(args.locomo)
        cats = ["single_hop", "multi_hop", "temporal", "open_domain", "adversarial"]
        main_cats = cats[:4]
    print(f"{args.dataset}: hit@5 per category (overall = {', '.join(main_cats)})")
    print(f"  {'variant':8s} " + " ".join(f"{c[:11]:>11s}" for c in cats) + f" {'overall':>8s} {'hit@10':>7s}")
    for v in args.variants.split(","):
        r = run(convs, v, ctx_w=args.ctx_weight, boost_f=args.boost)
        cells = []
        for c in cats:
            xs = [f for cat, f in r if cat == c]
            cells.append(f"{sum(1 for f in xs if f and f <= 5) / max(1, len(xs)):11.3f}")
        xs = [f for cat, f in r if cat in main_cats]
        print(f"  {v:8s} " + " ".join(cells) + f" {sum(1 for f in xs if f and f <= 5) / len(xs):8.3f}"
              f" {sum(1 for f in xs if f and f <= 10) / len(xs):7.3f}")


if __name__ == "__main__":
    main()
