#!/usr/bin/env bash
# demo.sh — what `make demo` runs after the build: makes the tiny Gemma 4 model (random
# weights, the real Gemma 4 vocabulary and chat template), then dreams with it. Everything is
# written under build/ (DREAM_HOME=build/demo), never to the person's own wiki.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/bin
MODEL=build/models/tiny-gemma4.gguf
export DREAM_HOME=$PWD/build/demo

mkdir -p build/models
if [ ! -f "$MODEL" ] || [ "$BIN/dream-make-model" -nt "$MODEL" ]; then
  "$BIN/dream-make-model" --arch gemma4 --preset tiny --type q8_0 --seed 1 -o "$MODEL"
fi

echo
echo "== dream generate (exact greedy decode; the tiny model has random weights, so the text is noise,"
echo "   but the same noise on every run and every machine of this kind)"
"$BIN/dream" generate --model "$MODEL" --prompt "My sourdough starter" --max-tokens 24 --tokens --stats

echo
echo "== dream generate --chat (rendered through the model's own chat template)"
"$BIN/dream" generate --model "$MODEL" --chat "What did I decide about my bike commute?" --max-tokens 24 --stats || true

echo
echo "== dream ingest: the bundled sample conversations (ChatGPT, Claude.ai and Claude Code exports)"
echo "   into the store under $DREAM_HOME; a second run finds nothing new"
"$BIN/dream" ingest examples/conversations
"$BIN/dream" ingest examples/conversations
echo
echo "== dream init: the wiki (a git repository with Meta policy pages); a second run keeps everything"
"$BIN/dream" init
"$BIN/dream" init
echo
echo "== dream run --dry-run: the plan of the Dreaming's stages (segment → extract → resolve → route →"
echo "   create → fold → reconcile → link → wikify) over the store"
"$BIN/dream" run --dry-run
echo
echo "== dream run: the Dreaming for real on the tiny model (about two minutes on two cores). Its answers"
echo "   are noise, so every segment answer is recorded as a failed attempt and nothing reaches the"
echo "   wiki: the gate keeps noise out, and dream check proves the wiki is still whole"
DREAM_MODEL=$MODEL "$BIN/dream" run
"$BIN/dream" check
echo
echo "== dream status: what the memory holds (the read verbs: resolve, read, section, links, infobox,"
echo "   list, search; each takes --json, and dream serve answers GET /v1/memory/<verb> the same way)"
"$BIN/dream" status
echo
echo "With the real Gemma 4 model, \`dream run\` writes real articles (the README shows the command);"
echo "with the tiny model here every answer is noise and the gate keeps it out."
echo "The wiki is at $DREAM_HOME/wiki."
