#!/usr/bin/env python3
"""ref_forward.py - dream-mini's reference: the llama graph of the pinned llama.cpp in numpy
(float32), plus the file formats train.py and the C tools share.

The model (llama.cpp src/models/llama.cpp, arch "llama", LLAMA_ROPE_TYPE_NORM):
    x = token_embd[ids]
    per layer:  h = rms_norm(x) * attn_norm
                q, k, v = h Wq^T, h Wk^T, h Wv^T          heads contiguous: row hh*D + d
                q, k = rope(q), rope(k)                    ADJACENT pairs (x[2i], x[2i+1]),
                                                           theta = pos * base^(-2i/D)
                a = softmax(q k^T / sqrt(D) + causal) v    GQA: head hh reads kv head hh // (H/KV)
                x = x + a Wo^T
                h = rms_norm(x) * ffn_norm
                x = x + (silu(h Wg^T) * (h Wu^T)) Wd^T     SwiGLU
    logits = (rms_norm(x) * output_norm) Wout^T            Wout = output, else token_embd (tied)
rms_norm(x) = x / sqrt(mean(x^2) + eps). No biases, no q/k norms, no embedding scale.
LoRA (llama.cpp build_lora_mm): W x + (alpha / rank) * scale * B (A x), A [rank, n_in], B [n_out, rank].

Matrices are stored as PyTorch / numpy do, [n_out, n_in] row-major; the GGUF's ggml ne is the
shape reversed, so nothing is transposed or permuted on the way to llama.cpp.

Files:
  PREFIX.json + PREFIX.bin.0, .1, ...   weights (save_weights / load_weights; tools/weights.h)
  DATA.bin + DATA.json                  tokenized records (read_dataset; tools/make_dataset.c)

Command line (numpy only; used by check_parity.sh):
  ref_forward.py random --out PREFIX [--seed S] [shape options] [--untied]
  ref_forward.py random-lora --base PREFIX --out PREFIX [--rank R] [--alpha A] [--seed S]
  ref_forward.py greedy --weights PREFIX --data DATA.bin [--adapter PREFIX] [--max-new N]
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np

PART_BYTES = 15 << 20  # the GPU machine returns files of at most 16 MiB
ALIGN = 64

# dream-mini: llama graph, Phi-3 vocabulary. rope_base/rms_eps are what dream-make-model writes.
MINI = dict(arch="llama", n_vocab=32064, n_embd=384, n_layer=8, n_head=6, n_head_kv=2, head_dim=64,
            n_ff=1536, n_ctx=8192, rope_base=10000.0, rms_eps=1e-5)

LORA_TARGETS = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")


def tensor_shapes(cfg, tied=True):
    """GGUF name -> row-major shape of every tensor of the model, in file order."""
    E, F, D, H, KV, V = (cfg[k] for k in ("n_embd", "n_ff", "head_dim", "n_head", "n_head_kv", "n_vocab"))
    s = {"token_embd.weight": (V, E), "output_norm.weight": (E,)}
    if not tied:
        s["output.weight"] = (V, E)
    for i in range(cfg["n_layer"]):
        b = f"blk.{i}."
        s[b + "attn_norm.weight"] = (E,)
        s[b + "attn_q.weight"] = (H * D, E)
        s[b + "attn_k.weight"] = (KV * D, E)
        s[b + "attn_v.weight"] = (KV * D, E)
        s[b + "attn_output.weight"] = (E, H * D)
        s[b + "ffn_norm.weight"] = (E,)
        s[b + "ffn_gate.weight"] = (F, E)
        s[b + "ffn_up.weight"] = (F, E)
        s[b + "ffn_down.weight"] = (E, F)
    return s


def lora_shapes(cfg, rank, targets=LORA_TARGETS):
    """name.lora_a [rank, n_in] and name.lora_b [n_out, rank] for every adapted matrix."""
    out = {}
    for name, shape in tensor_shapes(cfg).items():
        if len(shape) == 2 and name.startswith("blk.") and name.split(".")[2] in targets:
            n_out, n_in = shape
            out[name + ".lora_a"] = (rank, n_in)
            out[name + ".lora_b"] = (n_out, rank)
    return out


# ---------------------------------------------------------------------------------------------
# Weights files


def save_weights(prefix, config, tensors, kind="model", extra=None, dtype=None):
    """Writes PREFIX.json and PREFIX.bin.0, .1, ... (parts of at most PART_BYTES). tensors maps
    GGUF names to arrays, written in their own dtype (float16 or float32) unless dtype is given.
    Returns the list of files written."""
    index = {"format": "dream-weights", "version": 1, "kind": kind, "config": config, "tensors": {}}
    if extra:
        index.update(extra)
    blobs, off = [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a if dtype is None else a.astype(dtype))
        if a.dtype not in (np.float16, np.float32):
            raise ValueError(f"{name}: dtype {a.dtype}; only float16 and float32 are written")
        pad = (-off) % ALIGN
        if pad:
            blobs.append(b"\0" * pad)
            off += pad
        index["tensors"][name] = {"shape": list(a.shape), "dtype": "f16" if a.dtype == np.float16 else "f32",
                                  "offset": off}
        b = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        blobs.append(b)
        off += len(b)
    index["total_bytes"] = off
    data = b"".join(blobs)
    d = os.path.dirname(prefix)
    if d:
        os.makedirs(d, exist_ok=True)
    files = []
    for k, start in enumerate(range(0, max(len(data), 1), PART_BYTES)):
        path = f"{prefix}.bin.{k}"
        with open(path, "wb") as f:
            f.write(data[start:start + PART_BYTES])
        files.append(path)
    # stale parts of an earlier, larger save would be read as part of this one
    k = len(files)
    while os.path.exists(f"{prefix}.bin.{k}"):
        os.remove(f"{prefix}.bin.{k}")
        k += 1
    with open(prefix + ".json", "w") as f:
        json.dump(index, f, indent=1)
    files.append(prefix + ".json")
    return files


def load_weights(prefix):
    """(index, {name: array in its stored dtype}) from PREFIX.json + PREFIX.bin or PREFIX.bin.N."""
    with open(prefix + ".json") as f:
        index = json.load(f)
    if index.get("format") != "dream-weights" or index.get("version") != 1:
        raise ValueError(f"{prefix}.json is not a dream-weights version 1 index")
    if os.path.exists(prefix + ".bin"):
        data = open(prefix + ".bin", "rb").read()
    else:
        parts, k = [], 0
        while os.path.exists(f"{prefix}.bin.{k}"):
            parts.append(open(f"{prefix}.bin.{k}", "rb").read())
            k += 1
        data = b"".join(parts)
    if len(data) != index["total_bytes"]:
        raise ValueError(f"{prefix}: {len(data)} bytes of data, the index says {index['total_bytes']}: a part is missing")
    out = {}
    for name, t in index["tensors"].items():
        dt = np.dtype("<f2") if t["dtype"] == "f16" else np.dtype("<f4")
        n = int(np.prod(t["shape"]))
        out[name] = np.frombuffer(data, dt, n, t["offset"]).reshape(t["shape"])
    return index, out


def load_gguf_tensors(path):
    """{name: float32 array in PyTorch's [n_out, n_in] shape} of a GGUF's F32, F16 and Q8_0 tensors.

    A GGUF (version 2 or 3): magic, version, tensor count, key-value count, the key-values, then
    per tensor its name, dims (ne, innermost first), ggml type and offset from the data start,
    which is aligned to general.alignment (32 unless set). Q8_0 is blocks of 32 weights: an f16
    scale d then 32 int8 q, weight = d * q. Used to continue training from a committed GGUF when
    the f16 weights do not fit what the GPU machine carries (a Q8_0 round trip moves a weight by
    at most half a quantization step)."""
    import struct
    buf = open(path, "rb").read()
    if buf[:4] != b"GGUF":
        raise ValueError(f"{path} is not a GGUF file")
    ver, n_t, n_kv = struct.unpack_from("<IQQ", buf, 4)
    if ver not in (2, 3):
        raise ValueError(f"{path}: GGUF version {ver} is not read here")
    pos = 24
    scal = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def string():
        nonlocal pos
        (n,) = struct.unpack_from("<Q", buf, pos)
        pos += 8 + n
        return buf[pos - n:pos].decode("utf-8")

    def value(t):
        nonlocal pos
        if t == 8:
            return string()
        if t == 9:
            et, n = struct.unpack_from("<IQ", buf, pos)
            pos += 12
            return [value(et) for _ in range(n)]
        if t not in scal:
            raise ValueError(f"{path}: unknown GGUF value type {t}")
        (v,) = struct.unpack_from("<" + scal[t], buf, pos)
        pos += struct.calcsize(scal[t])
        return v

    kv = {}
    for _ in range(n_kv):
        k = string()
        (t,) = struct.unpack_from("<I", buf, pos)
        pos += 4
        kv[k] = value(t)
    infos = []
    for _ in range(n_t):
        name = string()
        (nd,) = struct.unpack_from("<I", buf, pos)
        ne = struct.unpack_from(f"<{nd}Q", buf, pos + 4)
        typ, off = struct.unpack_from("<IQ", buf, pos + 4 + 8 * nd)
        pos += 4 + 8 * nd + 12
        infos.append((name, ne, typ, off))
    align = kv.get("general.alignment", 32)
    base = (pos + align - 1) // align * align
    out = {}
    for name, ne, typ, off in infos:
        n = int(np.prod(ne))
        shape = tuple(reversed(ne))
        at = base + off
        if typ == 0:
            a = np.frombuffer(buf, "<f4", n, at).copy()
        elif typ == 1:
            a = np.frombuffer(buf, "<f2", n, at).astype(np.float32)
        elif typ == 8:
            blocks = np.frombuffer(buf, np.dtype([("d", "<f2"), ("q", "i1", 32)]), n // 32, at)
            a = (blocks["d"].astype(np.float32)[:, None] * blocks["q"].astype(np.float32)).reshape(-1)
        else:
            raise ValueError(f"{path}: tensor {name} has ggml type {typ}; only F32, F16 and Q8_0 are read")
        out[name] = a.reshape(shape)
    return out


def q8_0_round(a):
    """a (float32, last dim a multiple of 32) as it comes back from a Q8_0 GGUF: ggml's reference
    quantizer per block of 32 along the innermost dim (d = amax / 127 stored as f16, q =
    roundf(x / d) with the f32 1/d, half away from zero), then d * q. An adapter trained on this
    base sees the very weights dream-make-model --type q8_0 writes (train.py --init-q8)."""
    x = np.asarray(a, np.float32).reshape(-1, 32)
    amax = np.abs(x).max(axis=1)
    d = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    v = (x * inv[:, None]).astype(np.float32)
    q = (np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))).astype(np.float32)
    return (d.astype(np.float16).astype(np.float32)[:, None] * q).reshape(np.shape(a))


# ---------------------------------------------------------------------------------------------
# Dataset files


class Dataset:
    """DATA.bin version 2 (tools/make_dataset.c): records of prompt + answer token ids. DATA.bin.xz
    or DATA.bin.gz are read too (prompts repeat across stages, so xz makes data.bin ~18x smaller:
    the GPU machine carries 64 MiB in all); DATA.json is found beside either."""

    def __init__(self, path):
        if path.endswith(".xz"):
            import lzma
            buf = lzma.open(path).read()
            path = path[:-3]
        elif path.endswith(".gz"):
            import gzip
            buf = gzip.open(path).read()
            path = path[:-3]
        else:
            buf = open(path, "rb").read()
        if buf[:4] != b"DMDS":
            raise ValueError(f"{path} is not a dream-dataset file (no DMDS magic)")
        version, n_rec, self.n_vocab, n_stages, tb = struct.unpack_from("<5I", buf, 4)
        (n_tok,) = struct.unpack_from("<Q", buf, 24)
        if version != 2:
            raise ValueError(f"{path}: data.bin version {version}; this reader knows 2 (re-run dream-dataset)")
        at = 32
        self.stages = [buf[at + 64 * i: at + 64 * (i + 1)].rstrip(b"\0").decode() for i in range(n_stages)]
        at += 64 * n_stages
        rec = np.frombuffer(buf, "<u4", 4 * n_rec, at).reshape(n_rec, 4)
        at += 16 * n_rec
        self.n_prompt = rec[:, 0].astype(np.int64)
        self.n_answer = rec[:, 1].astype(np.int64)
        self.stage = rec[:, 2].astype(np.int64)
        self.source = rec[:, 3].astype(np.int64)
        self.length = self.n_prompt + self.n_answer
        self.offset = np.concatenate([[0], np.cumsum(self.length)[:-1]]).astype(np.int64)
        self.tokens = np.frombuffer(buf, "<u2" if tb == 2 else "<u4", n_tok, at)
        if int(self.length.sum()) != n_tok:
            raise ValueError(f"{path}: the records' lengths do not add up to the header's token count")
        base = path[:-4] if path.endswith(".bin") else path
        self.meta = None
        if os.path.exists(base + ".json"):
            with open(base + ".json") as f:
                self.meta = json.load(f)

    def __len__(self):
        return len(self.n_prompt)

    def record(self, i):
        """(prompt ids, answer ids) of record i, as int64 arrays (the answer ends with <|end|>)."""
        o, p, a = self.offset[i], self.n_prompt[i], self.n_answer[i]
        t = self.tokens[o:o + p + a].astype(np.int64)
        return t[:p], t[p:]

    def eog(self):
        return set(self.meta["eog"]) if self.meta else set()

    def decode(self, ids):
        """The text of ids from DATA.json's piece table (control tokens shown as their text)."""
        if not self.meta:
            return " ".join(map(str, ids))
        pieces = self.meta["pieces_hex"]
        return b"".join(bytes.fromhex(pieces[int(t)]) for t in ids).decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------
# The forward pass


def rms_norm(x, w, eps):
    x = x.astype(np.float32)
    return (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(eps))) * w


def rope_tables(n_pos, head_dim, base):
    """cos, sin [n_pos, head_dim/2]: theta[p, i] = p * base^(-2i/head_dim) (float64, then f32)."""
    inv = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    ang = np.arange(n_pos, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def rope(x, cos, sin):
    """x [T, heads, D]: rotates each adjacent pair (x[2i], x[2i+1]) by theta[p, i] (NORM rope)."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    c, s = cos[:, None, :], sin[:, None, :]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def silu(x):
    return x / (np.float32(1) + np.exp(-x))


def as_f32(w):
    """The weights (or LoRA matrices) widened to float32 once, for forward."""
    return {k: np.asarray(v, np.float32) for k, v in w.items()}


def forward(cfg, f, ids, lora=None, lora_scale=1.0, last_only=False):
    """Logits [T, n_vocab] (float32) of the token ids at positions 0..T-1 ([1, n_vocab] for the
    last position with last_only). f: name -> float32 array (as_f32); lora: (alpha, rank,
    {name.lora_a / name.lora_b: float32 array}) or None."""
    E, D, H, KV, eps = cfg["n_embd"], cfg["head_dim"], cfg["n_head"], cfg["n_head_kv"], cfg["rms_eps"]
    ab = {}
    if lora:
        alpha, rank, ab = lora
        scale = np.float32(alpha / rank * lora_scale)

    def mm(h, name):
        y = h @ f[name].T
        if name + ".lora_a" in ab:
            y = y + scale * ((h @ ab[name + ".lora_a"].T) @ ab[name + ".lora_b"].T)
        return y

    T = len(ids)
    cos, sin = rope_tables(T, D, cfg["rope_base"])
    x = f["token_embd.weight"][np.asarray(ids)]
    causal = np.triu(np.full((T, T), -np.inf, np.float32), 1)
    group = H // KV
    for i in range(cfg["n_layer"]):
        b = f"blk.{i}."
        h = rms_norm(x, f[b + "attn_norm.weight"], eps)
        q = rope(mm(h, b + "attn_q.weight").reshape(T, H, D), cos, sin)
        k = rope(mm(h, b + "attn_k.weight").reshape(T, KV, D), cos, sin)
        v = mm(h, b + "attn_v.weight").reshape(T, KV, D)
        att = np.empty((T, H, D), np.float32)
        for hh in range(H):
            s = (q[:, hh] @ k[:, hh // group].T) * np.float32(1.0 / math.sqrt(D)) + causal
            s = np.exp(s - s.max(axis=-1, keepdims=True))
            att[:, hh] = (s / s.sum(axis=-1, keepdims=True)) @ v[:, hh // group]
        x = x + mm(att.reshape(T, H * D), b + "attn_output.weight")
        h = rms_norm(x, f[b + "ffn_norm.weight"], eps)
        x = x + mm(silu(mm(h, b + "ffn_gate.weight")) * mm(h, b + "ffn_up.weight"), b + "ffn_down.weight")
    if last_only:
        x = x[-1:]
    x = rms_norm(x, f["output_norm.weight"], eps)
    out = f.get("output.weight", f["token_embd.weight"])
    return x @ out.T


def greedy(cfg, w, prompt, max_new, eog, lora=None):
    """Greedy decode as dream_generate: argmax (lowest id wins ties), stop at an EOG token (not
    returned) or max_new. Returns (tokens, per-step margins top1-top2, first-step logits)."""
    ids, out, margins, first = list(prompt), [], [], None
    f = as_f32(w)
    if lora:
        lora = (lora[0], lora[1], as_f32(lora[2]))
    for _ in range(max_new):
        logits = forward(cfg, f, ids, lora, last_only=True)[-1]
        if first is None:
            first = logits
        t = int(np.argmax(logits))  # numpy's argmax returns the first maximum
        top2 = np.partition(logits, -2)[-2:]
        margins.append(float(top2[1] - top2[0]))
        if t in eog:
            break
        out.append(t)
        ids.append(t)
    return out, margins, first


# ---------------------------------------------------------------------------------------------
# Random weights (for the parity check)


def random_weights(cfg, seed, tied=True):
    """Float16 weights with decisive logits: matrices N(0, 1/n_in), norms in [0.5, 1.5] (so a
    norm that is not applied shows), embedding N(0, (2/sqrt(E))^2)."""
    rng = np.random.default_rng(seed)
    w = {}
    for name, shape in tensor_shapes(cfg, tied).items():
        if len(shape) == 1:
            a = rng.uniform(0.5, 1.5, shape)
        elif name in ("token_embd.weight", "output.weight"):
            a = rng.normal(0, 2.0 / math.sqrt(cfg["n_embd"]), shape)
        else:
            a = rng.normal(0, 1.0 / math.sqrt(shape[1]), shape)
        w[name] = a.astype(np.float16)
    return w


def random_lora(cfg, rank, seed):
    """A and B both random (a fresh PEFT adapter has B = 0, which would test nothing)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in lora_shapes(cfg, rank).items():
        std = 1.0 / math.sqrt(shape[1]) if name.endswith(".lora_a") else 0.5 / math.sqrt(rank)
        out[name] = rng.normal(0, std, shape).astype(np.float32)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("random", help="random f16 weights in the PREFIX.json/.bin format")
    r.add_argument("--out", required=True)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--untied", action="store_true")
    for k in ("n_embd", "n_layer", "n_head", "n_head_kv", "head_dim", "n_ff", "n_ctx"):
        r.add_argument("--" + k.replace("_", "-"), type=int, default=MINI[k])
    rl = sub.add_parser("random-lora", help="a random LoRA adapter for the model PREFIX")
    rl.add_argument("--base", required=True)
    rl.add_argument("--out", required=True)
    rl.add_argument("--rank", type=int, default=8)
    rl.add_argument("--alpha", type=float, default=16.0)
    rl.add_argument("--seed", type=int, default=2)
    g = sub.add_parser("greedy", help="greedy-decode every record's prompt of DATA.bin")
    g.add_argument("--weights", required=True)
    g.add_argument("--data", required=True)
    g.add_argument("--adapter", help="LoRA PREFIX")
    g.add_argument("--max-new", type=int, default=16)
    g.add_argument("--top", type=int, default=5)
    a = ap.parse_args()

    if a.cmd == "random":
        cfg = dict(MINI)
        for k in ("n_embd", "n_layer", "n_head", "n_head_kv", "head_dim", "n_ff", "n_ctx"):
            cfg[k] = getattr(a, k)
        save_weights(a.out, cfg, random_weights(cfg, a.seed, tied=not a.untied), extra={"seed": a.seed})
    elif a.cmd == "random-lora":
        index, _ = load_weights(a.base)
        cfg = dict(rank=a.rank, alpha=a.alpha, stage="parity", base=os.path.basename(a.base))
        save_weights(a.out, cfg, random_lora(index["config"], a.rank, a.seed), kind="lora")
    else:
        index, w = load_weights(a.weights)
        cfg = index["config"]
        lora = None
        if a.adapter:
            li, lw = load_weights(a.adapter)
            lora = (li["config"]["alpha"], li["config"]["rank"], lw)
        ds = Dataset(a.data)
        for i in range(len(ds)):
            prompt, _ = ds.record(i)
            toks, margins, first = greedy(cfg, w, prompt, a.max_new, ds.eog(), lora)
            top = np.argsort(-first, kind="stable")[:a.top]
            print(json.dumps({"record": i, "tokens": toks, "min_margin": min(margins) if margins else None,
                              "margins": [round(m, 4) for m in margins],
                              "top": [[int(t), float(first[t])] for t in top]}))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
