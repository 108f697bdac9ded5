#!/usr/bin/env python3
"""Measure one GPU's convolutional-network rates for comet's CNN layer lists.

What: times, with CUDA events, (1) whole training steps of torchvision's
ResNet-50, ResNet-152, VGG-16 and Inception-v3 at several per-GPU batch
sizes, (2) every distinct convolution of ResNet-50 and VGG-16 in its
forward, input-gradient (dgrad) and weight-gradient (wgrad) form at batch
sizes from 1 to 256, (3) the memory-bound layers between them (batch norm
forward and backward, ReLU, max pool) and (4) where each step's GPU time
goes by kernel kind (convolution, batch norm, elementwise, optimizer).
Why: comet prices a CNN's layers from their shapes (docs/model.md 13.1);
issues 17 and 20 need to know how close a convolution gets to the GEMM
rates at small per-GPU batches, and a whole step to hold the model to.
The figures go to docs/measured-cnn.md with this script's name.

Usage (on a machine with a CUDA GPU, PyTorch and torchvision):
    python3 tools/measure_cnn.py OUTDIR [--budget SECONDS] [--only steps|conv|memory|profile ...]

Writes into OUTDIR (rows as they are measured, so a run cut short keeps them):
    steps.csv    model, batch, image, seconds per step (median), images/s, peak GiB
    conv.csv     the convolution's shape, batch, pass, FLOPs, seconds, TFLOP/s
    memory.csv   kernel, shape, bytes moved (read + written), seconds, TB/s
    profile.csv  model, batch, kernel kind, GPU seconds per step, share
    env.txt      GPU, driver, library versions
Training is mixed precision as the usual recipes run it (autocast to bf16,
fp32 weights, SGD with momentum), channels-last, cuDNN autotuning on,
synthetic images already on the GPU (no input pipeline).
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure_kernels import DEV, Writer, environment, log, timed  # noqa: E402

STEP_MODELS = [("resnet50", 224), ("resnet152", 224), ("vgg16", 224), ("inception_v3", 299)]
STEP_BATCHES = [16, 64, 128, 256]
CONV_BATCHES = [1, 8, 32, 128, 256]

# (name, input channels, input height = width, output channels, kernel, stride, padding):
# ResNet-50 v1.5 as torchvision builds it (stride in the 3x3), each distinct shape once,
# and VGG-16's distinct convolutions (Simonyan and Zisserman 2015, configuration D).
CONVS = [
    ("r50.conv1", 3, 224, 64, 7, 2, 3),
    ("r50.l1.1x1a", 64, 56, 64, 1, 1, 0), ("r50.l1.3x3", 64, 56, 64, 3, 1, 1),
    ("r50.l1.1x1b", 64, 56, 256, 1, 1, 0), ("r50.l1.1x1in", 256, 56, 64, 1, 1, 0),
    ("r50.l2.1x1in", 256, 56, 128, 1, 1, 0), ("r50.l2.3x3s2", 128, 56, 128, 3, 2, 1),
    ("r50.l2.down", 256, 56, 512, 1, 2, 0), ("r50.l2.3x3", 128, 28, 128, 3, 1, 1),
    ("r50.l2.1x1b", 128, 28, 512, 1, 1, 0), ("r50.l2.1x1a", 512, 28, 128, 1, 1, 0),
    ("r50.l3.3x3", 256, 14, 256, 3, 1, 1), ("r50.l3.1x1b", 256, 14, 1024, 1, 1, 0),
    ("r50.l3.1x1a", 1024, 14, 256, 1, 1, 0),
    ("r50.l4.3x3", 512, 7, 512, 3, 1, 1), ("r50.l4.1x1b", 512, 7, 2048, 1, 1, 0),
    ("r50.l4.1x1a", 2048, 7, 512, 1, 1, 0),
    ("vgg.c1_2", 64, 224, 64, 3, 1, 1), ("vgg.c2_2", 128, 112, 128, 3, 1, 1),
    ("vgg.c3_2", 256, 56, 256, 3, 1, 1), ("vgg.c4_2", 512, 28, 512, 3, 1, 1),
    ("vgg.c5_2", 512, 14, 512, 3, 1, 1),
]


def build(name):
    import torchvision.models as tvm
    kwargs = {"aux_logits": False, "init_weights": False} if name == "inception_v3" else {}
    return getattr(tvm, name)(weights=None, **kwargs)


def training_step(name, image, batch):
    """One training step of torchvision's `name` on `batch` synthetic images, as every figure here
    runs it: autocast to bf16, fp32 weights, SGD with momentum, channels-last."""
    model = build(name).to(DEV).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    x = torch.randn(batch, 3, image, image, device=DEV).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device=DEV)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


def step_rows(path, deadline, models):
    steps = Writer(path, ["model", "batch", "image", "seconds", "images_per_s", "peak_gib"])
    for name, image in models:
        for batch in STEP_BATCHES:
            if time.time() > deadline:
                log("steps: budget spent")
                return
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            step = None
            try:
                step = training_step(name, image, batch)
                sec = timed(step, target_s=1.0, min_reps=10, max_reps=60, warmup=5)
                peak = torch.cuda.max_memory_allocated() / 2**30
                steps.row(model=name, batch=batch, image=image, seconds=f"{sec:.6e}",
                          images_per_s=f"{batch / sec:.1f}", peak_gib=f"{peak:.2f}")
                log(f"step {name} b{batch}: {sec * 1e3:.2f} ms, {batch / sec:.0f} img/s, {peak:.1f} GiB")
            except torch.cuda.OutOfMemoryError:
                log(f"step {name} b{batch}: out of memory")
            except Exception as e:  # the other rows still stand
                log(f"step {name} b{batch} failed: {type(e).__name__}: {e}")
            finally:
                step = None


def conv_rows(path, deadline):
    out = Writer(path, ["name", "batch", "in_channels", "size", "out_channels", "kernel", "stride", "padding",
                        "pass", "flops", "seconds", "tflops"])
    for name, c, hw, k_out, k, s, p in CONVS:
        for batch in CONV_BATCHES:
            if time.time() > deadline:
                log("conv: budget spent")
                return
            x = torch.randn(batch, c, hw, hw, device=DEV, dtype=torch.bfloat16).to(
                memory_format=torch.channels_last)
            w = torch.randn(k_out, c, k, k, device=DEV, dtype=torch.bfloat16).to(
                memory_format=torch.channels_last)
            y = F.conv2d(x, w, stride=s, padding=p)
            g = torch.randn_like(y)
            flops = 2.0 * y.numel() * c * k * k
            forms = {
                "fwd": lambda: F.conv2d(x, w, stride=s, padding=p),
                # the input gradient through the same call autograd makes (channels-last in and
                # out; torch.nn.grad.conv2d_input would hand cuDNN a contiguous input instead)
                "dgrad": lambda: torch.ops.aten.convolution_backward(
                    g, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, [True, False, False]),
                "wgrad": lambda: torch.nn.grad.conv2d_weight(x, w.shape, g, stride=s, padding=p),
            }
            for form, fn in forms.items():
                sec = timed(fn, target_s=0.03, max_reps=100)
                out.row(name=name, batch=batch, in_channels=c, size=hw, out_channels=k_out, kernel=k, stride=s,
                        padding=p, **{"pass": form}, flops=f"{flops:.6e}", seconds=f"{sec:.6e}",
                        tflops=f"{flops / sec / 1e12:.1f}")
            log(f"conv {name} b{batch}: fwd/dgrad/wgrad done ({flops / 1e9:.1f} GFLOP each)")
            x = w = y = g = None


def memory_rows(path):
    out = Writer(path, ["kernel", "shape", "bytes", "seconds", "tbps"])
    for batch, c, hw in [(256, 64, 112), (256, 256, 56), (256, 512, 28), (256, 1024, 14), (256, 2048, 7),
                         (32, 256, 56), (128, 64, 224), (128, 128, 112), (128, 512, 28)]:
        shape = f"{batch}x{c}x{hw}x{hw} bf16 channels-last"
        x = torch.randn(batch, c, hw, hw, device=DEV, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        n = x.numel() * 2
        bn = torch.nn.BatchNorm2d(c).to(DEV)
        xg = x.detach().requires_grad_()

        def bn_fwd():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return bn(x)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            yb = bn(xg)
        gb = torch.randn_like(yb)
        yr = F.relu(xg)
        xi = x.clone()
        cases = [
            ("batchnorm_fwd", bn_fwd, 2 * n),               # read x, write y (statistics pass aside)
            ("batchnorm_bwd", lambda: torch.autograd.grad(yb, xg, gb, retain_graph=True), 3 * n),
            ("relu_fwd", lambda: F.relu(x), 2 * n),
            ("relu_inplace", lambda: F.relu_(xi), 2 * n),  # on a copy: x's gradients need x as it was
            ("relu_bwd", lambda: torch.autograd.grad(yr, xg, gb, retain_graph=True), 3 * n),
            ("add", lambda: x + x, 3 * n),                  # the residual sum: two reads, one write
        ]
        if hw >= 56:
            yp = F.max_pool2d(xg, 3, 2, 1)
            gp = torch.randn_like(yp)
            cases.append(("maxpool3x3s2_fwd", lambda: F.max_pool2d(x, 3, 2, 1), n + n // 4))
            # the output's gradient and indices read, the input's gradient written
            cases.append(("maxpool3x3s2_bwd", lambda: torch.autograd.grad(yp, xg, gp, retain_graph=True),
                          n + n // 4 + n))
        if batch == 128:  # VGG's 2x2/2 pools
            yq = F.max_pool2d(xg, 2, 2)
            gq = torch.randn_like(yq)
            cases.append(("maxpool2x2s2_fwd", lambda: F.max_pool2d(x, 2, 2), n + n // 4))
            cases.append(("maxpool2x2s2_bwd", lambda: torch.autograd.grad(yq, xg, gq, retain_graph=True),
                          n + n // 4 + n))
        for kernel, fn, nbytes in cases:
            sec = timed(fn, target_s=0.03)
            out.row(kernel=kernel, shape=shape, bytes=nbytes, seconds=f"{sec:.6e}", tbps=f"{nbytes / sec / 1e12:.3f}")
        log(f"memory {shape}: done")
        x = xg = xi = yb = gb = bn = yr = yp = gp = yq = gq = None


def kind_of(name):
    n = name.lower()
    if any(t in n for t in ("conv", "cudnn", "implicit", "gemm", "xmma", "sm90", "wgrad", "dgrad", "cutlass",
                            "nhwckrsc", "fprop")):
        return "convolution/gemm"
    if "bn_" in n or "batch_norm" in n or "batchnorm" in n or "welford" in n:
        return "batch norm"
    if "pool" in n:
        return "pool"
    if "multi_tensor" in n or "foreach" in n or "sgd" in n:
        return "optimizer"
    if "reduce" in n or "softmax" in n or "nll" in n:
        return "reduction/loss"
    return "elementwise/other"


def profile_rows(path, models):
    from torch.profiler import ProfilerActivity, profile
    out = Writer(path, ["model", "batch", "kind", "seconds_per_step", "share"])
    for name, image, batch in models:
        step = training_step(name, image, batch)
        for _ in range(5):
            step()
        torch.cuda.synchronize()
        reps = 5
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(reps):
                step()
            torch.cuda.synchronize()
        totals, by_name = {}, {}
        for ev in prof.events():  # the GPU's own events only: kernels, copies, fills
            if ev.device_type != torch.autograd.DeviceType.CUDA:
                continue
            kind = kind_of(ev.name)
            totals[kind] = totals.get(kind, 0.0) + ev.time_range.elapsed_us() / 1e6 / reps
            by_name[ev.name] = by_name.get(ev.name, 0.0) + ev.time_range.elapsed_us() / 1e6 / reps
        whole = sum(totals.values()) or 1.0
        for kind, sec in sorted(totals.items(), key=lambda kv: -kv[1]):
            out.row(model=name, batch=batch, kind=kind, seconds_per_step=f"{sec:.6e}", share=f"{sec / whole:.3f}")
        for kernel, sec in sorted(by_name.items(), key=lambda kv: -kv[1])[:15]:  # how the kinds were told apart
            out.row(model=name, batch=batch, kind="kernel " + kernel.replace(",", ";")[:120],
                    seconds_per_step=f"{sec:.6e}", share=f"{sec / whole:.3f}")
        log(f"profile {name} b{batch}: " + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in totals.items()))
        step = None
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--budget", type=float, default=360.0, help="seconds; each section stops at it")
    ap.add_argument("--only", choices=["steps", "conv", "memory", "profile"], action="append")
    args = ap.parse_args()
    deadline = time.time() + args.budget
    os.makedirs(args.outdir, exist_ok=True)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    environment(os.path.join(args.outdir, "env.txt"))
    want = lambda s: not args.only or s in args.only  # noqa: E731
    sections = [
        ("steps", lambda: step_rows(os.path.join(args.outdir, "steps.csv"), deadline - 120, STEP_MODELS[:2])),
        ("conv", lambda: conv_rows(os.path.join(args.outdir, "conv.csv"), deadline - 90)),
        ("memory", lambda: memory_rows(os.path.join(args.outdir, "memory.csv"))),
        ("profile", lambda: profile_rows(os.path.join(args.outdir, "profile.csv"),
                                         [("resnet50", 224, 128), ("resnet152", 224, 64), ("vgg16", 224, 128)])),
        ("steps", lambda: step_rows(os.path.join(args.outdir, "steps2.csv"), deadline, STEP_MODELS[2:])),
    ]
    for name, section in sections:
        if not want(name):
            continue
        try:
            section()
        except Exception as e:  # keep the other sections' figures
            log(f"{name} failed: {type(e).__name__}: {e}")
        torch.cuda.empty_cache()
    log("done")


if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit("measure_cnn: no CUDA device")
    main()
