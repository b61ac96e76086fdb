#!/usr/bin/env bash
# The code-search eval on real crates from the local cargo registry (fetched by cargo as
# Mira's own dependencies, so nothing else is downloaded). Prints hit@5 / MRR@10 per
# retriever; see examples/code_eval.rs.
#   scripts/code-eval.sh [--max-pairs N]
set -euo pipefail
reg=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -1)
crates=()
for c in ropey regex-syntax clap_builder serde_json tokio-util reqwest rusqlite ignore notify; do
  d=$(ls -d "$reg$c"-[0-9]* 2>/dev/null | sort -V | tail -1 || true)
  [ -n "$d" ] && crates+=("$d/src")
done
[ ${#crates[@]} -gt 0 ] || { echo "code-eval: no crates found under $reg" >&2; exit 1; }
model=$(scripts/fetch-minilm)
exec cargo run --release --features local-embeddings --example code_eval -- --model-dir "$model" "$@" "${crates[@]}"
