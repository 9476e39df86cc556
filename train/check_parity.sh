#!/usr/bin/env bash
# check_parity.sh — proves that train.py's model is the model llama.cpp runs, on this CPU.
#
# ref_forward.py (numpy, float32) is the reference; train.py --selftest checks train.py's PyTorch
# model against it (run here when this python has torch). Then, numpy only:
#   1. random weights (numpy, seeded) in the PREFIX.json/.bin format: the dream-mini shape with
#      a tied output, a smaller untied one, and a random LoRA adapter of the first;
#   2. dream-make-model --weights (f16 and q8_0) and dream-make-adapter --weights;
#   3. prompts rendered by dream-dataset (the seam's prompt path), decoded greedily by numpy and
#      by `dream generate` (the exact serial path, rendering the same chat itself);
#   4. f16: the token sequences must be identical; q8_0: agreement is reported. The first step's
#      top-5 logits of numpy and llama.cpp are printed side by side (train/dump_logits.c).
#   5. ref_forward.q8_0_round (what train.py --init-q8 gives an adapter to learn on) must equal
#      every matrix of the q8_0 GGUF exactly.
# Exit status 0 only when every f16 sequence agrees and every Q8_0 round trip is exact.
#
# usage: bash train/check_parity.sh [WORKDIR]     (build first: make build)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$ROOT/build/bin"
W="${1:-$(mktemp -d /tmp/dream-parity.XXXXXX)}"
mkdir -p "$W"
N_NEW=16

PY=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c "import numpy" 2>/dev/null; then PY="$p"; break; fi
done
[ -n "$PY" ] || { echo "check_parity: no python3 with numpy (apt-get install -y python3-numpy)" >&2; exit 2; }
for t in dream dream-make-model dream-make-adapter dream-dataset; do
  [ -x "$BIN/$t" ] || { echo "check_parity: $BIN/$t is missing; run make build" >&2; exit 2; }
done

# The logits probe, compiled against the pinned llama.cpp build (skipped if that is not there).
DUMP=""
if [ -f "$ROOT/build/deps.env" ]; then
  eval "$(tail -n1 "$ROOT/build/deps.env")"
  if cc -std=c11 -O2 -I "$LLAMA_SRC/include" -I "$LLAMA_SRC/ggml/include" "$ROOT/train/dump_logits.c" \
       -o "$W/dump_logits" -L "$LLAMA_BUILD/src" -L "$LLAMA_BUILD/ggml/src" \
       -lllama -lggml -lggml-cpu -lggml-base -lstdc++ -lm -lgomp -lpthread -ldl 2>"$W/dump_logits.log"; then
    DUMP="$W/dump_logits"
  else
    echo "check_parity: dump_logits did not build (see $W/dump_logits.log); top-5 comparison skipped"
  fi
fi

REF="$ROOT/train/ref_forward.py"
echo "check_parity: work dir $W"
# train.py's PyTorch model against the reference, where this python has torch (the GPU machine
# has; run `python3 train/train.py --selftest` there otherwise).
if "$PY" -c "import torch" 2>/dev/null; then
  "$PY" "$ROOT/train/train.py" --selftest
else
  echo "check_parity: no torch here; train.py --selftest (torch = numpy) not run"
fi
"$PY" "$REF" random --out "$W/tied/w" --seed 1
"$PY" "$REF" random --out "$W/untied/w" --seed 2 --untied --n-layer 3 --n-ff 1024
"$PY" "$REF" random-lora --base "$W/tied/w" --out "$W/lora/w" --rank 8 --alpha 16 --seed 3
for m in tied untied; do
  for t in f16 q8_0; do
    "$BIN/dream-make-model" --arch llama --weights "$W/$m/w" --type "$t" -o "$W/$m-$t.gguf" >/dev/null
  done
done
"$BIN/dream-make-adapter" --model "$W/tied-f16.gguf" --weights "$W/lora/w" -o "$W/lora.gguf" >/dev/null

# The prompts: a user-only turn (chunk has no default system turn), explicit system turns, and
# one long prompt (> 512 tokens: two prefill chunks, RoPE at larger positions).
"$PY" - "$W/prompts.jsonl" <<'EOF'
import json, random, sys
rng = random.Random(7)
words = "the saddle bike rode oil month Lisbon bread starter cello shed garden week I my it was".split()
long_text = " ".join(rng.choice(words) for _ in range(700))
recs = [
    ("chunk", None, "hello"),
    ("route", "Reply with exactly one word: yes or no.",
     "Is this excerpt about the Brooks B17 saddle?\n\nI oil the B17 every month now."),
    ("entity", "You name the subjects a conversation excerpt is about.",
     "I rode to Lisbon on the commute bike; the saddle creaked all the way and I oiled it at the hostel."),
    ("section", "Answer briefly.", "Where does this belong?\n\n" + long_text),
]
with open(sys.argv[1], "w") as f:
    for st, sysm, user in recs:
        f.write(json.dumps({"stage": st, "kind": "parity", "system": sysm, "user": user, "answer": ""}) + "\n")
EOF
"$BIN/dream-dataset" --model "$W/tied-f16.gguf" -o "$W/prompts.bin" "$W/prompts.jsonl" >/dev/null

"$PY" - "$W" "$BIN" "$DUMP" "$N_NEW" "$ROOT/train" <<'EOF'
import json, subprocess, sys
W, BIN, DUMP, N, TRAIN = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, TRAIN)
import numpy as np
import ref_forward as ref

ds = ref.Dataset(f"{W}/prompts.bin")
recs = [json.loads(l) for l in open(f"{W}/prompts.jsonl")]
eog = ds.eog()

def llama_generate(model, rec, adapter=None):
    cmd = [f"{BIN}/dream", "generate", "--model", model, "--chat", rec["user"], "--max-tokens", str(N), "--tokens"]
    if rec["system"] is not None:
        cmd += ["--system", rec["system"]]
    if adapter:
        cmd += ["--adapter", adapter]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    last = out.rstrip("\n").split("\n")[-1]
    return [int(t) for t in last.split()] if last.strip() else []

def llama_top(model, prompt, k=5):
    if not DUMP:
        return None
    out = subprocess.run([DUMP, model, str(k)] + [str(int(t)) for t in prompt], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["top"]

def agree(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n

cases = [("tied", "tied/w", None), ("untied", "untied/w", None), ("tied+lora", "tied/w", "lora")]
ok = True
worst_top = {}
for name, wprefix, lora in cases:
    index, w = ref.load_weights(f"{W}/{wprefix}")
    cfg = index["config"]
    lw = None
    if lora:
        li, la = ref.load_weights(f"{W}/{lora}/w")
        lw = (li["config"]["alpha"], li["config"]["rank"], la)
    gbase = "tied" if name.startswith("tied") else "untied"
    for i, rec in enumerate(recs):
        prompt, _ = ds.record(i)
        want, margins, first = ref.greedy(cfg, w, prompt, N, eog, lw)
        line = f"{name:10s} prompt {i} ({len(prompt):4d} tokens):"
        for t in ("f16", "q8_0"):
            got = llama_generate(f"{W}/{gbase}-{t}.gguf", rec, f"{W}/lora.gguf" if lora else None)
            n = agree(want, got)
            same = got == want
            if t == "f16" and not same:
                ok = False
            line += f"  {t}: {'identical' if same else f'{n}/{len(want)} agree'}"
            if t == "f16" and not same:
                line += f" (numpy {want} llama.cpp {got}; margins {[round(m, 3) for m in margins]})"
        line += f"  [numpy min top1-top2 margin {min(margins):.3f}]"
        print(line)
        if not lora and DUMP:
            top_np = np.argsort(-first, kind="stable")[:5]
            for t in ("f16", "q8_0"):
                top = llama_top(f"{W}/{gbase}-{t}.gguf", prompt)
                d = max(abs(first[tid] - lg) for tid, lg in top)
                worst_top[(name, t)] = max(worst_top.get((name, t), 0.0), d)
                if i == 0:
                    if t == "f16":
                        print(f"    top-5 numpy     : " + " ".join(f"{int(x)}:{first[x]:.4f}" for x in top_np))
                    print(f"    top-5 llama {t:4s}: " + " ".join(f"{tid}:{lg:.4f}" for tid, lg in top)
                          + f"   (ids {'same' if [tid for tid, _ in top] == list(map(int, top_np)) else 'DIFFER'})")
# Negative control: the same decode with HF's rotate_half RoPE (NEOX: pairs (x[i], x[i+D/2]))
# must NOT match llama.cpp, or this check could not tell the two apart.
def rope_neox(x, cos, sin):
    h = x.shape[-1] // 2
    x0, x1 = x[..., :h], x[..., h:]
    c, s = cos[:, None, :], sin[:, None, :]
    return np.concatenate([x0 * c - x1 * s, x0 * s + x1 * c], axis=-1)
index, w = ref.load_weights(f"{W}/tied/w")
adjacent, ref.rope = ref.rope, rope_neox
prompt, _ = ds.record(3)
neox, _, _ = ref.greedy(index["config"], w, prompt, N, eog)
ref.rope = adjacent
got = llama_generate(f"{W}/tied-f16.gguf", recs[3])
n = agree(neox, got)
print(f"negative control (rotate_half RoPE in numpy, prompt 3): {n}/{len(got)} tokens agree with llama.cpp"
      + (" -- as expected, they differ" if neox != got else " -- NOT sensitive to the RoPE layout"))
if neox == got:
    ok = False
# train.py --init-q8 trains an adapter on ref.q8_0_round of the base: it must be, tensor for
# tensor, what dream-make-model --type q8_0 wrote (else the adapter learns on another base).
for m in ("tied", "untied"):
    _, w = ref.load_weights(f"{W}/{m}/w")
    q = ref.load_gguf_tensors(f"{W}/{m}-q8_0.gguf")
    mats = [n for n, a in w.items() if np.ndim(a) == 2]
    bad = [n for n in mats if not np.array_equal(ref.q8_0_round(w[n]), q[n])]
    print(f"q8_0 round trip ({m}): {len(mats) - len(bad)} of {len(mats)} matrices equal the GGUF's"
          + (f"; differ: {bad[:3]}" if bad else ""))
    if bad:
        ok = False
for (name, t), d in sorted(worst_top.items()):
    print(f"first-step top-5 logits, {name} {t}: max |numpy - llama.cpp| = {d:.4f}")
print("check_parity:", "PASS (every f16 sequence identical)" if ok else "FAIL (an f16 sequence differs)")
sys.exit(0 if ok else 1)
EOF
