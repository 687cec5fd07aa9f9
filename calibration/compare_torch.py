#!/usr/bin/env python3
"""Compares a measured calibration profile with PyTorch on the same GPU.

Each comparison is like for like: the same library and operand layout on both sides, so that a
difference is the tool's measurement, not a different kernel. GEMM: torch's x @ w.T (the layout
of F.linear and of the profile's cuBLASLt "TN" GEMMs) in bf16 and fp16, and torch._scaled_mm
(fp8 with a tensor-wise or row-wise scale), at the profile's large square shapes, within 5%;
torch.matmul's plain a @ b is shown beside it. Attention: scaled_dot_product_attention on its cuDNN
backend (the kernel the profile measures, and Transformer Engine's on Hopper), forward and
backward, at the profile's attention points from 2k tokens, grouped-query and MLA ones included,
within 10%; the flash backend (FlashAttention-2, PyTorch's default on Hopper, torchtitan's
kernel) is shown beside it where it takes the heads. Memory: a device-to-device copy within 10%,
and F.rms_norm shown beside the profile's RMSNorm proxy. FLOPs are counted as the profile counts
them: 2mnk for GEMM; 2*b*h*s^2*(d_qk + d_v) forward (halved when causal), 2.5x that backward;
bytes as read + written.

    python3 calibration/compare_torch.py H100-SXM5-80GB.measured.json [--markdown]

Exit code 0 when every comparison is within tolerance, 1 otherwise, 2 on bad input."""
import argparse
import json
import math
import statistics
import sys

import torch
import torch.nn.functional as F

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def median_ms(fn, warmup=10, reps=30, sample_ms=0.5, most=64):
    """Median time of one call. Each timed sample holds enough back-to-back calls to last about
    half a millisecond, as sextant-calibrate times them (src/measure/timing.hpp): timed one by
    one, a short kernel also counts Python's launch gap before it."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(warmup):
        fn()
    stop.record()
    stop.synchronize()
    per_sample = min(most, max(1, math.ceil(sample_ms / max(start.elapsed_time(stop) / warmup, 1e-6))))
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(per_sample):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / per_sample)
    return statistics.median(times)


# FP8 recipes torch runs through torch._scaled_mm, with the scale shapes each takes.
SCALED = {"fp8": lambda m, n: ((), ()), "fp8_rowwise": lambda m, n: ((m, 1), (1, n))}


def torch_gemm_tflops(precision, m, n, k, layout="tn"):
    # Several operand sets, as the profile's tool rotates them, so L2 does not flatter either side.
    if precision in DTYPES:
        dtype = DTYPES[precision]
        second = (n, k) if layout == "tn" else (k, n)
        sets = [(torch.randn(m, k, device="cuda", dtype=dtype), torch.randn(*second, device="cuda", dtype=dtype))
                for _ in range(4)]
        run = (lambda a, b: a @ b.t()) if layout == "tn" else (lambda a, b: torch.matmul(a, b))
    else:
        sa, sb = SCALED[precision](m, n)
        # _scaled_mm takes B column-major: the transpose of a row-major [n, k].
        sets = [(torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn),
                 torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()) for _ in range(4)]
        scale_a = torch.ones(sa, device="cuda", dtype=torch.float32)
        scale_b = torch.ones(sb, device="cuda", dtype=torch.float32)
        run = lambda a, b: torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
    i = iter(range(10**9))
    ms = median_ms(lambda: run(*sets[next(i) % 4]))
    return 2 * m * n * k / (ms * 1e-3) / 1e12


def torch_attention_tflops(point, backend):
    """Forward and backward TFLOP/s of SDPA on one backend; None where it does not take the shape."""
    s, hd = point["seq"], point["head_dim"]
    hv = point.get("head_dim_v", hd)
    b = point.get("batch", max(1, 16384 // s))
    h = point.get("heads", 2048 // hd)
    kv = point.get("kv_heads", h)
    dtype = DTYPES.get(point.get("precision", "bf16"), torch.bfloat16)
    q = torch.randn(b, h, s, hd, device="cuda", dtype=dtype, requires_grad=True)
    k = torch.randn(b, kv, s, hd, device="cuda", dtype=dtype, requires_grad=True)
    v = torch.randn(b, kv, s, hv, device="cuda", dtype=dtype, requires_grad=True)
    causal = point["causal"]
    gqa = {"enable_gqa": True} if kv != h else {}
    fwd_flops = 2 * b * h * s * s * (hd + hv) / (2 if causal else 1)
    try:
        with torch.nn.attention.sdpa_kernel([backend]):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)
    except RuntimeError:
        return None
    with torch.nn.attention.sdpa_kernel([backend]):
        fwd_ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)
        grad = torch.randn_like(out)
        bwd_ms = median_ms(lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True))
    return fwd_flops / (fwd_ms * 1e-3) / 1e12, 2.5 * fwd_flops / (bwd_ms * 1e-3) / 1e12


def torch_memory_tbps(nbytes):
    """Copy and F.rms_norm bandwidth (read + written) on bf16 rows of 8192, the profile's proxy."""
    rows = max(1, nbytes // (2 * 8192))
    x = torch.randn(rows, 8192, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    w = torch.randn(8192, device="cuda", dtype=torch.bfloat16)
    moved = 2 * x.numel() * 2
    copy = moved / (median_ms(lambda: y.copy_(x)) * 1e-3) / 1e12
    norm = moved / (median_ms(lambda: F.rms_norm(x, (8192,), w, 1e-6)) * 1e-3) / 1e12
    return copy, norm


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("profile")
    parser.add_argument("--markdown", action="store_true", help="print a table for calibration/README.md")
    args = parser.parse_args()
    try:
        with open(args.profile) as f:
            profile = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"error: {args.profile}: {e}", file=sys.stderr)
        return 2
    if profile.get("provenance", {}).get("kind") != "measured":
        print(f"error: {args.profile}: /provenance/kind is not \"measured\"", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("error: torch sees no CUDA device", file=sys.stderr)
        return 2

    rows, ok = [], True

    def compare(case, mine, ref, tolerance, beside=None):
        nonlocal ok
        diff = mine / ref - 1
        ok &= abs(diff) <= tolerance
        rows.append((case, mine, ref, diff, tolerance, beside))

    for precision, points in profile["gemm"].items():
        for g in points:
            if (precision in DTYPES or precision in SCALED) and g["m"] == g["n"] == g["k"] and g["m"] >= 4096:
                m, n, k = g["m"], g["n"], g["k"]
                plain = f"a @ b {torch_gemm_tflops(precision, m, n, k, 'nn'):.1f}" if precision in DTYPES else None
                compare(f"GEMM {precision} {m}^3", g["tflops"], torch_gemm_tflops(precision, m, n, k), 0.05, plain)
    attention_measured = "not measured" not in profile["provenance"].get("sources", {}).get("attention", "")
    backends = torch.nn.attention.SDPBackend
    for a in profile["attention"] if attention_measured else []:
        if a["seq"] < 2048:
            continue
        cudnn, flash = torch_attention_tflops(a, backends.CUDNN_ATTENTION), torch_attention_tflops(a, backends.FLASH_ATTENTION)
        if cudnn is None:
            print(f"note: torch's cuDNN backend refused s{a['seq']} d{a['head_dim']}; not compared")
            continue
        mask = "causal" if a["causal"] else "full"
        shape = f"h{a.get('heads', '')}/{a.get('kv_heads', '')} d{a['head_dim']}/{a.get('head_dim_v', a['head_dim'])}"
        for i, (name, mine) in enumerate((("fwd", a["fwd_tflops"]), ("bwd", a["bwd_tflops"]))):
            beside = f"flash {flash[i]:.1f}" if flash else None
            compare(f"SDPA {name} s{a['seq']} {shape} {mask}", mine, cudnn[i], 0.10, beside)
    if not attention_measured:
        print("note: the profile's attention points are published numbers, not compared")
    memory = profile.get("memory", {})
    measured_at = memory.get("buffer_bytes")  # written by sextant-calibrate; published figures have none
    if measured_at:
        copy, norm = torch_memory_tbps(measured_at)
        compare(f"copy {measured_at} B (TB/s)", memory["copy_tbps"], copy, 0.10)
        rows.append((f"RMSNorm proxy {measured_at} B (TB/s)", memory["elementwise_tbps"], norm,
                     memory["elementwise_tbps"] / norm - 1, None, "F.rms_norm, shown"))

    header = ("case", "sextant-calibrate", "torch, same kernel", "difference", "tolerance", "beside it")
    if args.markdown:
        print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
        for r in rows:
            tolerance = f"{100 * r[4]:.0f}%" if r[4] is not None else "-"
            print(f"| {r[0]} | {r[1]:.2f} | {r[2]:.2f} | {100 * r[3]:+.1f}% | {tolerance} | {r[5] or ''} |")
    else:
        for r in rows:
            tolerance = f"{100 * r[4]:.0f}%" if r[4] is not None else "-"
            print(f"{r[0]:40s} {r[1]:8.2f} {r[2]:8.2f} {100 * r[3]:+6.1f}% (tolerance {tolerance}) {r[5] or ''}")
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
