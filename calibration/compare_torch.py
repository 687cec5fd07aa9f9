#!/usr/bin/env python3
"""Compares a measured calibration profile with PyTorch on the same GPU.

GEMM: torch.matmul (bf16, fp16) and torch._scaled_mm (fp8 with a tensor-wise or row-wise scale)
at the profile's large square shapes; the profile must be within 5% of torch. Attention:
torch.nn.functional.scaled_dot_product_attention (the flash backend; cuDNN or memory-efficient
where query-key and value heads differ, as in MLA), forward and backward, at the profile's
attention points, grouped-query ones included; within 10%. FLOPs are counted as the profile
counts them: 2mnk for GEMM; 2*b*h*s^2*(d_qk + d_v) forward (halved when causal), 2.5x that
backward.

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


# FP8 recipes torch runs through torch._scaled_mm, with the scale shapes each takes.
SCALED = {"fp8": lambda m, n: ((), ()), "fp8_rowwise": lambda m, n: ((m, 1), (1, n))}


def torch_gemm_tflops(precision, m, n, k):
    # Several operand sets, as the profile's tool rotates them, so L2 does not flatter either side.
    if precision in DTYPES:
        sets = [(torch.randn(m, k, device="cuda", dtype=DTYPES[precision]),
                 torch.randn(k, n, device="cuda", dtype=DTYPES[precision])) for _ in range(4)]
        run = lambda a, b: torch.matmul(a, b)
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


def torch_attention_tflops(point):
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
    backends = [torch.nn.attention.SDPBackend.FLASH_ATTENTION] if hv == hd else \
        [torch.nn.attention.SDPBackend.CUDNN_ATTENTION, torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION]
    with torch.nn.attention.sdpa_kernel(backends):
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
    for precision, points in profile["gemm"].items():
        for g in points:
            if (precision in DTYPES or precision in SCALED) and g["m"] == g["n"] == g["k"] and g["m"] >= 4096:
                ref = torch_gemm_tflops(precision, g["m"], g["n"], g["k"])
                diff = g["tflops"] / ref - 1
                ok &= abs(diff) <= 0.05
                rows.append((f"GEMM {precision} {g['m']}^3", g["tflops"], ref, diff, 0.05))
    attention_measured = "not measured" not in profile["provenance"].get("sources", {}).get("attention", "")
    for a in profile["attention"] if attention_measured else []:
        if a["seq"] >= 2048:
            fwd, bwd = torch_attention_tflops(a)
            for name, mine, ref in (("fwd", a["fwd_tflops"], fwd), ("bwd", a["bwd_tflops"], bwd)):
                diff = mine / ref - 1
                ok &= abs(diff) <= 0.10
                mask = "causal" if a["causal"] else "full"
                shape = f"h{a.get('heads', '')}/{a.get('kv_heads', '')} d{a['head_dim']}/{a.get('head_dim_v', a['head_dim'])}"
                rows.append((f"SDPA {name} s{a['seq']} {shape} {mask}", mine, ref, diff, 0.10))
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
