#!/usr/bin/env python3
"""Measure one GPU's kernel rates for comet's system presets.

What: times, with CUDA events, the kernels comet prices (GEMMs by shape and
precision, fused attention by sequence, head dim, causal mask and pass,
memory-bound kernels by kind, per-kernel launch and host-issue costs) and a
few whole single-GPU training steps of Llama- and GPT-style models.
Why: the presets' efficiencies must come from kernel-level data, not from
tuning to published step times; this script is how that data is made, and
`comet calibrate --kernels OUT/kernels.csv` turns it into a system file.

Usage (on a machine with a CUDA GPU and PyTorch):
    python3 tools/measure_kernels.py OUTDIR [--budget SECONDS] [--skip-steps]
                                     [--only launch|memory|gemm|attention ...]
                                     [--attention-backend cudnn|flash] [--profile MODEL ...]

Writes into OUTDIR:
    kernels.csv  rows in comet calibrate's kernel CSV format (docs/calibrate.md), times in seconds
    extra.csv    measurements the CSV format has no column for (GQA, cuDNN attention, backward
                 of norms, unfused eager variants, launch costs), as name,params,seconds,rate,unit
    steps.csv    whole training steps: model shape, batch, measured seconds per step
    profile.csv  with --profile: per-kernel GPU time per step of the named step models
    env.txt      GPU, driver, library versions and clocks
Each figure is the median of timed repetitions after warm-up. Rows are written as they are
measured, so a run cut short still leaves what it measured.
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

DEV = "cuda"


def timed(fn, *, target_s=0.04, min_reps=5, max_reps=200, warmup=3):
    """Median seconds of fn() over repetitions sized to fill about target_s."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    once = max(start.elapsed_time(stop) / 1e3, 1e-6)
    reps = int(min(max_reps, max(min_reps, target_s / once)))
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times)


class Writer:
    def __init__(self, path, header):
        self.f = open(path, "w", buffering=1)
        self.header = header
        self.f.write(",".join(header) + "\n")

    def row(self, **cells):
        unknown = set(cells) - set(self.header)
        if unknown:
            raise KeyError(f"unknown columns {unknown}")
        self.f.write(",".join("" if cells.get(h) is None else str(cells[h]) for h in self.header) + "\n")


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def environment(path):
    p = torch.cuda.get_device_properties(0)
    lines = [
        f"device: {p.name}, {p.multi_processor_count} SMs, {p.total_memory / 2**30:.1f} GiB",
        f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}",
        f"python {sys.version.split()[0]}",
        f"date {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
    ]
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,"
                              "power.limit", "--format=csv"], capture_output=True, text=True, timeout=20)
        lines.append(smi.stdout.strip())
    except Exception as e:  # the figures stand without it
        lines.append(f"nvidia-smi: {e}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    log(" | ".join(lines[:2]))


# ---------------------------------------------------------------- GEMMs
def gemm_rows(out, extra):
    # comet's convention: an (m x k) by (k x n) product, 2mnk FLOP, reducing over k.
    shapes = [(s, s, s) for s in (1024, 2048, 4096, 8192, 16384)]
    for h in (2048, 4096, 8192):
        for t in (512, 2048, 8192, 16384):
            shapes += [(t, 3 * h, h),      # QKV projection, forward
                       (t, 4 * h, h),      # fc1, forward
                       (t, h, 4 * h),      # fc2, forward (and fc1's data gradient)
                       (h, 4 * h, t)]      # fc1's weight gradient: reduces over the tokens
    for t in (128, 256):                   # few tokens: small-batch efficiency
        shapes += [(t, 4 * 4096, 4096), (4096, 4 * 4096, t)]
    for m, n, k in shapes:
        a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)
        sec = timed(lambda: torch.matmul(a, b))
        out.row(kind="gemm", m=m, n=n, k=k, dtype="bf16", seconds=f"{sec:.6e}")
        del a, b
    log(f"bf16 GEMMs: {len(shapes)} shapes")
    # fp8 (e4m3 operands, bf16 output, per-tensor scales), as FP8 training runs its GEMMs
    try:
        for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (16384, 16384, 16384),
                        (8192, 32768, 8192), (8192, 8192, 32768), (2048, 16384, 4096)]:
            a = torch.randn(m, k, device=DEV).to(torch.float8_e4m3fn)
            b = torch.randn(n, k, device=DEV).to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants
            one = torch.tensor(1.0, device=DEV)
            sec = timed(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
            out.row(kind="gemm", m=m, n=n, k=k, dtype="fp8", seconds=f"{sec:.6e}")
            del a, b
        log("fp8 GEMMs done")
    except Exception as e:
        extra.row(name="fp8_gemm_failed", params=str(e).replace(",", ";")[:200])
    # fp32 on CUDA cores and as TF32
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.randn(8192, 8192, device=DEV)
        b = torch.randn(8192, 8192, device=DEV)
        sec = timed(lambda: torch.matmul(a, b), max_reps=20)
        out.row(kind="gemm", m=8192, n=8192, k=8192, dtype="tf32" if tf32 else "fp32", seconds=f"{sec:.6e}")
        del a, b
    torch.backends.cuda.matmul.allow_tf32 = False


# ---------------------------------------------------------------- attention
def grouped_rows(extra):
    """MoE expert GEMMs: G experts of m tokens each through one grouped GEMM (torch._grouped_mm,
    what torchtitan's MoE runs), against one dense GEMM of all G*m tokens and one expert's GEMM
    alone, so the report can say which size a grouped GEMM's efficiency follows. Rows go to
    extra.csv as grouped_*, each with its FLOPs and TFLOP/s."""
    # (hidden, expert inner size, local experts): Qwen3-30B-A3B at EP 16, Qwen3-235B at EP 8,
    # DeepSeek-V3 at EP 64, Mixtral 8x7B at EP 8
    cases = [(2048, 768, 8), (4096, 1536, 16), (7168, 2048, 4), (4096, 14336, 1)]
    for h, f, g in cases:
        for m in (128, 256, 512, 1024, 2048):
            for name, k, n in (("up", h, 2 * f), ("down", f, h)):
                flops = 2.0 * g * m * k * n
                x = torch.randn(g * m, k, device=DEV, dtype=torch.bfloat16)
                w = torch.randn(g, k, n, device=DEV, dtype=torch.bfloat16)
                offs = torch.arange(m, g * m + 1, m, device=DEV, dtype=torch.int32)
                try:
                    try:
                        sec = timed(lambda: torch._grouped_mm(x, w, offs=offs))
                    except RuntimeError:  # some versions want the experts' weights column-major
                        w = torch.randn(g, n, k, device=DEV, dtype=torch.bfloat16).transpose(-2, -1)
                        sec = timed(lambda: torch._grouped_mm(x, w, offs=offs))
                    extra.row(name=f"grouped_{name}", params=f"h={h} f={f} experts={g} m={m} flops={flops:.6g}",
                              seconds=f"{sec:.6e}", rate=f"{flops / sec / 1e12:.1f}", unit="TFLOP/s")
                except Exception as e:
                    extra.row(name="grouped_failed", params=str(e).replace(",", ";")[:200])
                    log(f"grouped GEMMs failed: {e}")
                    return
                wd = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)
                sec = timed(lambda: torch.matmul(x, wd))
                extra.row(name=f"dense_{name}", params=f"h={h} f={f} experts={g} m={m} flops={flops:.6g}",
                          seconds=f"{sec:.6e}", rate=f"{flops / sec / 1e12:.1f}", unit="TFLOP/s")
                one = x[:m]
                sec = timed(lambda: torch.matmul(one, wd))
                extra.row(name=f"single_{name}", params=f"h={h} f={f} experts={g} m={m} flops={flops / g:.6g}",
                          seconds=f"{sec:.6e}", rate=f"{flops / g / sec / 1e12:.1f}", unit="TFLOP/s")
                del x, w, wd, offs
    log("grouped GEMMs done")


def attention_rows(out, extra, main_backend):
    """Fused attention through PyTorch's SDPA, by backend: `flash` (FlashAttention 2 in PyTorch) and
    `cudnn` (cuDNN's fused attention, which Transformer Engine runs on Hopper). The backend named
    main_backend goes into kernels.csv, the other into extra.csv."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    tokens = 16384
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    for seq in (512, 1024, 2048, 4096, 8192, 16384, 32768):
        batch = max(1, tokens // seq)
        for head_dim in (64, 128):
            heads = 2048 // head_dim
            for causal in (True, False):
                q, k, v = (torch.randn(batch, heads, seq, head_dim, device=DEV, dtype=torch.bfloat16,
                                       requires_grad=True) for _ in range(3))
                g = torch.randn_like(q)
                for bname, backend in backends:
                    try:
                        with sdpa_kernel(backend):
                            fwd = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))

                            def fb():
                                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                                o.backward(g)
                            both = timed(fb)
                    except Exception as e:
                        extra.row(name=f"attention_{bname}_failed", params=f"seq={seq} hd={head_dim}",
                                  seconds=None, rate=None, unit=str(e).replace(",", ";")[:120])
                        continue
                    flops = 4 * batch * heads * seq * seq * head_dim   # non-causal forward, comet's count
                    for pas, sec, mult in (("fwd", fwd, 1), ("fwd_bwd", both, 3)):
                        if bname == main_backend:
                            out.row(kind="attention", dtype="bf16", seq=seq, head_dim=head_dim,
                                    causal="true" if causal else "false", batch=batch, heads=heads,
                                    seconds=f"{sec:.6e}", **{"pass": pas})
                        extra.row(name=f"attention_{bname}_{pas}",
                                  params=f"seq={seq} head_dim={head_dim} causal={causal} batch={batch} heads={heads}",
                                  seconds=f"{sec:.6e}", rate=f"{mult * flops / sec / 1e12:.1f}",
                                  unit="TFLOP/s non-causal count")
                del q, k, v, g
    log("attention (flash, cudnn) done")
    # grouped-query attention: 8 query heads per key/value head
    for seq in (2048, 8192):
        batch, heads, head_dim = max(1, tokens // seq), 32, 128
        q = torch.randn(batch, heads, seq, head_dim, device=DEV, dtype=torch.bfloat16, requires_grad=True)
        k, v = (torch.randn(batch, heads // 8, seq, head_dim, device=DEV, dtype=torch.bfloat16,
                            requires_grad=True) for _ in range(2))
        g = torch.randn_like(q)
        try:
            fwd = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))

            def fb():
                F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True).backward(g)
            both = timed(fb)
            flops = 4 * batch * heads * seq * seq * head_dim
            for pas, sec, mult in (("fwd", fwd, 1), ("fwd_bwd", both, 3)):
                extra.row(name=f"attention_gqa8_{pas}", params=f"seq={seq} head_dim=128 causal=True batch={batch} "
                          f"heads={heads} kv_heads={heads // 8}", seconds=f"{sec:.6e}",
                          rate=f"{mult * flops / sec / 1e12:.1f}", unit="TFLOP/s non-causal count")
        except Exception as e:
            extra.row(name="attention_gqa_failed", params=f"seq={seq}", unit=str(e).replace(",", ";")[:120])
        del q, k, v, g


# ---------------------------------------------------------------- memory-bound kernels
def rope_triton():
    """A fused rotary embedding (half-split layout), one pass over x, as fused RoPE kernels run.
    x is (rows, 2*half) with rows = (batch, seq, heads) flattened; cos and sin are fp32 (seq, half)."""
    import triton
    import triton.language as tl

    @triton.jit
    def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, rows, heads, seq, sign,
                    HALF: tl.constexpr, ROWS: tl.constexpr):
        r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]   # ROWS (token, head) rows of 2*HALF
        i = tl.arange(0, HALF)[None, :]
        ok = r < rows
        token = (r // heads) % seq
        x1 = tl.load(x_ptr + r * 2 * HALF + i, mask=ok).to(tl.float32)
        x2 = tl.load(x_ptr + r * 2 * HALF + HALF + i, mask=ok).to(tl.float32)
        c = tl.load(cos_ptr + token * HALF + i, mask=ok)
        s = tl.load(sin_ptr + token * HALF + i, mask=ok) * sign
        tl.store(out_ptr + r * 2 * HALF + i, (x1 * c - x2 * s).to(tl.bfloat16), mask=ok)
        tl.store(out_ptr + r * 2 * HALF + HALF + i, (x2 * c + x1 * s).to(tl.bfloat16), mask=ok)

    def run(x, cos, sin, out, sign=1.0):
        *lead, heads, d = x.shape
        rows, block = x.numel() // d, 32
        rope_kernel[(triton.cdiv(rows, block),)](x, cos, sin, out, rows, heads, cos.shape[0], sign,
                                                 HALF=d // 2, ROWS=block)
    return run


class FusedRope(torch.autograd.Function):
    """RoPE forward and backward (the backward rotates by the negative angle) in one kernel each."""
    kernel = None

    @staticmethod
    def forward(ctx, x, cos, sin):
        ctx.save_for_backward(cos, sin)
        x = x.contiguous()
        out = torch.empty_like(x)
        FusedRope.kernel(x, cos, sin, out)
        return out

    @staticmethod
    def backward(ctx, g):
        cos, sin = ctx.saved_tensors
        g = g.contiguous()
        out = torch.empty_like(g)
        FusedRope.kernel(g, cos, sin, out, -1.0)
        return out, None, None


def memory_rows(out, extra):
    tokens, hidden = 16384, 8192
    n = tokens * hidden
    x = torch.randn(tokens, hidden, device=DEV, dtype=torch.bfloat16)
    y = torch.randn_like(x)
    z = torch.empty_like(x)
    w = torch.ones(hidden, device=DEV, dtype=torch.bfloat16)
    bvec = torch.zeros(hidden, device=DEV, dtype=torch.bfloat16)

    def mem(subkind, fn, nbytes, label, shape=f"{tokens}x{hidden} bf16"):
        sec = timed(fn)
        out.row(kind="memory", subkind=subkind, bytes=int(nbytes), seconds=f"{sec:.6e}")
        extra.row(name=f"memory_{label}", params=shape, seconds=f"{sec:.6e}",
                  rate=f"{nbytes / sec / 1e9:.0f}", unit="GB/s read+written")

    mem("elementwise", lambda: z.copy_(x), 2 * n * 2, "copy")
    mem("elementwise", lambda: torch.add(x, y, out=z), 3 * n * 2, "residual_add")
    mem("norm", lambda: F.layer_norm(x, (hidden,), w, bvec), 2 * n * 2, "layernorm_fwd")
    mem("norm", lambda: F.rms_norm(x, (hidden,), w), 2 * n * 2, "rmsnorm_fwd")
    mem("activation", lambda: F.gelu(x, approximate="tanh"), 2 * n * 2, "gelu_tanh_fwd")
    mem("activation", lambda: F.silu(x), 2 * n * 2, "silu_fwd")
    mem("softmax", lambda: torch.softmax(x, dim=-1), 2 * n * 2, "softmax_fwd")
    mem("cast", lambda: x.to(torch.float8_e4m3fn), 3 * n, "cast_bf16_to_fp8")
    # unfused and backward variants, for the record only
    half = x[:, : hidden // 2]
    sec = timed(lambda: F.silu(x[:, : hidden // 2].contiguous()) * x[:, hidden // 2:].contiguous())
    extra.row(name="memory_swiglu_eager", params=f"{tokens}x{hidden // 2} gate and up", seconds=f"{sec:.6e}",
              rate=f"{3 * half.numel() * 2 / sec / 1e9:.0f}", unit="GB/s counting 2 reads + 1 write")
    for label, fn in (("rmsnorm", lambda t: F.rms_norm(t, (hidden,), w)),
                      ("layernorm", lambda t: F.layer_norm(t, (hidden,), w, bvec))):
        xr = x.clone().requires_grad_(True)
        o = fn(xr)
        sec = timed(lambda: torch.autograd.grad(o, xr, y, retain_graph=True))
        extra.row(name=f"memory_{label}_bwd", params=f"{tokens}x{hidden}", seconds=f"{sec:.6e}",
                  rate=f"{3 * n * 2 / sec / 1e9:.0f}", unit="GB/s counting x and dy read and dx written")
        del xr, o
    sec = timed(lambda: (x * (448.0 / x.abs().amax())).to(torch.float8_e4m3fn))
    extra.row(name="memory_cast_fp8_with_amax_eager", params=f"{tokens}x{hidden}", seconds=f"{sec:.6e}",
              rate=f"{3 * n / sec / 1e9:.0f}", unit="GB/s counting 2 B read + 1 B written per element")
    # rotary embedding on (tokens, heads, head_dim)
    heads, d = hidden // 128, 128
    xs = x.view(tokens, heads, d)
    zs = z.view(tokens, heads, d)
    ang = torch.rand(tokens, d // 2, device=DEV) * 6.28
    cos, sin = ang.cos(), ang.sin()
    try:
        rope = rope_triton()
        mem("rope", lambda: rope(xs, cos.contiguous(), sin.contiguous(), zs), 2 * n * 2, "rope_fused_triton")
    except Exception as e:
        extra.row(name="rope_triton_failed", params=str(e).replace(",", ";")[:200])
    cos2 = torch.cat([cos, cos], -1).to(torch.bfloat16)[:, None, :]
    sin2 = torch.cat([sin, sin], -1).to(torch.bfloat16)[:, None, :]

    def rope_eager():
        x1, x2 = xs[..., : d // 2], xs[..., d // 2:]
        return xs * cos2 + torch.cat([-x2, x1], -1) * sin2
    sec = timed(rope_eager)
    extra.row(name="memory_rope_eager_rotate_half", params=f"{tokens}x{heads}x{d}", seconds=f"{sec:.6e}",
              rate=f"{2 * n * 2 / sec / 1e9:.0f}", unit="GB/s counting x read + out written")
    del x, y, z, xs, zs
    # fused AdamW, fp32 master weights: 28 bytes per parameter (p, g, m, v read; p, m, v written)
    count, size = 64, 4 * 2**20
    params = [torch.zeros(size, device=DEV, requires_grad=True) for _ in range(count)]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
    mem("optimizer", opt.step, 28 * count * size, "adamw_fused_fp32", f"{count} x {size} fp32 parameters")
    del params, opt
    log("memory-bound kernels done")


# ---------------------------------------------------------------- launch costs
def launch_rows(extra):
    x = torch.zeros(1, device=DEV)
    for _ in range(100):
        x.add_(1)
    torch.cuda.synchronize()
    reps = 5000
    t0 = time.perf_counter()
    for _ in range(reps):
        x.add_(1)
    torch.cuda.synchronize()
    host = (time.perf_counter() - t0) / reps
    extra.row(name="kernel_issue_eager", params="x.add_(1) on 1 element; 5000 back to back; wall clock",
              seconds=f"{host:.6e}", rate=f"{host * 1e6:.2f}", unit="us per kernel (host bound)")
    a = torch.randn(128, 128, device=DEV, dtype=torch.bfloat16)
    t0 = time.perf_counter()
    for _ in range(reps):
        torch.matmul(a, a)
    torch.cuda.synchronize()
    host = (time.perf_counter() - t0) / reps
    extra.row(name="kernel_issue_eager_gemm", params="128^3 bf16 matmul; 5000 back to back; wall clock",
              seconds=f"{host:.6e}", rate=f"{host * 1e6:.2f}", unit="us per kernel (host bound)")
    # on the GPU alone: the same tiny kernels replayed from a CUDA graph
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            x.add_(1)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    n = 1000
    with torch.cuda.graph(graph):
        for _ in range(n):
            x.add_(1)
    sec = timed(graph.replay, min_reps=10)
    extra.row(name="kernel_launch_graph", params=f"{n} x.add_(1) kernels in one CUDA graph; CUDA events",
              seconds=f"{sec / n:.6e}", rate=f"{sec / n * 1e6:.3f}", unit="us per kernel on the GPU")
    log("launch costs done")


# ---------------------------------------------------------------- whole training steps
class Block(torch.nn.Module):
    def __init__(self, hidden, heads, kv_heads, ffn, llama):
        super().__init__()
        self.heads, self.kv_heads, self.hd, self.llama = heads, kv_heads, hidden // heads, llama
        bias = not llama
        self.qkv = torch.nn.Linear(hidden, (heads + 2 * kv_heads) * self.hd, bias=bias)
        self.proj = torch.nn.Linear(hidden, hidden, bias=bias)
        self.up = torch.nn.Linear(hidden, (2 if llama else 1) * ffn, bias=bias)
        self.down = torch.nn.Linear(ffn, hidden, bias=bias)
        self.n1 = torch.nn.RMSNorm(hidden) if llama else torch.nn.LayerNorm(hidden)
        self.n2 = torch.nn.RMSNorm(hidden) if llama else torch.nn.LayerNorm(hidden)

    def forward(self, x, cos, sin):
        b, s, h = x.shape
        q, k, v = self.qkv(self.n1(x)).split([self.heads * self.hd, self.kv_heads * self.hd,
                                              self.kv_heads * self.hd], -1)
        q = q.view(b, s, self.heads, self.hd)
        k = k.view(b, s, self.kv_heads, self.hd)
        v = v.view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        if self.llama:
            if FusedRope.kernel is not None:        # one kernel each way, as Transformer Engine's fused RoPE
                q, k = FusedRope.apply(q, cos, sin), FusedRope.apply(k, cos, sin)
            else:                                   # the unfused rotate-half form
                c2 = torch.cat([cos, cos], -1).to(q.dtype)[:, None, :]
                s2 = torch.cat([sin, sin], -1).to(q.dtype)[:, None, :]

                def rot(t):
                    t1, t2 = t[..., : self.hd // 2], t[..., self.hd // 2:]
                    return t * c2 + torch.cat([-t2, t1], -1) * s2
                q, k = rot(q), rot(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv_heads != self.heads)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
        u = self.up(self.n2(x))
        if self.llama:
            g, u = u.chunk(2, -1)
            u = F.silu(g) * u
        else:
            u = F.gelu(u, approximate="tanh")
        return x + self.down(u)


class Model(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        h, llama = cfg["hidden"], cfg["style"] == "llama"
        self.emb = torch.nn.Embedding(cfg["vocab"], h)
        self.pos = None if llama else torch.nn.Embedding(cfg["seq"], h)
        self.blocks = torch.nn.ModuleList(Block(h, cfg["heads"], cfg["kv_heads"], cfg["ffn"], llama)
                                          for _ in range(cfg["layers"]))
        self.norm = torch.nn.RMSNorm(h) if llama else torch.nn.LayerNorm(h)
        self.head = torch.nn.Linear(h, cfg["vocab"], bias=False)
        hd = h // cfg["heads"]
        ang = torch.arange(cfg["seq"])[:, None] * (10000.0 ** (-torch.arange(0, hd, 2) / hd))[None, :]
        self.angles = ang.float()                   # (seq, head_dim / 2), moved to the GPU in fp32 by tables()

    def tables(self):
        if not hasattr(self, "_cos"):
            a = self.angles.to(DEV)
            self._cos, self._sin = a.cos().contiguous(), a.sin().contiguous()
        return self._cos, self._sin

    def forward(self, idx, labels):
        x = self.emb(idx)
        if self.pos is not None:
            x = x + self.pos.weight[None, : idx.shape[1]]
        cos, sin = self.tables()
        for blk in self.blocks:
            x = blk(x, cos, sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), labels.view(-1))


STEP_MODELS = [
    # Llama-style: RMSNorm, RoPE, SwiGLU, GQA, no biases
    dict(name="llama-0.2b", style="llama", layers=12, hidden=1024, heads=16, kv_heads=4, ffn=2816, seq=2048,
         vocab=32000, micro=8),
    dict(name="llama-1.1b", style="llama", layers=16, hidden=2048, heads=16, kv_heads=4, ffn=5632, seq=2048,
         vocab=32000, micro=8),
    dict(name="llama-8l-8b-shape", style="llama", layers=8, hidden=4096, heads=32, kv_heads=8, ffn=14336,
         seq=4096, vocab=32000, micro=2),
    # GPT-style: LayerNorm, GELU, learned positions, MHA, biases. GPT-2's 50257-token vocabulary
    # padded to a multiple of 128 (50304), as Megatron pads it: unpadded, the LM head's GEMMs fall to
    # an unaligned kernel that ran 3x slower here (docs/measured-h200.md).
    dict(name="gpt-0.35b", style="gpt", layers=24, hidden=1024, heads=16, kv_heads=16, ffn=4096, seq=2048,
         vocab=50304, micro=8),
    dict(name="gpt-1.3b", style="gpt", layers=24, hidden=2048, heads=16, kv_heads=16, ffn=8192, seq=2048,
         vocab=50304, micro=8),
]


def training_step(cfg):
    """The model of cfg on the GPU in bf16 and one training step of it: forward on a fixed batch of
    token ids, backward, a fused AdamW step (its state bf16, as the weights)."""
    torch.manual_seed(0)
    model = Model(cfg).to(DEV, torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    idx = torch.randint(0, cfg["vocab"], (cfg["micro"], cfg["seq"]), device=DEV)

    def step():
        model(idx, idx).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return model, step


def step_rows(steps, deadline):
    for cfg in STEP_MODELS:
        if time.time() > deadline:
            log("time budget reached: remaining training steps skipped")
            return
        model, step = training_step(cfg)
        sec = timed(step, target_s=2.0, min_reps=5, max_reps=20, warmup=3)
        params = sum(p.numel() for p in model.parameters())
        peak = torch.cuda.max_memory_allocated() / 2**30
        steps.row(**{k: cfg[k] for k in ("name", "style", "layers", "hidden", "heads", "kv_heads", "ffn", "seq",
                                         "vocab", "micro")}, params=params, seconds=f"{sec:.6e}",
                  tokens_per_s=f"{cfg['micro'] * cfg['seq'] / sec:.0f}", peak_gib=f"{peak:.1f}")
        log(f"step {cfg['name']}: {sec * 1e3:.1f} ms, {params / 1e9:.2f} B params")
        del model, step
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def profile_rows(path, names):
    """Per-kernel GPU time of whole training steps (torch.profiler), to see where a step's time goes:
    kernel name, calls and GPU microseconds per step, plus the step's wall time."""
    from torch.profiler import ProfilerActivity, profile
    with open(path, "w", buffering=1) as f:
        f.write("model,kernel,calls_per_step,gpu_us_per_step,step_wall_us\n")
        for cfg in STEP_MODELS:
            if cfg["name"] not in names:
                continue
            model, step = training_step(cfg)
            for _ in range(3):
                step()
            torch.cuda.synchronize()
            steps = 3
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                t0 = time.perf_counter()
                for _ in range(steps):
                    step()
                torch.cuda.synchronize()
                wall = (time.perf_counter() - t0) / steps
            for ev in prof.key_averages():
                gpu = getattr(ev, "device_time_total", 0) or getattr(ev, "cuda_time_total", 0)
                if gpu <= 0 or ev.count <= 0:
                    continue
                name = ev.key.replace(",", ";")[:160]
                f.write(f"{cfg['name']},{name},{ev.count / steps:.1f},{gpu / steps:.1f},{wall * 1e6:.0f}\n")
            log(f"profiled {cfg['name']}")
            del model, step
            torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--budget", type=float, default=400.0, help="seconds; the training steps stop at it")
    ap.add_argument("--skip-steps", action="store_true")
    ap.add_argument("--only", choices=["launch", "memory", "gemm", "attention", "grouped"], action="append",
                    help="measure only these kernel sections (repeatable)")
    ap.add_argument("--profile", action="append", metavar="MODEL",
                    help="also write profile.csv: per-kernel GPU time of this step model's steps (repeatable)")
    ap.add_argument("--attention-backend", choices=["cudnn", "flash"], default="cudnn",
                    help="whose fused attention goes into kernels.csv (the other goes to extra.csv)")
    args = ap.parse_args()
    deadline = time.time() + args.budget
    os.makedirs(args.outdir, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    environment(os.path.join(args.outdir, "env.txt"))
    out = Writer(os.path.join(args.outdir, "kernels.csv"),
                 ["kind", "m", "n", "k", "dtype", "seq", "head_dim", "causal", "pass", "batch", "heads",
                  "subkind", "bytes", "seconds"])
    extra = Writer(os.path.join(args.outdir, "extra.csv"), ["name", "params", "seconds", "rate", "unit"])
    steps = Writer(os.path.join(args.outdir, "steps.csv"),
                   ["name", "style", "layers", "hidden", "heads", "kv_heads", "ffn", "seq", "vocab", "micro",
                    "params", "seconds", "tokens_per_s", "peak_gib"])
    sections = {"launch": lambda: launch_rows(extra), "memory": lambda: memory_rows(out, extra),
                "gemm": lambda: gemm_rows(out, extra),
                "attention": lambda: attention_rows(out, extra, args.attention_backend),
                "grouped": lambda: grouped_rows(extra)}
    for name, section in sections.items():
        if args.only and name not in args.only:
            continue
        try:
            section()
        except Exception as e:  # keep the other sections' figures
            log(f"{name} failed: {e}")
            extra.row(name=f"{name}_failed", params=str(e).replace(",", ";")[:200])
        torch.cuda.empty_cache()
    try:
        FusedRope.kernel = rope_triton()
        x = torch.randn(2, 64, 4, 128, device=DEV, dtype=torch.bfloat16)
        ang = torch.rand(64, 64, device=DEV)
        c, s = ang.cos(), ang.sin()
        x1, x2 = x[..., :64].float(), x[..., 64:].float()
        ref = torch.cat([x1 * c[:, None] - x2 * s[:, None], x2 * c[:, None] + x1 * s[:, None]], -1)
        got = FusedRope.apply(x, c, s).float()
        if not torch.allclose(got, ref, atol=3e-2, rtol=2e-2):
            raise ValueError(f"fused RoPE differs from the reference by {(got - ref).abs().max().item()}")
    except Exception as e:
        FusedRope.kernel = None  # the steps fall back to the unfused form and say so
        log(f"no fused RoPE ({e}): Llama steps use the unfused form")
    if not args.skip_steps:
        step_rows(steps, deadline)
    if args.profile:
        profile_rows(os.path.join(args.outdir, "profile.csv"), args.profile)
    log("done")


if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit("measure_kernels: no CUDA device")
    main()
