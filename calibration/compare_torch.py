#!/usr/bin/env python3
"""Compares a measured calibration profile with PyTorch on the same GPU.

GEMM: torch.matmul (BF16/FP16) at the profile's large square shapes; the profile must be within
5% of torch. Attention: torch.nn.functional.scaled_dot_product_attention with the flash backend,
forward and backward, at the profile's attention points; within 10%. FLOPs are counted as the
profile counts them: 2mnk for GEMM; 4*b*h*s^2*d forward (halved when causal), 2.5x that backward.

    python3 calibration/compare_torch.py H100-SXM5-80GB.measured.json [--markdown]

Exit code 0 when every comparison is within tolerance, 1 otherwise, 2 on bad input."""
import argparse
import json
import statistics
import sys

import torch
import torch.nn.functional as F

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def median_ms(fn, warmup=10, reps=30):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def torch_gemm_tflops(precision, m, n, k):
    # Several operand sets, as the profile's tool rotates them, so L2 does not flatter either side.
    sets = [(torch.randn(m, k, device="cuda", dtype=DTYPES[precision]),
             torch.randn(k, n, device="cuda", dtype=DTYPES[precision])) for _ in range(4)]
    i = iter(range(10**9))
    ms = median_ms(lambda: torch.matmul(*sets[next(i) % 4]))
    return 2 * m * n * k / (ms * 1e-3) / 1e12


def torch_attention_tflops(point):
    s, hd = point["seq"], point["head_dim"]
    b = point.get("batch", max(1, 16384 // s))
    h = point.get("heads", 2048 // hd)
    kv = point.get("kv_heads", h)
    dtype = DTYPES.get(point.get("precision", "bf16"), torch.bfloat16)
    q = torch.randn(b, h, s, hd, device="cuda", dtype=dtype, requires_grad=True)
    k = torch.randn(b, kv, s, hd, device="cuda", dtype=dtype, requires_grad=True)
    v = torch.randn(b, kv, s, hd, device="cuda", dtype=dtype, requires_grad=True)
    causal = point["causal"]
    gqa = {"enable_gqa": True} if kv != h else {}
    fwd_flops = 4 * b * h * s * s * hd / (2 if causal else 1)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
        fwd_ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)
        grad = torch.randn_like(out)
        bwd_ms = median_ms(lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True))
    return fwd_flops / (fwd_ms * 1e-3) / 1e12, 2.5 * fwd_flops / (bwd_ms * 1e-3) / 1e12


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
    for g in profile["gemm"]:
        if g["precision"] in DTYPES and g["m"] == g["n"] == g["k"] and g["m"] >= 4096:
            ref = torch_gemm_tflops(g["precision"], g["m"], g["n"], g["k"])
            diff = g["tflops"] / ref - 1
            ok &= abs(diff) <= 0.05
            rows.append((f"GEMM {g['precision']} {g['m']}^3", g["tflops"], ref, diff, 0.05))
    attention_measured = "not measured" not in profile["provenance"].get("sources", {}).get("attention", "")
    for a in profile["attention"] if attention_measured else []:
        if a["seq"] >= 2048:
            fwd, bwd = torch_attention_tflops(a)
            for name, mine, ref in (("fwd", a["fwd_tflops"], fwd), ("bwd", a["bwd_tflops"], bwd)):
                diff = mine / ref - 1
                ok &= abs(diff) <= 0.10
                mask = "causal" if a["causal"] else "full"
                rows.append((f"SDPA {name} s{a['seq']} d{a['head_dim']} {mask}", mine, ref, diff, 0.10))
    if not attention_measured:
        print("note: the profile's attention points are published numbers, not compared")

    header = ("case", "sextant-calibrate TFLOP/s", "torch TFLOP/s", "difference", "tolerance")
    if args.markdown:
        print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
        for r in rows:
            print(f"| {r[0]} | {r[1]:.1f} | {r[2]:.1f} | {100 * r[3]:+.1f}% | {100 * r[4]:.0f}% |")
    else:
        for r in rows:
            print(f"{r[0]:32s} {r[1]:8.1f} {r[2]:8.1f} {100 * r[3]:+6.1f}% (tolerance {100 * r[4]:.0f}%)")
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
