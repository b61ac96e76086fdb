#!/usr/bin/env python3
"""Sorts the questions memory_eval.py missed (no evidence turn in the top 5) by why, roughly:

  no-overlap   the evidence turn shares no query term with the question (after Mira's stop
               list and a crude stemmer): BM25 cannot find it; only meaning (vectors,
               query rewriting) can
  name-only    the evidence shares only the speaker's name with the question
  outranked    the evidence shares a content word, but other turns ranked higher; the top
               hit's matched terms are listed (often only the name and a generic word)

and prints per-category counts plus examples.

  python3 eval/recall/analyze_misses.py eval/recall/out/locomo-misses.jsonl [-n 8]
"""
import argparse
import json
import re
from collections import Counter, defaultdict

# Mira's STOP_WORDS (src/text.rs) at the time of writing
MIRA_STOP = set("""a about an and are as at be by can could did do does for from had has have how i if in is it its
me my of on or our remember should so tell that the their there these this to us was we were what when where which
who why will with would you your""".split())


def stem(w):
    for suf in ("ing", "ed", "es", "s", "ly"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)]
    return w


def terms(text):
    return {stem(t) for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in MIRA_STOP}


def body(mem):
    # "[date] Speaker: text" or "Speaker: text" -> (speaker, text)
    m = re.match(r"^(?:\[[^\]]*\] )?([^:]{1,40}): (.*)$", mem, re.S)
    return (m.group(1), m.group(2)) if m else ("", mem)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("misses")
    ap.add_argument("-n", type=int, default=6, help="examples per kind")
    args = ap.parse_args()
    rows = [json.loads(l) for l in open(args.misses)]
    kinds = Counter()
    by_cat = defaultdict(Counter)
    examples = defaultdict(list)
    top_len = []
    top_name_only = 0
    pron = {"her", "his", "she", "he", "him", "they", "them", "hers", "herself", "himself"}
    top_pronoun = 0
    neighbour = 0
    for r in rows:
        q = terms(r["question"])
        best = None
        for dia, text in r["evidence"]:
            spk, t = body(text)
            shared = q & terms(text)
            names = {stem(x) for x in re.findall(r"[a-z0-9]+", spk.lower())}
            content = shared - names
            cand = ("outranked" if content else "name-only" if shared else "no-overlap", shared, dia, text)
            order = {"outranked": 0, "name-only": 1, "no-overlap": 2}
            if best is None or order[cand[0]] < order[best[0]]:
                best = cand
        kind = best[0]
        kinds[kind] += 1
        by_cat[r["category"]][kind] += 1
        ev_near = set()
        for dia, _ in r["evidence"]:
            m = re.fullmatch(r"D(\d+):(\d+)", dia)
            if m:
                ev_near |= {f"D{m.group(1)}:{int(m.group(2)) + d}" for d in (-1, 1)}
        if any(t[1] in ev_near for t in r["top5"]):
            neighbour += 1
        if r["top5"]:
            _, _, ttext = r["top5"][0]
            if {x for x in re.findall(r"[a-z]+", r["question"].lower())} & pron & set(re.findall(r"[a-z]+", ttext.lower())):
                top_pronoun += 1
            tspk, tt = body(ttext)
            tshared = q & terms(ttext)
            tnames = {stem(x) for x in re.findall(r"[a-z0-9]+", tspk.lower())}
            top_len.append(len(tt.split()))
            if tshared and tshared <= tnames | {stem(x) for x in re.findall(r"[a-z0-9]+", r["question"].lower()) if x[:1].isupper()}:
                top_name_only += 1
        examples[kind].append((r, best))
    n = len(rows)
    print(f"{n} questions with no evidence turn in the top 5")
    for k in ("no-overlap", "name-only", "outranked"):
        print(f"  {k:11s} {kinds[k]:5d} ({kinds[k] / max(1, n):.0%})")
    print("by category:")
    for c, cnt in sorted(by_cat.items()):
        print(f"  {c:12s} " + ", ".join(f"{k} {cnt[k]}" for k in ("no-overlap", "name-only", "outranked")))
    print(f"a turn next to an evidence turn (same session, +-1) is in the top 5: {neighbour} ({neighbour / max(1, n):.0%})")
    print(f"the top-1 hit shares a third-person pronoun (her/his/she/he/they...) with the question: {top_pronoun} ({top_pronoun / max(1, n):.0%})")
    if top_len:
        top_len.sort()
        print(f"top-1 hit of a miss: median {top_len[len(top_len) // 2]} words")
    for k in ("no-overlap", "name-only", "outranked"):
        print(f"\n== {k} (examples)")
        for r, (kind, shared, dia, text) in examples[k][: args.n]:
            print(f"- [{r['category']}] {r['question']}  (answer: {r.get('answer')}; first evidence rank: {r['first_rank']})")
            print(f"    evidence {dia}: {text[:220]}")
            if shared:
                print(f"    shared terms: {sorted(shared)}")
            for i, (mid, tdia, ttext) in enumerate(r["top5"][:3], 1):
                print(f"    top{i} {tdia}: {ttext[:160]}  <- {sorted(terms(r['question']) & terms(ttext))}")


if __name__ == "__main__":
    main()
