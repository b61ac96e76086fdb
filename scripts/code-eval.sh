#!/usr/bin/env bash
# The code-search eval on real crates from the local cargo registry (fetched by cargo as
# Mira's own dependencies, so nothing else is downloaded), on the default build: prints
# hit@1/5/10, MRR@10 and query latency p50/p99 per crate and in all; see examples/code_eval.rs.
#
#   scripts/code-eval.sh [--max-pairs N]          # the dev crates (weights are chosen here)
#   scripts/code-eval.sh --held-out               # tokio, hyper, regex-automata, serde_json:
#                                                 # measured, never tuned on (300 pairs)
#   scripts/code-eval.sh --quick                  # 200 pairs of the dev crates (CI)
#   scripts/code-eval.sh --minilm                 # + all-MiniLM-L6-v2 vectors and fusion
#                                                 # (--features local-embeddings; slow)
#   scripts/code-eval.sh --grid        # + the built-in table's vectors and fusion
#   scripts/code-eval.sh --latency-corpus DIR     # + latency over DIR, indexed (read only)
#
# $CODE_EVAL_BIN: a built examples/code_eval to run instead of cargo.
set -euo pipefail
cd "$(dirname "$0")/.."
reg=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -1)
# Dev crates: every choice of weights and features is measured on these. The held-out four
# are what the issue measures (tokio 1.54.1, hyper 1.12.0, regex-automata 0.4.19,
# serde_json 1.0.154); none of them is in the dev list.
dev=(ropey regex-syntax clap_builder tokio-util reqwest rusqlite ignore notify bytes rayon chrono aho-corasick)
held_out=(tokio-1.54.1 hyper-1.12.0 regex-automata-0.4.19 serde_json-1.0.154)
names=("${dev[@]}")
max_pairs=600
minilm=0
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --held-out) names=("${held_out[@]}"); max_pairs=300 ;;
    --quick) max_pairs=200 ;;
    --max-pairs) max_pairs="$2"; shift ;;
    --minilm) minilm=1 ;;
    *) args+=("$1") ;;
  esac
  shift
done
crates=()
for c in "${names[@]}"; do
  if [ -d "$reg$c" ]; then
    d="$reg$c"
  else
    d=$(ls -d "$reg$c"-[0-9]* 2>/dev/null | sort -V | tail -1 || true)
  fi
  if [ -z "$d" ] && [ "${c%-[0-9]*}" != "$c" ]; then
    # A held-out crate at another version than the one named: the newest there is, said.
    d=$(ls -d "$reg${c%-[0-9]*}"-[0-9]* 2>/dev/null | sort -V | tail -1 || true)
    [ -n "$d" ] && echo "code-eval: $c is not in $reg; using $(basename "$d")" >&2
  fi
  if [ -n "$d" ]; then crates+=("$d/src"); else echo "code-eval: $c is not in $reg (left out)" >&2; fi
done
if [ ${#crates[@]} -eq 0 ]; then
  echo "*** code eval SKIPPED: none of its crates is in the cargo registry ($reg)" >&2
  exit 0
fi
if [ "$minilm" = 1 ]; then
  model=$(scripts/fetch-minilm)
  exec cargo run --release --features local-embeddings --example code_eval -- \
    --model-dir "$model" --max-pairs "$max_pairs" ${args[@]+"${args[@]}"} "${crates[@]}"
fi
if [ -n "${CODE_EVAL_BIN:-}" ]; then
  exec "$CODE_EVAL_BIN" --max-pairs "$max_pairs" ${args[@]+"${args[@]}"} "${crates[@]}"
fi
exec cargo run --release --example code_eval -- --max-pairs "$max_pairs" ${args[@]+"${args[@]}"} "${crates[@]}"
