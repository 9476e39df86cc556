#!/usr/bin/env python3
"""train.py - trains dream-mini (or a LoRA adapter of one stage) on DATA.bin from dream-dataset.

The model is ref_forward.py's llama graph, the one llama.cpp runs for arch "llama": the same
tensors under the same GGUF names and row-major shapes, RMS norm, RoPE on ADJACENT pairs
(LLAMA_ROPE_TYPE_NORM, no permutation), GQA, SwiGLU, attention scale 1/sqrt(head_dim). `Mini`
below is ref_forward.forward line for line in PyTorch; --selftest compares the two on random
weights, and check_parity.sh compares ref_forward with llama.cpp (greedy tokens must agree).

Training: loss on answer tokens only (the prompt is context), bf16 autocast over float32 master
weights, AdamW + linear warmup + cosine decay, length-bucketed batches of padded sequences (right
padding under a causal mask, so real tokens never see padding), a wall-clock budget (--minutes,
for the whole command: it stops, evaluates and saves before it), deterministic data order from
--seed. GPU kernels (SDPA backward, atomics in reductions) are not bit-reproducible, so two runs
with one seed agree closely, not exactly.

Outputs: PREFIX.json + PREFIX.bin.0, .1, ... (f16, parts of <= 15 MiB; dream-make-model
--arch llama --weights PREFIX makes the GGUF). With --lora STAGE: an adapter PREFIX (f32) for
dream-make-adapter --weights PREFIX. The optimizer state (12 bytes a parameter, ~360 MB for
dream-mini) does not fit what the GPU machine returns; --state FILE keeps it on that machine.

  train.py --data DATA.bin[.xz] --out OUT/dream-mini [--val VAL.bin[.xz]] [--minutes 8] [--init PREFIX]
  train.py --data DATA.bin --init OUT/dream-mini --lora entity --rank 16 --out OUT/lora-entity
  train.py --selftest                  torch vs ref_forward on random weights (CPU or GPU)
  train.py --bench 4096,8192 [--batch-tokens N]   tokens/s and memory at fixed lengths
"""
import argparse
import contextlib
import json
import math
import os
import sys
import time

T_START = time.time()
# batches change shape every step; expandable segments keep the allocator from fragmenting
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_forward as ref  # noqa: E402


def key(name):
    """GGUF name -> a torch parameter name (no dots allowed there)."""
    return name.replace(".", "__")


# ---------------------------------------------------------------------------------------------
# The model: ref_forward.forward in PyTorch


def rms_norm(x, w, eps):
    x = x.float()
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, cos, sin):
    """x [B, T, heads, D]: each adjacent pair (x[2i], x[2i+1]) rotated by theta[p, i]."""
    x = x.float()
    x0, x1 = x[..., 0::2], x[..., 1::2]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


def attention(q, k, v, scale):
    """Causal softmax attention of q, k, v [B, heads, T, D]."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)
    T = q.shape[-2]  # torch < 2.0 (CPU tests only): the same math, unfused
    s = (q @ k.transpose(-1, -2)) * scale
    s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool, device=q.device), 1), float("-inf"))
    return torch.softmax(s.float(), -1).to(v.dtype) @ v


class Mini(torch.nn.Module):
    def __init__(self, cfg, tied=True):
        super().__init__()
        self.cfg, self.tied = cfg, tied
        self.w = torch.nn.ParameterDict(
            {key(n): torch.nn.Parameter(torch.empty(s)) for n, s in ref.tensor_shapes(cfg, tied).items()})
        self.lora = torch.nn.ParameterDict()
        self.lora_scale = 0.0
        cos, sin = ref.rope_tables(cfg["n_ctx"], cfg["head_dim"], cfg["rope_base"])
        self.register_buffer("cos", torch.from_numpy(cos), persistent=False)
        self.register_buffer("sin", torch.from_numpy(sin), persistent=False)

    def p(self, name):
        return self.w[key(name)]

    def add_lora(self, rank, alpha, targets=ref.LORA_TARGETS):
        """A ~ N(0, 1/n_in), B = 0 (the adapter starts as a no-op); the base is frozen."""
        for prm in self.w.values():
            prm.requires_grad_(False)
        for name, shape in ref.lora_shapes(self.cfg, rank, targets).items():
            t = torch.zeros(shape, device=self.cos.device)
            if name.endswith(".lora_a"):
                t.normal_(0, 1 / math.sqrt(shape[1]))
            self.lora[key(name)] = torch.nn.Parameter(t)
        self.lora_scale = alpha / rank

    def mm(self, h, name):
        y = F.linear(h, self.p(name))
        a = key(name + ".lora_a")
        if a in self.lora:
            y = y + self.lora_scale * F.linear(F.linear(h, self.lora[a]), self.lora[key(name + ".lora_b")])
        return y

    def hidden(self, ids):
        """The final-normed hidden states [B, T, E] of ids [B, T] at positions 0..T-1."""
        c = self.cfg
        D, H, KV, eps = c["head_dim"], c["n_head"], c["n_head_kv"], c["rms_eps"]
        B, T = ids.shape
        cos, sin = self.cos[:T], self.sin[:T]
        x = F.embedding(ids, self.p("token_embd.weight"))
        for i in range(c["n_layer"]):
            b = f"blk.{i}."
            h = rms_norm(x, self.p(b + "attn_norm.weight"), eps)
            v = self.mm(h, b + "attn_v.weight").view(B, T, KV, D)
            q = rope(self.mm(h, b + "attn_q.weight").view(B, T, H, D), cos, sin).to(v.dtype)
            k = rope(self.mm(h, b + "attn_k.weight").view(B, T, KV, D), cos, sin).to(v.dtype)
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            k = k.repeat_interleave(H // KV, dim=1)  # head hh reads kv head hh // (H / KV)
            v = v.repeat_interleave(H // KV, dim=1)
            a = attention(q, k, v, 1.0 / math.sqrt(D))
            x = x + self.mm(a.transpose(1, 2).reshape(B, T, H * D), b + "attn_output.weight")
            h = rms_norm(x, self.p(b + "ffn_norm.weight"), eps)
            x = x + self.mm(F.silu(self.mm(h, b + "ffn_gate.weight")) * self.mm(h, b + "ffn_up.weight"),
                            b + "ffn_down.weight")
        return rms_norm(x, self.p("output_norm.weight"), eps)

    def logits(self, h):
        return F.linear(h, self.p("token_embd.weight" if self.tied else "output.weight"))

    def init_weights(self, seed):
        g = torch.Generator().manual_seed(seed)
        resid = 0.02 / math.sqrt(2 * self.cfg["n_layer"])
        with torch.no_grad():
            for name, shape in ref.tensor_shapes(self.cfg, self.tied).items():
                prm = self.p(name)
                if len(shape) == 1:
                    prm.fill_(1.0)
                else:
                    std = resid if name.endswith(("attn_output.weight", "ffn_down.weight")) else 0.02
                    prm.copy_(torch.randn(shape, generator=g) * std)

    def load(self, tensors):
        with torch.no_grad():
            for name in ref.tensor_shapes(self.cfg, self.tied):
                self.p(name).copy_(torch.from_numpy(np.asarray(tensors[name], np.float32)))

    def export(self, lora=False):
        """{GGUF name: numpy array}: the model in f16, or the LoRA matrices in f32."""
        if lora:
            return {n.replace("__", "."): t.detach().float().cpu().numpy() for n, t in self.lora.items()}
        return {n: self.p(n).detach().to(torch.float16).cpu().numpy() for n in ref.tensor_shapes(self.cfg, self.tied)}


# ---------------------------------------------------------------------------------------------
# Data


def round_up(n, m):
    return (n + m - 1) // m * m


def make_batches(ds, idx, budget, rng, round_to=64):
    """Length-bucketed batches of record indices: records sorted by padded length (ties in random
    order, so batches change between epochs), cut so that rows x padded length <= budget."""
    L = round_up_arr(ds.length[idx] - 1, round_to)
    order = idx[np.lexsort((rng.random(len(idx)), L))]
    batches, cur, cur_max = [], [], 0
    for i in order:
        li = round_up(int(ds.length[i]) - 1, round_to)
        m = max(cur_max, li)
        if cur and m * (len(cur) + 1) > budget:
            batches.append(np.array(cur))
            cur, m = [], li
        cur.append(i)
        cur_max = m
    if cur:
        batches.append(np.array(cur))
    return batches


def round_up_arr(a, m):
    return (a + m - 1) // m * m


def collate(ds, batch, device, round_to=64, prompt_frac=0.0, rng=None):
    """inputs [B, T], targets [B, T], loss mask [B, T] (answer positions), stage [B], n real tokens;
    with prompt_frac, also a mask of that share of the prompt positions, drawn from rng."""
    lens = ds.length[batch] - 1
    T = round_up(int(lens.max()), round_to)
    inp = np.zeros((len(batch), T), np.int64)
    tgt = np.zeros((len(batch), T), np.int64)
    mask = np.zeros((len(batch), T), bool)
    pmask = np.zeros((len(batch), T), bool) if prompt_frac > 0 else None
    for r, i in enumerate(batch):
        p, a = ds.record(i)
        t = np.concatenate([p, a])
        n = len(t) - 1
        inp[r, :n], tgt[r, :n] = t[:-1], t[1:]
        mask[r, len(p) - 1:n] = True  # predicting answer token j from position len(p)-1+j
        if pmask is not None:
            pmask[r, :len(p) - 1] = rng.random(len(p) - 1) < prompt_frac
    st = ds.stage[batch]

    def dev(a):
        return torch.from_numpy(a).pin_memory().to(device, non_blocking=True) if device.type == "cuda" else \
            torch.from_numpy(a)

    if pmask is not None:
        return dev(inp), dev(tgt), dev(mask), dev(st), int(lens.sum()), dev(pmask)
    return dev(inp), dev(tgt), dev(mask), dev(st), int(lens.sum())


def step_loss(model, inp, tgt, mask, st, n_stages, dtype, pmask=None, prompt_weight=0.0):
    """Mean loss over answer tokens, plus per-stage sums and counts (on the device). With pmask,
    the loss adds prompt_weight x the mean next-token loss at those prompt positions (language
    modelling of the conversation text, where a name's later mentions can be copied from its
    first: the objective under which small transformers learn to copy), returned as well."""
    with torch.autocast(inp.device.type, dtype=dtype) if dtype != torch.float32 else contextlib.nullcontext():
        h = model.hidden(inp)
        logits = model.logits(h[mask])
        plogits = model.logits(h[pmask]) if pmask is not None else None
    lt = F.cross_entropy(logits.float(), tgt[mask], reduction="none")
    sid = st[:, None].expand_as(mask)[mask]
    # per-stage sums and counts by a one-hot product, not bincount (no deterministic CUDA kernel)
    onehot = F.one_hot(sid, n_stages).float()
    sums = lt.detach() @ onehot
    loss = lt.mean()
    ploss = None
    if plogits is not None and plogits.shape[0] > 0:
        ploss = F.cross_entropy(plogits.float(), tgt[pmask])
        loss = loss + prompt_weight * ploss
    out = (loss, sums, onehot.sum(0))
    return out + (ploss,) if pmask is not None else out


# ---------------------------------------------------------------------------------------------


def fused(device):
    """AdamW's fused CUDA kernel where there is one."""
    return {"fused": True} if device.type == "cuda" else {}


def lr_at(step, total, warmup, lr, min_ratio):
    if step < warmup:
        return lr * (step + 1) / warmup
    t = min(1.0, (step - warmup) / max(1, total - warmup))
    return lr * (min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * t)))


def evaluate(model, ds, idx, args, device, dtype, max_tokens, hard_deadline=float("inf")):
    """Token-weighted answer loss over ds records idx (up to max_tokens real tokens, and not past
    hard_deadline)."""
    model.eval()
    n_st = len(ds.stages)
    sums, cnts = torch.zeros(n_st, device=device), torch.zeros(n_st, device=device)
    seen = 0
    with torch.no_grad():
        for b in make_batches(ds, idx, args.batch_tokens, np.random.default_rng(0)):
            inp, tgt, mask, st, n = collate(ds, b, device)
            _, s, c = step_loss(model, inp, tgt, mask, st, n_st, dtype)
            sums += s
            cnts += c
            seen += n
            if seen >= max_tokens or time.time() > hard_deadline:
                break
    model.train()
    s, c = sums.cpu().numpy(), cnts.cpu().numpy()
    per = {ds.stages[k]: round(float(s[k] / c[k]), 4) for k in range(n_st) if c[k] > 0}
    return float(s.sum() / max(c.sum(), 1)), per


def greedy_check(model, ds, idx, device, hard_deadline, n=3, max_new=96):
    """Greedy answers to up to n prompts (one per stage first), decoded with DATA.json's pieces;
    cut short at hard_deadline (time.time())."""
    eog = ds.eog()  # every end-of-generation id of the vocabulary, as the engine stops at them
    picked, stages = [], set()
    for i in idx:
        if ds.stage[i] not in stages:
            picked.append(i)
            stages.add(ds.stage[i])
        if len(picked) == n:
            break
    for i in idx:
        if len(picked) >= n:
            break
        if i not in picked:
            picked.append(i)
    model.eval()
    exact = 0
    with torch.no_grad():
        for i in picked:
            p, a = ds.record(i)
            ids = [int(t) for t in p]
            out = []
            for _ in range(min(max_new, len(a) + 16)):
                if len(ids) >= model.cfg["n_ctx"] or time.time() > hard_deadline:
                    break
                h = model.hidden(torch.tensor([ids], device=device))
                t = int(torch.argmax(model.logits(h[0, -1:]).float()[0]))
                if t in eog:
                    break
                out.append(t)
                ids.append(t)
            gold = list(a[:-1])
            exact += out == gold
            print(f"--- record {i} ({ds.stages[ds.stage[i]]}), {len(p)} prompt tokens; "
                  f"{'EXACT' if out == gold else 'differs'}")
            print("gold:  " + repr(ds.decode(gold)[:400]))
            print("model: " + repr(ds.decode(out)[:400]))
    model.train()
    print(f"greedy check: {exact}/{len(picked)} answers exact")


def selftest(device):
    """Torch (float32) against ref_forward on random weights: tied, untied, and with a LoRA."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    cfg = dict(ref.MINI, n_layer=2, n_ctx=512)
    rng = np.random.default_rng(3)
    ids = rng.integers(0, cfg["n_vocab"], 200)
    worst = 0.0
    for tied, lora in ((True, False), (False, False), (True, True)):
        w = ref.random_weights(cfg, 5, tied)
        m = Mini(cfg, tied).to(device)
        m.load(w)
        lw = None
        if lora:
            m.add_lora(8, 16.0)
            lw = ref.random_lora(cfg, 8, 6)
            with torch.no_grad():
                for n, a in lw.items():
                    m.lora[key(n)].copy_(torch.from_numpy(a))
            lw = (16.0, 8, ref.as_f32(lw))
        with torch.no_grad():
            got = m.logits(m.hidden(torch.from_numpy(ids)[None].to(device)))[0].float().cpu().numpy()
        want = ref.forward(cfg, ref.as_f32(w), ids, lw)
        err = float(np.abs(got - want).max())
        worst = max(worst, err)
        agree = float(np.mean(got.argmax(-1) == want.argmax(-1)))
        print(f"selftest tied={tied} lora={lora}: max |logit diff| {err:.2e} over {got.shape}, argmax agreement {agree:.3f}")
    ok = worst < 2e-3
    print("selftest:", "PASS" if ok else "FAIL", f"(worst {worst:.2e}, limit 2e-3)")
    return ok


def bench(args, cfg, device, dtype):
    """Training-step throughput at fixed sequence lengths (random tokens, 10% answer positions)."""
    for L in [int(x) for x in args.bench.split(",")]:
        torch.cuda.empty_cache() if device.type == "cuda" else None
        torch.cuda.reset_peak_memory_stats() if device.type == "cuda" else None
        model = Mini(dict(cfg, n_ctx=max(cfg["n_ctx"], L)), not args.untied)
        model.init_weights(args.seed)
        model.to(device)
        if args.compile:
            model.hidden = torch.compile(model.hidden, dynamic=True)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **fused(device))
        B = max(1, args.batch_tokens // L)
        g = torch.Generator().manual_seed(0)
        inp = torch.randint(0, cfg["n_vocab"], (B, L), generator=g).to(device)
        tgt = torch.randint(0, cfg["n_vocab"], (B, L), generator=g).to(device)
        mask = torch.zeros(B, L, dtype=torch.bool, device=device)
        mask[:, int(L * 0.9):] = True
        st = torch.zeros(B, dtype=torch.long, device=device)
        times = []
        for it in range(args.bench_steps + 2):
            if device.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.time()
            loss, _, _ = step_loss(model, inp, tgt, mask, st, 1, dtype)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            if device.type == "cuda":
                torch.cuda.synchronize()
            if it >= 2:
                times.append(time.time() - t0)
        dt = float(np.median(times))
        mem = torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else 0.0
        print(f"bench: len {L} x batch {B} = {B * L} tokens/step: {dt * 1000:.0f} ms/step, "
              f"{B * L / dt:,.0f} tokens/s, peak memory {mem:.1f} GiB")
        del model, opt


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="DATA.bin from dream-dataset")
    ap.add_argument("--val", help="held-out DATA.bin: its loss is reported")
    ap.add_argument("--out", help="PREFIX of the weights written (PREFIX.json + PREFIX.bin.N)")
    ap.add_argument("--init", help="start from these weights (PREFIX); their config wins over the shape options")
    ap.add_argument("--minutes", type=float, default=8.0, help="wall-clock budget of the whole command")
    ap.add_argument("--reserve-s", type=float, default=30.0, help="seconds kept for the final eval, save and check")
    ap.add_argument("--steps", type=int, default=0, help="total optimizer steps (0: fit the budget, measured)")
    ap.add_argument("--start-step", type=int, default=0,
                    help="continue a schedule at this step (with --init, --state and --steps of the first command)")
    ap.add_argument("--fit-extra-s", type=float, default=0.0,
                    help="fit the cosine to this many training seconds beyond this command's budget "
                         "(a schedule that a later --start-step command finishes)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lr", type=float, default=0.0, help="peak LR (default 2e-3, LoRA 1e-3)")
    ap.add_argument("--min-lr-ratio", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--batch-tokens", type=int, default=131072, help="padded tokens per step")
    ap.add_argument("--log-every", type=int, default=25)
    ap.add_argument("--eval-every", type=int, default=0, help="steps between held-out evaluations (0: end only)")
    ap.add_argument("--val-tokens", type=int, default=2_000_000, help="at most this many held-out tokens per eval")
    ap.add_argument("--stages", help="comma list: train only on these stages")
    ap.add_argument("--prompt-loss", type=float, default=0.0,
                    help="weight of a next-token loss on prompt positions (0: answers only)")
    ap.add_argument("--prompt-frac", type=float, default=0.1, help="share of prompt positions it is taken at")
    ap.add_argument("--init-gguf", help="start from this GGUF's tensors (F32/F16/Q8_0), with --init-config")
    ap.add_argument("--init-config", help="the dream-weights PREFIX.json whose config --init-gguf has")
    ap.add_argument("--init-q8", action="store_true",
                    help="round the --init matrices through Q8_0 as dream-make-model --type q8_0 does: an adapter "
                         "then trains on the very base the seam mounts it on")
    ap.add_argument("--no-check", action="store_true", help="skip the final greedy check")
    ap.add_argument("--dtype", choices=("bf16", "f32"), default="bf16")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model (dynamic shapes)")
    ap.add_argument("--state", help="optimizer state FILE: loaded if it exists, saved at the end (with the float32 "
                    "master weights, which a continued schedule takes over the f16 --init ones)")
    ap.add_argument("--stop-at", type=int, default=0,
                    help="stop after this step of the --steps schedule (a first command of two that --deterministic "
                         "can repeat: the step does not depend on the machine's speed)")
    ap.add_argument("--lora", metavar="STAGE", help="train a LoRA adapter of the --init base on STAGE's records")
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--alpha", type=float, default=0.0, help="LoRA alpha (default 2 x rank)")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--bench", help="comma list of sequence lengths: measure and exit")
    ap.add_argument("--bench-steps", type=int, default=5)
    ap.add_argument("--untied", action="store_true", help="a separate output matrix (fresh models)")
    ap.add_argument("--deterministic", action="store_true",
                    help="bit-reproducible weights: deterministic CUDA kernels (cuBLAS workspace, the attention and "
                         "embedding backward); needs --steps, so where training stops does not depend on the speed")
    for k in ("n_embd", "n_layer", "n_head", "n_head_kv", "head_dim", "n_ff", "n_ctx"):
        ap.add_argument("--" + k.replace("_", "-"), type=int, default=ref.MINI[k])
    args = ap.parse_args()
    if args.deterministic:
        # With --steps, the data order (--seed) and the arguments, these make every kernel's sums
        # run in one order, so two runs write the same bytes (train/README.md, "Bit for bit").
        # cuBLAS reads its workspace setting when its first handle is made: before any matmul.
        if not args.steps and not (args.selftest or args.bench):
            ap.error("--deterministic needs --steps N: a time budget stops at a step that depends on the machine's speed")
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if args.dtype == "bf16" and device.type == "cuda" else torch.float32
    print(f"torch {torch.__version__}, device {device}"
          + (f" ({torch.cuda.get_device_name()})" if device.type == "cuda" else "") + f", dtype {dtype}")
    if args.selftest:
        sys.exit(0 if selftest(device) else 1)
    torch.manual_seed(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    cfg = dict(ref.MINI)
    for k in ("n_embd", "n_layer", "n_head", "n_head_kv", "head_dim", "n_ff", "n_ctx"):
        cfg[k] = getattr(args, k)
    if args.bench:
        bench(args, cfg, device, dtype)
        return
    if not args.data or not args.out:
        ap.error("--data and --out are required (or --selftest / --bench)")
    deadline = T_START + args.minutes * 60 - args.reserve_s

    ds = ref.Dataset(args.data)
    val = ref.Dataset(args.val) if args.val else None
    tied = not args.untied
    init = None
    if args.init_gguf:
        if not args.init_config:
            ap.error("--init-gguf needs --init-config PREFIX.json (the shape of the weights)")
        with open(args.init_config) as f:
            index = json.load(f)
        init = ref.load_gguf_tensors(args.init_gguf)
        cfg = index["config"]
        tied = "output.weight" not in init
    elif args.init:
        index, init = ref.load_weights(args.init)
        if index["kind"] != "model":
            sys.exit(f"train.py: --init {args.init} holds a {index['kind']}, not model weights")
        cfg = index["config"]
        tied = "output.weight" not in init
    if args.init_q8:
        if init is None:
            ap.error("--init-q8 rounds the --init weights: it needs --init")
        init = {n: ref.q8_0_round(a) if np.ndim(a) == 2 else a for n, a in init.items()}
    if ds.n_vocab != cfg["n_vocab"]:
        sys.exit(f"train.py: {args.data} has a vocabulary of {ds.n_vocab} tokens, the model {cfg['n_vocab']}")
    model = Mini(cfg, tied)
    if init is not None:
        model.load(init)
    else:
        model.init_weights(args.seed)
    if args.lora:
        if init is None:
            sys.exit("train.py: --lora needs --init BASE (the model the adapter is for)")
        alpha = args.alpha or 2.0 * args.rank
        model.add_lora(args.rank, alpha)
    model.to(device)
    if args.compile:
        model.hidden = torch.compile(model.hidden, dynamic=True)

    keep = set(args.stages.split(",")) if args.stages else None
    if args.lora:
        keep = {args.lora}
    unknown = (keep or set()) - set(ds.stages)
    if unknown:
        sys.exit(f"train.py: stage(s) {sorted(unknown)} are not in {args.data} (it has {ds.stages})")
    sel = np.array([i for i in range(len(ds)) if keep is None or ds.stages[ds.stage[i]] in keep], np.int64)
    sel = sel[ds.length[sel] <= cfg["n_ctx"]]
    vsel = np.arange(len(val)) if val is not None else None
    if val is not None and keep is not None:
        vsel = np.array([i for i in vsel if val.stages[val.stage[i]] in keep], np.int64)
    if len(sel) == 0:
        sys.exit(f"train.py: no records to train on in {args.data}")
    n_param = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"model: {json.dumps(cfg)} tied={tied}; trainable {n_param / 1e6:.2f}M params"
          + (f" (LoRA rank {args.rank} alpha {alpha} on stage {args.lora})" if args.lora else ""))
    print(f"data: {len(sel)} records, {int(ds.length[sel].sum()):,} tokens, "
          f"{int(ds.n_answer[sel].sum()):,} answer tokens; stages {ds.stages}"
          + (f"; held out {len(vsel)} records" if val is not None else ""))

    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() == 2 and not args.lora]
    rest = [p for p in params if p.dim() != 2 or args.lora]
    lr = args.lr or (1e-3 if args.lora else 2e-3)
    groups = [g for g in ({"params": decay, "weight_decay": args.weight_decay},
                          {"params": rest, "weight_decay": 0.0}) if g["params"]]
    opt = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), **fused(device))
    if args.state and os.path.exists(args.state):
        saved = torch.load(args.state, map_location=device)
        if "optimizer" in saved:  # since the stop-at split: the master weights come with it
            with torch.no_grad():
                for n, t in model.named_parameters():
                    t.copy_(saved["master"][n])
            saved = saved["optimizer"]
        opt.load_state_dict(saved)
        print(f"optimizer state from {args.state}")

    rng = np.random.default_rng(args.seed)
    n_st = len(ds.stages)
    total = args.steps
    if args.start_step and not ((args.init or args.init_gguf) and total):
        ap.error("--start-step continues a schedule: it needs --init and --steps")
    if args.stop_at and not (total and args.start_step < args.stop_at < total):
        ap.error("--stop-at N needs --steps M and --start-step < N < M")
    step, epoch, tokens_seen = args.start_step, 0, 0
    log_loss, log_n = torch.zeros((), device=device), 0
    p_sum, p_n = torch.zeros((), device=device), 0
    st_sum, st_cnt = torch.zeros(n_st, device=device), torch.zeros(n_st, device=device)
    t_log, tok_log = time.time(), 0
    t_train0, stopped = None, "steps"
    history = []
    print(f"setup done at {time.time() - T_START:.1f}s; training until {deadline - T_START:.0f}s")
    while total == 0 or step < total:
        batches = make_batches(ds, sel, args.batch_tokens, rng)
        order = rng.permutation(len(batches))
        for bi in order:
            if time.time() >= deadline:
                stopped = "time"
                break
            if total and step >= total:
                break
            if args.stop_at and step >= args.stop_at:
                stopped = "stop-at"
                break
            if args.prompt_loss > 0:
                inp, tgt, mask, st, n, pm = collate(ds, batches[bi], device, prompt_frac=args.prompt_frac, rng=rng)
            else:
                inp, tgt, mask, st, n, pm = collate(ds, batches[bi], device) + (None,)
            cur_lr = lr_at(step, total or 10**9, args.warmup, lr, args.min_lr_ratio)
            for g in opt.param_groups:
                g["lr"] = cur_lr
            loss, s, c, *pl = step_loss(model, inp, tgt, mask, st, n_st, dtype, pm, args.prompt_loss)
            if pl and pl[0] is not None:
                p_sum += pl[0].detach()
                p_n += 1
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            tokens_seen += n
            tok_log += n
            log_loss += loss.detach()
            log_n += 1
            st_sum += s
            st_cnt += c
            if step - args.start_step in (10, 30) and device.type == "cuda":
                torch.cuda.synchronize()  # the step timings below are of finished steps
            if step == args.start_step + 10:
                t_train0, tok0 = time.time(), tokens_seen
            if total == 0 and step == 30 and t_train0:
                # fit the cosine to the budget: steps at the measured rate (printed: pass --steps
                # to repeat the schedule exactly)
                rate = (time.time() - t_train0) / 20
                total = step + max(1, int((deadline - time.time() + args.fit_extra_s) / rate * 0.97))
                print(f"schedule: {rate * 1000:.0f} ms/step -> --steps {total}")
            if step % args.log_every == 0:
                now = time.time()
                s_np, c_np = st_sum.cpu().numpy(), st_cnt.cpu().numpy()
                per = " ".join(f"{ds.stages[k]}={s_np[k] / c_np[k]:.3f}" for k in range(n_st) if c_np[k] > 0)
                if p_n:
                    per += f" prompt={float(p_sum) / p_n:.3f}"
                    p_sum.zero_()
                    p_n = 0
                mem = torch.cuda.max_memory_allocated() / 2**30 if device.type == "cuda" else 0
                print(f"step {step}/{total or '?'} ep {epoch} lr {cur_lr:.2e} loss {float(log_loss) / log_n:.4f} "
                      f"[{per}] {tok_log / (now - t_log):,.0f} tok/s mem {mem:.1f}G t {now - T_START:.0f}s", flush=True)
                history.append({"step": step, "loss": round(float(log_loss) / log_n, 4)})
                log_loss.zero_(), st_sum.zero_(), st_cnt.zero_()
                log_n, t_log, tok_log = 0, now, 0
            if val is not None and args.eval_every and step % args.eval_every == 0:
                vl, vper = evaluate(model, val, vsel, args, device, dtype, args.val_tokens)
                print(f"held-out loss {vl:.4f} {vper}", flush=True)
        else:
            epoch += 1
            continue
        break

    elapsed = time.time() - (t_train0 or T_START)
    if args.deterministic and stopped == "time":
        print(f"train.py: --deterministic, but the time budget stopped training at step {step} of {total}: "
              f"these weights depend on the machine's speed; give more --minutes", file=sys.stderr)
    print(f"stopped by {stopped} at step {step} (epoch {epoch}), {tokens_seen:,} tokens"
          + (f", {(tokens_seen - tok0) / elapsed:,.0f} tok/s after warm-up" if t_train0 else ""))
    result = {"steps": step, "schedule_steps": total, "start_step": args.start_step, "tokens": tokens_seen, "epochs": epoch, "stopped": stopped, "seed": args.seed,
              "deterministic": bool(args.deterministic),
              "lr": lr, "batch_tokens": args.batch_tokens, "history": history[-20:]}
    hard = T_START + args.minutes * 60 - 5  # the save must still happen before the budget ends
    if val is not None:
        vl, vper = evaluate(model, val, vsel, args, device, dtype, args.val_tokens, hard - args.reserve_s / 2)
        print(f"held-out loss {vl:.4f} {vper}")
        result["val_loss"], result["val_per_stage"] = vl, vper
    if args.lora:
        lcfg = dict(rank=args.rank, alpha=alpha, stage=args.lora, base=os.path.basename(args.init or args.init_gguf))
        files = ref.save_weights(args.out, lcfg, model.export(lora=True), kind="lora", extra={"train": result})
    else:
        files = ref.save_weights(args.out, cfg, model.export(), extra={"train": result})
    print("wrote " + ", ".join(f"{f} ({os.path.getsize(f) / 2**20:.1f} MiB)" for f in files))
    if args.state:
        master = {n: t.detach().float().clone() for n, t in model.named_parameters()}
        torch.save({"optimizer": opt.state_dict(), "master": master}, args.state)
        print(f"optimizer state -> {args.state}")
    if not args.no_check:
        cds, cidx = (val, vsel) if val is not None and len(vsel) else (ds, sel)
        greedy_check(model, cds, cidx, device, hard)
    print(f"done in {time.time() - T_START:.0f}s")


if __name__ == "__main__":
    main()
