#!/usr/bin/env bash
# Index benchmark against universal-ctags, on corpora fetched from package registries
# (nothing is vendored). Prints wall/CPU time and their ratio, files/s, MB/s, peak RSS,
# when the cold index's symbols were all stored (symbols ready) and when everything was (all
# done), where the crawl's time went (stages), tree-sitter's parse-only floor on the same
# files and threads with both ratios to it, thread scaling at RAYON_NUM_THREADS=1/2/4/8, symbols per language vs ctags, warm
# restart, edit→symbols p50/p99 on a ~7.5k-line file, workspace/symbol p50/p99 over ≥250k
# symbols, keystroke→symbols per language, and the real `mira lsp`'s peak RSS with a
# ≥1M-line project indexed (the corpus without Go's sources).
#
#   scripts/bench-index.sh            # the mixed corpus (crates + PyPI + npm + Debian Go)
#   CORPUS=small scripts/bench-index.sh   # crates + npm only, for a quick look
#
# Needs: curl, pip, npm, apt-get (for `apt-get download`), dpkg-deb, unzip, tar and
# Debian's `universal-ctags` (apt-get install universal-ctags).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
cache="${MIRA_BENCH_DIR:-$here/target/bench-corpus}"
corpus="$cache/${CORPUS:-mixed}"
mkdir -p "$cache/dl" "$corpus"

need() { command -v "$1" >/dev/null || { echo "bench-index: '$1' is missing ($2)" >&2; exit 2; }; }
need curl "apt-get install curl"
need ctags "apt-get install universal-ctags"
ctags --version | grep -q Universal || { echo "bench-index: ctags is not universal-ctags (apt-get install universal-ctags)" >&2; exit 2; }

crate() { # name version: a crate's published sources from crates.io
  local dir="$corpus/crates/$1-$2"
  [ -d "$dir" ] && return
  curl -fsSL "https://static.crates.io/crates/$1/$1-$2.crate" -o "$cache/dl/$1-$2.crate"
  mkdir -p "$corpus/crates" && tar -xzf "$cache/dl/$1-$2.crate" -C "$corpus/crates"
}

npm_pkg() { # spec: a package tarball from the npm registry
  local dir="$corpus/npm/$1"
  [ -d "$dir" ] && return
  need npm "apt-get install npm"
  mkdir -p "$dir" && (cd "$cache/dl" && npm pack --silent "$1@$2" >/dev/null)
  tar -xzf "$cache/dl/$(echo "$1" | tr -d @ | tr / -)-$2.tgz" -C "$dir"
}

pypi() { # name version: a wheel from PyPI
  local dir="$corpus/pypi/$1-$2"
  [ -d "$dir" ] && return
  need pip "a Python with pip"; need unzip "apt-get install unzip"
  pip download --quiet --no-deps --only-binary=:all: -d "$cache/dl" "$1==$2"
  mkdir -p "$dir" && unzip -q -o "$cache/dl/$1-$2"-*.whl -d "$dir"
}

debian_go() { # Go's own sources, from Debian
  local dir="$corpus/debian/golang-src"
  [ -d "$dir" ] && return
  need apt-get "Debian"; need dpkg-deb "Debian"
  (cd "$cache/dl" && apt-get download golang-1.19-src >/dev/null 2>&1)
  mkdir -p "$dir" && dpkg-deb -x "$cache/dl"/golang-1.19-src_*.deb "$dir"
}

echo "fetching corpora into $corpus …" >&2
for c in "tokio 1.54.1" "syn 2.0.119" "regex-automata 0.4.18" "serde 1.0.229" "hyper 1.12.0" "rayon-core 1.13.0"; do
  crate $c
done
npm_pkg rxjs 7.8.1
if [ "${CORPUS:-mixed}" != small ]; then
  pypi sympy 1.13.3
  debian_go
fi

# A real TypeScript source near 7,500 lines for keystroke → symbols (effect's
# src/internal/stream.ts, 8,593 lines), kept out of the corpus so the index figures stay
# comparable.
ts_dir="$cache/typing/effect-3.10.0"
if [ ! -d "$ts_dir" ]; then
  need npm "apt-get install npm"
  mkdir -p "$ts_dir" && (cd "$cache/dl" && npm pack --silent "effect@3.10.0" >/dev/null)
  tar -xzf "$cache/dl/effect-3.10.0.tgz" -C "$ts_dir"
fi

[ -n "${FETCH_ONLY:-}" ] && { echo "$corpus"; exit 0; }
cd "$here"
cargo build --release --example bench_index --example bench_typing --example bench_lsp_rss --bin mira >&2
cargo bench --no-run --bench lsp_core >&2
bin="${CARGO_TARGET_DIR:-$here/target}/release/examples"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin/bench_index" "$corpus" "$@"
# Keystroke → symbols where people type (a new function at the start, middle and end, and
# inside the largest item), per language: the corpus file nearest 7,500 lines (.js: rxjs's
# bundles, so a bundled file is among them).
# (`|| true`: `head` closing the pipe is not a failure under pipefail.)
typing=()
for ext in rs py ts js; do
  roots=("$corpus"); [ "$ext" = ts ] && roots+=("$ts_dir")
  f=$(find "${roots[@]}" -name "*.$ext" -size +60k -print0 | xargs -0 -r wc -l | grep -v ' total$' \
      | awk '{d = $1 - 7500; if (d < 0) d = -d; print d, $2}' | sort -n | head -1 | cut -d' ' -f2- || true)
  [ -n "$f" ] && typing+=("$f")
done
# The biggest Rust file too (end-of-file typing there is what a held-out run measured).
big_rs=$(find "$corpus" -name "*.rs" -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2- || true)
[ -n "$big_rs" ] && typing+=("$big_rs")
"$bin/bench_typing" "${typing[@]}"
# The same keystrokes over stdio against the real `mira lsp`, each followed by documentSymbol
# as an editor's outline asks (budget p99 ≤ 15 ms).
MIRA_TYPING_ONLY=1 MIRA_TYPING_FILES=$(IFS=:; echo "${typing[*]}") \
  cargo bench --bench lsp_core 2>/dev/null | grep -E 'keystroke|parsed by|SKIPPED'
# Peak RSS of the real language server with ≥1M lines indexed (a fresh MIRA_HOME).
parts=()
for d in "$corpus"/crates/* "$corpus"/npm/* "$corpus"/pypi/*; do [ -d "$d" ] && parts+=("$d"); done
"$bin/bench_lsp_rss" --mira "$bin/../mira" "${parts[@]}"
# Parse threads hold memory of their own: on a bigger machine, the same at 2 threads.
if [ "$(nproc)" -gt 2 ]; then
  RAYON_NUM_THREADS=2 "$bin/bench_lsp_rss" --mira "$bin/../mira" "${parts[@]}"
fi
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
