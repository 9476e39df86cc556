#!/usr/bin/env bash
# demo.sh — what `make demo` runs after the build: dreams the bundled sample conversations into a
# wiki with dream-mini (models/dream-mini.gguf: a small model this project trained on synthetic
# conversations for its own stage tasks; train/README.md has the recipe), then checks the wiki
# and reads it back. Everything is written under build/demo (DREAM_HOME), never to the person's
# own wiki. Real memories want the default Gemma 4 model (README).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/bin
MODEL=models/dream-mini.gguf
# The committed adapters (models/adapters: memory-chunk.gguf and memory-entity.gguf, each a
# LoRA of dream-mini for one stage): on these samples they find the bike commute's river path
# beside Gus and Rust (three articles; the base model alone writes one; docs/BENCHMARKS.md,
# "Tokens dream-mini never learned"). Pointing DREAM_ADAPTERS at them also keeps any adapters
# of the person's own (~/.cache/dream/adapters) out of the demo.
ADAPTERS=$PWD/models/adapters
export DREAM_HOME=$PWD/build/demo
[ -f "$MODEL" ] || { echo "demo: $MODEL is missing (it is committed with the repository; git checkout -- models/)" >&2; exit 1; }
rm -rf "$DREAM_HOME"
mkdir -p "$DREAM_HOME"

echo "== dream ingest: the bundled sample conversations (ChatGPT, Claude.ai and Claude Code exports)"
echo "   into the store under $DREAM_HOME; a second run finds nothing new"
"$BIN/dream" ingest examples/conversations
"$BIN/dream" ingest examples/conversations
echo
echo "== dream init: the wiki (a git repository with Meta policy pages)"
"$BIN/dream" init
echo
echo "== dream run --dry-run: the plan of the Dreaming's stages over the store"
"$BIN/dream" run --dry-run
echo
# The estimate is measured: 6 s on two idle cores (2026-12-03); much longer while other work
# keeps those cores busy.
echo "== dream run: the Dreaming with dream-mini ($MODEL, $(du -h "$MODEL" | cut -f1)) on this CPU"
echo "   (about 6 s on two idle cores; longer when other work shares them)"
start=$(date +%s)
DREAM_MODEL=$MODEL DREAM_ADAPTERS=$ADAPTERS "$BIN/dream" run
echo "   (the whole run took $(( $(date +%s) - start )) s)"
echo
echo "== dream check: every article against the grammar, its footnotes and links"
"$BIN/dream" check
echo
echo "== dream status and dream list: what the memory holds"
"$BIN/dream" status
"$BIN/dream" list
first=$(ls "$DREAM_HOME/wiki/articles" | head -n1)
if [ -n "$first" ]; then
  echo
  echo "== dream read ${first%.md}: its lead and table of contents (the read tools stay under 2 KB)"
  "$BIN/dream" read "${first%.md}"
fi
echo
echo "The wiki is at $DREAM_HOME/wiki (git log there shows one memory: commit per stage)."
echo "dream-mini finds Gus the starter here, Rust (the language of the crumb project) and the bike"
echo "commute (named River path, after its route), and part of the prose it writes is still invented"
echo "(docs/BENCHMARKS.md, \"Tokens dream-mini never learned\"): read the articles as a demonstration of"
echo "the pipeline, not of the writing."
echo "dream-mini is a small model trained by this project on synthetic conversations, for demos and"
echo "tests; for your own memories use Gemma 4 (the README says how)."
