#!/usr/bin/env python3
"""Memory recall eval over long multi-session chats, driving a built `mira` binary.

For each conversation: a fresh MIRA_HOME (and an empty config, so nothing of the user's
is read), every dialogue turn stored as one memory through one long-running `mira mcp`
process and its `remember` tool (formatted "{speaker}: {text}", or with --with-dates
"[{session date}] {speaker}: {text}"), then every question asked with
`mira recall --limit K --json -- QUESTION` (or, with --recall-via mcp, the MCP `recall`
tool of the same process). Hits are mapped back to dialogue turns through the memory ids
that `remember` answered (Mira merges identical texts into one memory, so one id can stand
for several turns).

Printed per dataset and category: hit@1, hit@5, hit@10, MRR@K, "all evidence in the top
5/10" (multi-evidence questions), the number of questions, and recall latency p50/p99 as
measured here (with --recall-via cli that is the wall time of one `mira recall` process,
process start included; with mcp one JSON-RPC round trip, no process start).

  python3 eval/recall/memory_eval.py --dataset dev
  python3 eval/recall/memory_eval.py --dataset locomo --locomo /path/to/locomo10.json
  python3 eval/recall/memory_eval.py --dataset dev --limit-convs 2 --with-dates

Python 3 standard library only. No network.
"""
import argparse
import atexit
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# one copy per run: two evals at once (two worktrees) must not overwrite each other's binary
BIN_COPY = f"/tmp/mira-eval-bin-{os.getpid()}"
# Every question's ranked turn lists, for --dump (rerankers and fusion experiments read them).
DUMP = []

DEV_CATS = ["single_hop", "multi_hop", "temporal", "preference", "paraphrase"]
# locomo10.json's category numbers, as the LoCoMo authors and most public harnesses read them
LOCOMO_CATS = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}


# ----------------------------------------------------------------------------- data
def load_dev(path):
    convs = []
    for line in open(path, encoding="utf-8"):
        if not line.strip():
            continue
        c = json.loads(line)
        sessions = [(s["date_time"], [(t["dia_id"], t["speaker"], t["text"]) for t in s["turns"]]) for s in c["sessions"]]
        qa = [dict(question=q["question"], answer=q.get("answer"), evidence=q["evidence"], category=q["category"])
              for q in c["qa"]]
        convs.append(dict(id=c["sample_id"], sessions=sessions, qa=qa))
    return convs


def norm_dia(e):
    """locomo10.json evidence ids are mostly "D1:3"; a few are written "D:1:3", "D1:03", or
    several in one string; returns the list of normalised ids."""
    out = []
    for part in re.split(r"[;,\s]+", e.strip()):
        m = re.fullmatch(r"D:?(\d+):0*(\d+)", part)
        if m:
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def load_locomo(path):
    data = json.load(open(path, encoding="utf-8"))
    convs = []
    for c in data:
        cv = c["conversation"]
        n = 1
        sessions = []
        while f"session_{n}" in cv:
            turns = []
            for t in cv[f"session_{n}"]:
                text = t["text"]
                if t.get("blip_caption"):
                    # the public retrieval harnesses keep the image caption with the turn
                    text = f"{text} [shares a photo: {t['blip_caption']}]"
                turns.append((t["dia_id"], t["speaker"], text))
            sessions.append((cv.get(f"session_{n}_date_time", ""), turns))
            n += 1
        qa = []
        for q in c["qa"]:
            ev = [x for e in q.get("evidence", []) for x in norm_dia(e)]
            qa.append(dict(question=q["question"], answer=q.get("answer", q.get("adversarial_answer")),
                           evidence=ev, category=LOCOMO_CATS.get(q["category"], str(q["category"]))))
        convs.append(dict(id=c.get("sample_id", f"conv-{len(convs)}"), sessions=sessions, qa=qa))
    return convs


# ----------------------------------------------------------------------------- mira
class Mcp:
    def __init__(self, binary, env, cwd):
        self.p = subprocess.Popen([binary, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, cwd=cwd, text=True, bufsize=1)
        self.n = 0
        r = self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "mira-memory-eval", "version": "1"}})
        if "result" not in r:
            raise RuntimeError(f"mcp initialize failed: {r}")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, obj):
        self.p.stdin.write(json.dumps(obj) + "\n")
        self.p.stdin.flush()

    def rpc(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("mira mcp closed its stdout")
            d = json.loads(line)
            if d.get("id") == self.n:
                return d

    def tool(self, name, args):
        r = self.rpc("tools/call", {"name": name, "arguments": args})
        if "error" in r:
            raise RuntimeError(f"{name}: {r['error']}")
        res = r["result"]
        text = "".join(c.get("text", "") for c in res.get("content", []))
        if res.get("isError"):
            raise RuntimeError(f"{name}: {text}")
        return text

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except Exception:
            self.p.kill()


# "Remembered #N (fact, global)", "Already remembered as #N (seen k times)", and, with an
# embedder, "Already remembered in other words as #N (...)"; "; supersedes #M: ..." may follow
REMEMBERED = re.compile(r"^(Remembered|Already remembered as|Already remembered in other words as) #(\d+)")
SUPERSEDES = re.compile(r"; supersedes #(\d+)")
HIT_LINE = re.compile(r"^#(\d+) \[", re.M)


def neighbours(dia):
    m = re.fullmatch(r"D(\d+):(\d+)", dia)
    if not m:
        return {dia}
    s, t = int(m.group(1)), int(m.group(2))
    return {f"D{s}:{t + d}" for d in (-1, 0, 1) if t + d >= 1}


CONFIG_TOML = os.environ.get("MIRA_EVAL_CONFIG", "")


def isolated_env(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIRA_") and not k.endswith("_API_KEY")}
    cfg = Path(home) / "config.toml"
    # empty by default (Mira's defaults are what is measured); MIRA_EVAL_CONFIG tries others
    cfg.write_text(CONFIG_TOML)
    (Path(home) / "xdg").mkdir(exist_ok=True)
    env.update(MIRA_HOME=str(home), MIRA_CONFIG=str(cfg), XDG_CONFIG_HOME=str(Path(home) / "xdg"))
    return env


def percentile(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    i = min(len(xs) - 1, max(0, int(round(p / 100 * (len(xs) - 1)))))
    return xs[i]


# ----------------------------------------------------------------------------- run
def run_conv(conv, binary, args, misses):
    home = tempfile.mkdtemp(prefix="mira-eval-")
    try:
        env = isolated_env(home)
        mcp = Mcp(binary, env, home)
        id2turns = {}
        turn_text = {}
        outcomes = Counter()
        superseded = set()
        t0 = time.perf_counter()
        for date, turns in conv["sessions"]:
            for dia, spk, text in turns:
                body = f"[{date}] {spk}: {text}" if args.with_dates else f"{spk}: {text}"
                turn_text[dia] = body
                out = mcp.tool("remember", {"text": body})
                m = REMEMBERED.search(out)
                if not m:
                    raise RuntimeError(f"remember answered {out!r} for {dia}")
                outcomes[{"Remembered": "created", "Already remembered as": "repeated"}.get(m.group(1), "similar")] += 1
                id2turns.setdefault(int(m.group(2)), []).append(dia)
                for old in SUPERSEDES.findall(out):
                    # the old memory is never recalled again: its turns are lost to recall
                    outcomes["superseded"] += 1
                    superseded.add(int(old))
        ingest_s = time.perf_counter() - t0
        results = []
        lat = []
        for q in conv["qa"]:
            if not q["evidence"]:
                continue
            t1 = time.perf_counter()
            if args.recall_via == "mcp":
                out = mcp.tool("recall", {"query": q["question"], "limit": args.k})
                ids = [int(x) for x in HIT_LINE.findall(out)]
            else:
                p = subprocess.run([binary, "recall", "--limit", str(args.k), "--json", "--", q["question"]],
                                   env=env, cwd=home, capture_output=True, text=True)
                if p.returncode != 0:
                    raise RuntimeError(f"mira recall failed ({p.returncode}): {p.stderr.strip()}")
                ids = [h["memory"]["id"] for h in json.loads(p.stdout)]
            lat.append((time.perf_counter() - t1) * 1000)
            ranked = [id2turns.get(i, []) for i in ids]
            ev = set(q["evidence"])
            first = next((r + 1 for r, ts in enumerate(ranked) if ev & set(ts)), None)
            covered = {}
            for r, ts in enumerate(ranked):
                for t in ts:
                    covered.setdefault(t, r + 1)
            all_rank = max((covered.get(e, 10 ** 9) for e in ev), default=None)
            # diagnostic: a hit within one turn of an evidence turn, same session (what a
            # neighbour window or multi-turn chunks would turn into a hit)
            near = {n for e in ev for n in neighbours(e)}
            near_first = next((r + 1 for r, ts in enumerate(ranked) if near & set(ts)), None)
            DUMP.append(dict(conv=conv["id"], question=q["question"], category=q["category"], evidence=q["evidence"],
                             ranked=ranked))
            results.append(dict(category=q["category"], first=first, all_rank=all_rank, n_ev=len(ev), near_first=near_first))
            if misses is not None and (first is None or first > 5):
                misses.append(dict(conv=conv["id"], category=q["category"], question=q["question"],
                                   answer=q["answer"], first_rank=first,
                                   evidence=[(e, turn_text.get(e, "?")) for e in q["evidence"]],
                                   top5=[(i, id2turns.get(i, ["?"])[0], turn_text.get(id2turns.get(i, ["?"])[0], "?"))
                                         for i in ids[:5]]))
        mcp.close()
        return results, lat, ingest_s, sum(len(t) for _, t in conv["sessions"]), len(id2turns), outcomes
    finally:
        if not args.keep_homes:
            shutil.rmtree(home, ignore_errors=True)
        else:
            print(f"  kept {home}", file=sys.stderr)


def summarize(results, k):
    n = len(results)
    if n == 0:
        return dict(n=0)
    def hit(x):
        return sum(1 for r in results if r["first"] is not None and r["first"] <= x) / n
    multi = [r for r in results if r["n_ev"] > 1]
    return dict(
        n=n,
        hit1=hit(1), hit5=hit(5), hit10=hit(10),
        mrr=sum(1 / r["first"] for r in results if r["first"] is not None and r["first"] <= k) / n,
        near5=sum(1 for r in results if r["near_first"] is not None and r["near_first"] <= 5) / n,
        n_multi_evidence=len(multi),
        all5=(sum(1 for r in multi if r["all_rank"] <= 5) / len(multi)) if multi else None,
        all10=(sum(1 for r in multi if r["all_rank"] <= 10) / len(multi)) if multi else None,
    )


def fmt(v):
    return "   -  " if v is None else f"{v:6.3f}"


def print_table(title, rows, order):
    print(f"\n{title}")
    print(f"  {'category':14s} {'n':>5s} {'hit@1':>6s} {'hit@5':>6s} {'hit@10':>6s} {'MRR':>6s}   {'all@5':>6s} {'all@10':>6s} (multi-ev. n)  {'±1@5':>6s}")
    for cat in order:
        s = rows.get(cat)
        if not s or not s.get("n"):
            continue
        print(f"  {cat:14s} {s['n']:5d} {fmt(s['hit1'])} {fmt(s['hit5'])} {fmt(s['hit10'])} {fmt(s['mrr'])}   "
              f"{fmt(s['all5'])} {fmt(s['all10'])} {'(' + str(s['n_multi_evidence']) + ')':>13s}  {fmt(s['near5'])}")


def resolve_bin(arg):
    """--bin, else $MIRA_EVAL_BIN, else the release build (under $CARGO_TARGET_DIR, then
    target/), else the debug build, with a note: debug latencies are not release figures."""
    arg = arg or os.environ.get("MIRA_EVAL_BIN")
    if arg:
        src = Path(arg)
    else:
        dirs = [Path(os.environ["CARGO_TARGET_DIR"])] if os.environ.get("CARGO_TARGET_DIR") else []
        dirs.append(REPO / "target")
        cands = [d / "release" / "mira" for d in dirs] + [d / "debug" / "mira" for d in dirs]
        src = next((c for c in cands if c.exists()), cands[0])
    if not src.exists():
        sys.exit(f"memory_eval: no mira binary at {src} (build it, or pass --bin PATH)")
    note = ""
    if "/debug/" in str(src.resolve()):
        note = f"{src} is a DEBUG build: recall figures hold, latency figures are not release figures"
    tmp = BIN_COPY + ".tmp"
    shutil.copy2(src, tmp)
    os.replace(tmp, BIN_COPY)
    # the copy is the size of the binary (~200 MB): gone when the run ends, however it ends
    atexit.register(lambda: os.path.exists(BIN_COPY) and os.remove(BIN_COPY))
    h = hashlib.sha256(open(BIN_COPY, "rb").read()).hexdigest()[:12]
    ver = subprocess.run([BIN_COPY, "--version"], capture_output=True, text=True).stdout.strip()
    mtime = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(src.stat().st_mtime))
    return BIN_COPY, dict(source=str(src), copy=BIN_COPY, sha256_12=h, version=ver, built=mtime,
                          profile="debug" if note else "release (by path)", note=note)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=["dev", "locomo"], default="dev")
    ap.add_argument("--dev", default=str(HERE / "dev.jsonl"), help="the dev set (default eval/recall/dev.jsonl)")
    ap.add_argument("--locomo", default=os.environ.get("MIRA_LOCOMO_JSON"),
                    help="locomo10.json (default $MIRA_LOCOMO_JSON, else the output of scripts/fetch-locomo)")
    ap.add_argument("--bin", help="the mira binary (default target/release/mira, else target/debug/mira); copied to /tmp/mira-eval-bin-PID first")
    ap.add_argument("--limit-convs", type=int, default=0, help="only the first N conversations")
    ap.add_argument("--with-dates", action="store_true", help='store "[{session date}] {speaker}: {text}"')
    ap.add_argument("--recall-via", choices=["cli", "mcp"], default="cli",
                    help="cli: one `mira recall --json` process per question (latency includes process start); mcp: the recall tool")
    ap.add_argument("-k", type=int, default=10, help="recall limit (default 10)")
    ap.add_argument("--out", help="JSON summary path (default eval/recall/out/<dataset>[-dates][-mcp][-firstN].json)")
    ap.add_argument("--dump", help="write every question's ranked turn lists here (jsonl)")
    ap.add_argument("--misses", help="write the questions with no evidence in the top 5 here (jsonl; default next to --out)")
    ap.add_argument("--keep-homes", action="store_true", help="keep each conversation's MIRA_HOME for inspection")
    args = ap.parse_args()

    binary, bininfo = resolve_bin(args.bin)
    if bininfo["note"]:
        print(f"NOTE: {bininfo['note']}", file=sys.stderr)

    if args.dataset == "dev":
        convs = load_dev(args.dev)
        order = DEV_CATS
        main_cats = DEV_CATS
        src_path = args.dev
    else:
        path = args.locomo
        if not path:
            p = subprocess.run([str(REPO / "scripts/fetch-locomo")], capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("memory_eval: no LoCoMo file (pass --locomo PATH or set MIRA_LOCOMO_JSON):\n" + p.stderr)
            path = p.stdout.strip().splitlines()[-1]
        convs = load_locomo(path)
        order = ["single_hop", "multi_hop", "temporal", "open_domain", "adversarial"]
        main_cats = ["single_hop", "multi_hop", "temporal", "open_domain"]
        src_path = path
    if args.limit_convs:
        convs = convs[: args.limit_convs]

    suffix = (("-dates" if args.with_dates else "") + ("-mcp" if args.recall_via == "mcp" else "")
              + (f"-first{args.limit_convs}" if args.limit_convs else ""))
    out = Path(args.out) if args.out else HERE / "out" / f"{args.dataset}{suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    misses_path = Path(args.misses) if args.misses else (
        Path(os.devnull) if str(out) == os.devnull else out.with_name(out.stem + "-misses.jsonl"))
    misses = []

    all_results, all_lat = [], []
    all_outcomes = Counter()
    per_conv = []
    t0 = time.perf_counter()
    for c in convs:
        res, lat, ingest_s, n_turns, n_mem, outcomes = run_conv(c, binary, args, misses)
        all_outcomes.update(outcomes)
        all_results += res
        all_lat += lat
        hit5 = sum(1 for r in res if r["category"] in main_cats and r["first"] and r["first"] <= 5)
        n_main = sum(1 for r in res if r["category"] in main_cats)
        per_conv.append(dict(id=c["id"], turns=n_turns, memories=n_mem, questions=len(res),
                             ingest_s=round(ingest_s, 2), hit5=round(hit5 / max(1, n_main), 3), remember=dict(outcomes)))
        merged = f" ({outcomes['similar']} merged as similar)" if outcomes["similar"] else ""
        merged += f" ({outcomes['superseded']} superseded)" if outcomes["superseded"] else ""
        print(f"  {c['id']}: {n_turns} turns -> {n_mem} memories{merged} in {ingest_s:.1f} s "
              f"({n_turns / max(ingest_s, 1e-9):.0f}/s), {len(res)} questions, hit@5 {hit5 / max(1, n_main):.3f}",
              file=sys.stderr)
    wall = time.perf_counter() - t0

    by_cat = {cat: summarize([r for r in all_results if r["category"] == cat], args.k) for cat in order}
    overall = summarize([r for r in all_results if r["category"] in main_cats], args.k)
    rows = dict(by_cat)
    label = "overall" if args.dataset == "dev" else "overall (1-4)"
    rows[label] = overall
    lat = dict(p50_ms=round(percentile(all_lat, 50), 2), p99_ms=round(percentile(all_lat, 99), 2),
               max_ms=round(max(all_lat), 2) if all_lat else None, n=len(all_lat),
               includes_process_start=args.recall_via == "cli", via=args.recall_via)

    fmt_name = "[date] speaker: text" if args.with_dates else "speaker: text"
    title = (f"{args.dataset}: {len(convs)} conversations, memories as \"{fmt_name}\", recall via {args.recall_via}, "
             f"k={args.k}; binary {bininfo['source']} ({bininfo['version']}, sha256 {bininfo['sha256_12']}, built {bininfo['built']})")
    print_table(title, rows, order + [label])
    print("  all@k: every evidence turn in the top k (questions with several evidence turns only);"
          " ±1@5: diagnostic, a top-5 hit within one turn of an evidence turn (same session)")
    if args.dataset == "locomo":
        print("  adversarial = LoCoMo category 5: not in the overall figure")
    print(f"  recall latency: p50 {lat['p50_ms']:.1f} ms, p99 {lat['p99_ms']:.1f} ms over {lat['n']} queries "
          f"({'wall time of one `mira recall` process, process start included' if args.recall_via == 'cli' else 'one MCP tools/call round trip, no process start'})")
    n_turns_all = sum(all_outcomes.values()) - all_outcomes["superseded"]
    print(f"  remember: {all_outcomes['created']} created, {all_outcomes['repeated']} identical repeats, "
          f"{all_outcomes['similar']} merged into a similar memory, {all_outcomes['superseded']} superseded "
          f"(of {n_turns_all} turns; a merged turn counts as found when its memory is)")
    print(f"  total wall time {wall:.0f} s")
    if bininfo["note"]:
        print(f"  NOTE: {bininfo['note']}")

    summary = dict(dataset=args.dataset, source=str(src_path), conversations=len(convs), with_dates=args.with_dates,
                   recall_via=args.recall_via, k=args.k, binary=bininfo, remember=dict(all_outcomes), categories=by_cat, overall=overall,
                   overall_categories=main_cats, latency=lat, per_conversation=per_conv, wall_s=round(wall, 1),
                   when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    out.write_text(json.dumps(summary, indent=1) + "\n")
    with open(misses_path, "w") as fh:
        for m in misses:
            fh.write(json.dumps(m, ensure_ascii=False) + "\n")
    if args.dump:
        with open(args.dump, "w") as fh:
            for d in DUMP:
                fh.write(json.dumps(d, ensure_ascii=False) + "\n")
    print(f"  summary: {out}\n  misses (no evidence in the top 5): {misses_path}")


if __name__ == "__main__":
    main()
