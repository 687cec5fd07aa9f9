#!/usr/bin/env python3
"""Writes the nccl-tests logs of this folder: synthetic runs printed exactly as nccl-tests prints
them (src/common.cu and src/util.cu of NVIDIA/nccl-tests, versions 2.12 to 2.17), for the
importer's tests and the README walk-through. They are NOT measurements: the times follow
published H100 figures (NVLink ring busbw ~370 GB/s and NVLS ~480 GB/s on 8 GPUs, nccl-tests
issues #212 and NVIDIA/nccl #1455; 46-48 GB/s per 400 Gb/s NIC, nccl-tests #290) through a
three-protocol latency-bandwidth curve with 1-2% deterministic noise.

    python3 tests/data/nccl-tests/generate.py    # rewrites the .log files beside it
"""
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
H100 = "NVIDIA H100 80GB HBM3"
A100 = "NVIDIA A100-SXM4-80GB"
PCI = [0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB]

# (latency per ring step in us, bus bandwidth in GB/s) of LL, LL128 and Simple, per span and op
# family; Simple ramps as S / (S + 24 MiB) like the H200 NVLS sweep of reference-data.md 12c.
CURVES = {
    ("node", "nvls"): [(2.4, 30.0), (3.4, 290.0), (5.0, 482.0)],
    ("node", "ring"): [(1.9, 28.0), (2.8, 262.0), (4.1, 369.0)],
    ("node", "a2a"): [(2.6, 25.0), (3.6, 230.0), (5.2, 342.0)],
    ("rail", "ring"): [(6.8, 9.0), (8.2, 38.0), (10.5, 46.9)],
    ("cluster", "tree"): [(3.1, 24.0), (4.4, 210.0), (6.3, 366.0)],
    ("a100", "ring"): [(3.0, 20.0), (4.2, 160.0), (6.1, 234.9)],
}
BUS = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
       "reduce_scatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n, "sendrecv": lambda n: 1.0}
STEPS = {"all_reduce": lambda n: 2 * (n - 1), "all_gather": lambda n: n - 1, "reduce_scatter": lambda n: n - 1,
         "alltoall": lambda n: n - 1, "sendrecv": lambda n: 1}


def seconds_us(curve, op, n, size, rng):
    if n == 1:  # a local copy: nothing crosses a link
        return (3.0 + size / 1.2e6) * (1 + rng.uniform(-0.01, 0.01))
    best = math.inf
    for k, (lat, bw) in enumerate(curve):
        ramp = 1 + 24 * 2**20 / max(size, 1) if k == 2 else 1
        best = min(best, STEPS[op](n) * lat + size * BUS[op](n) / (bw * 1e3) * ramp)
    return best * (1 + rng.uniform(-0.012, 0.018))


def float_old(t):  # nccl-tests <= 2.16: the time's decimals by magnitude, bandwidths %6.2f
    return "%7.0f" % t if t >= 10000 else "%7.1f" % t if t >= 100 else "%7.2f" % t


def float_str(value, width):  # nccl-tests 2.17: getFloatStr
    power, val = 0, 1
    while value >= val:
        power += 1
        val *= 10
    if power < width - 2:
        return "%*.2f" % (width, value)
    if power < width - 1:
        return "%*.1f" % (width, value)
    if power < width + 1:
        return "%*.0f" % (width, value)
    return "%*.1e" % (width, value)


def counts(op, size, n, elt):
    count = size // elt
    if op in ("all_gather", "reduce_scatter"):
        base = count // n
        return base * n * elt, base
    if op == "alltoall":
        return count // n * n * elt, count // n
    return count * elt, count


def log(style, program, ranks, sizes, curve, *, dtype="float", redop="sum", check=True, wrong=None,
        timestamps=False, nccl=22707, blocking=False, seed=1):
    """ranks: [(host, pid, device)]; wrong: {size: (out_of_place, in_place)} wrong element counts."""
    rng = random.Random(seed)
    op = program[:-5]
    n = len(ranks)
    elt = {"float": 4, "bfloat16": 2, "half": 2}[dtype]
    redop = "none" if op in ("all_gather", "alltoall") else redop
    per_process = sum(1 for r in ranks if r[1] == ranks[0][1])
    out = []
    p = out.append
    if style == "2.17":
        p("# nccl-tests version 2.17.6 nccl-headers=%d nccl-library=%d\n" % (nccl, nccl))
        p("# Collective test starting: %s\n" % program)
    if style == "2.12":
        p("# nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 validation: %d \n"
          % (per_process, sizes[0], sizes[-1], int(check)))
    else:
        p("# nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
          "validation: %d graph: 0\n" % (per_process, sizes[0], sizes[-1], int(check)))
    if blocking:
        p("# Blocking Enabled: wait for completion and barrier after each collective \n")
    p("#\n# Using devices\n")
    for rank, (host, pid, dev) in enumerate(ranks):
        if style == "2.12":
            p("#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s\n" % (rank, pid, host, dev, PCI[dev], A100))
        elif style == "2.13":
            p("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s\n" % (rank, 0, pid, host, dev, PCI[dev], H100))
        else:
            p("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n"
              % (rank, 0, pid, host, dev, 0, PCI[dev], 0, H100))
    p("#\n")
    rooted = style != "2.12"
    if style == "2.12":
        p("# %10s  %12s  %8s  %6s            out-of-place                       in-place          \n" % ("", "", "", ""))
        p("# %10s  %12s  %8s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n"
          % ("size", "count", "type", "redop", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"))
        p("# %10s  %12s  %8s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n"
          % ("(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))
    elif style == "2.17":
        ts_label, ts_pad, ts_fmt = ("timestamp", 19, "%Y-%m-%d %H:%M:%S") if timestamps else ("", 0, "")
        p("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n" % ("", "", "", "", ""))
        p("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n"
          % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
             "#wrong", ts_pad, ts_label))
        p("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n"
          % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", ts_pad, ts_fmt))
    else:
        p("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n" % ("", "", "", "", ""))
        p("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n"
          % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"))
        p("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n"
          % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))
    busbws, failed = [], 0
    for minute, requested in enumerate(sizes):
        size, count = counts(op, requested, n, elt)
        line = "%12li  %12li  %8s  %6s" % (size, count, dtype, redop)
        if rooted:
            line += "  %6s" % ("%6i" % -1)
        for placement in (0, 1):
            t = seconds_us(curve, op, n, size, rng)
            algbw = size / t / 1e3
            busbw = algbw * BUS[op](n)
            busbws.append(busbw)
            bad = (wrong or {}).get(requested, (0, 0))[placement]
            failed += bool(bad)
            if style == "2.17":
                body = "  %7s  %6s  %6s" % (float_str(t, 7), float_str(algbw, 6), float_str(busbw, 6))
                body += "  %6g" % bad if check else "    N/A"
            else:
                body = "  %7s  %6.2f  %6.2f" % (float_old(t), algbw, busbw)
                if style == "2.12":
                    body += "  %5.0e" % 0.0 if check else "  %5s" % "N/A"
                else:
                    body += "  %5g" % bad if check else "  %5s" % "N/A"
            line += body
        if timestamps:
            line += "%21s" % ("2026-03-17 14:%02d:%02d" % (21 + minute // 60, minute % 60))
        p(line + "\n")
    p("# Out of bounds values : %d %s\n" % (failed, "FAILED" if failed else "OK"))
    p("# Avg bus bandwidth    : %g \n" % (sum(busbws) / len(busbws)))
    p("#\n")
    if style == "2.17":
        p("# Collective test concluded: %s\n#\n\n" % program)
    else:
        p("\n")
    return "".join(out)


def powers(lo, hi):
    v, s = [], lo
    while s <= hi:
        v.append(s)
        s *= 2
    return v


def node(host, pid, one_process=True):
    return [(host, pid if one_process else pid + d, d) for d in range(8)]


def write(name, text):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(text)


def main():
    a07, a08, a09, a10 = "dgx-a07", "dgx-a08", "dgx-a09", "dgx-a10"
    full = powers(8, 8 * 2**30)
    # One node, one process driving 8 GPUs (all_reduce_perf -b 8 -e 8G -f 2 -g 8), NVLS.
    write("node-all_reduce_perf.log",
          "$ ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8\n" +
          log("2.17", "all_reduce_perf", node(a07, 41250), full, CURVES[("node", "nvls")], seed=11))
    # One node under mpirun, one process per GPU, an nccl-tests of early 2024 (2.13).
    write("node-all_gather_perf.log",
          log("2.13", "all_gather_perf", node(a07, 52310, one_process=False), full, CURVES[("node", "ring")], seed=12))
    write("node-reduce_scatter_perf.log",
          log("2.13", "reduce_scatter_perf", node(a07, 52410, one_process=False), full, CURVES[("node", "ring")], seed=13))
    write("node-alltoall_perf.log",
          log("2.17", "alltoall_perf", node(a07, 41310), powers(1024, 8 * 2**30), CURVES[("node", "a2a")], seed=14))
    # Two nodes, 16 ranks (mpirun -np 16 -N 8): NCCL's tree/NVLS-tree across the nodes.
    write("cluster-all_reduce_perf.log",
          "+ mpirun -np 16 -N 8 --bind-to numa ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1\n" +
          log("2.15", "all_reduce_perf", node(a07, 61000, False) + node(a08, 37000, False), full,
              CURVES[("cluster", "tree")], nccl=22603, seed=15))
    # One GPU per node on four and two nodes (the same local GPU: one rail); the reduce-scatter
    # ran without data checks (-c 0) and with timestamps.
    rail4 = [(h, 7100 + i, 0) for i, h in enumerate([a07, a08, a09, a10])]
    write("rail-all_reduce_perf.log",
          log("2.17", "all_reduce_perf", rail4, full, CURVES[("rail", "ring")], seed=16))
    write("rail-reduce_scatter_perf.log",
          log("2.17", "reduce_scatter_perf", rail4, powers(1024, 4 * 2**30), CURVES[("rail", "ring")], check=False,
              timestamps=True, seed=17))
    # Held out of the walk-through's import: eight nodes, to check the prediction for a rank
    # count that was not measured.
    os.makedirs(os.path.join(HERE, "held-out"), exist_ok=True)
    rail8 = [("dgx-a%02d" % (7 + i), 7200 + i, 0) for i in range(8)]
    write("held-out/rail8-all_reduce_perf.log",
          log("2.17", "all_reduce_perf", rail8, full, CURVES[("rail", "ring")], seed=23))
    write("rail-sendrecv_perf.log",
          log("2.13", "sendrecv_perf", [(a07, 7300, 0), (a08, 7301, 0)], full, CURVES[("rail", "ring")], seed=18))
    # An nccl-tests of 2022 (before 2.13: no Group, an "error" column, no root for all-reduce).
    write("old-2.12-all_reduce_perf.log",
          log("2.12", "all_reduce_perf", node("a100-n3", 9100, False), full, CURVES[("a100", "ring")], seed=19))
    # Failures: data corruption at one size; a non-MPI build under mpirun; a cut-off row.
    write("wrong-all_reduce_perf.log",
          log("2.17", "all_reduce_perf", node(a07, 41250), full, CURVES[("node", "nvls")], seed=11,
              wrong={64 * 2**20: (3, 0)}))
    two = log("2.13", "all_reduce_perf", [(a07, 5001, 0)], powers(8, 1024), CURVES[("node", "ring")], seed=20).splitlines(True)
    other = log("2.13", "all_reduce_perf", [(a08, 5002, 0)], powers(8, 1024), CURVES[("node", "ring")], seed=21).splitlines(True)
    write("nompi-all_reduce_perf.log", "".join(a + b for a, b in zip(two, other)))
    cut = log("2.13", "all_gather_perf", node(a07, 52310, False), powers(8, 2**20), CURVES[("node", "ring")], seed=22)
    lines = cut.splitlines(True)
    at = next(i for i, l in enumerate(lines) if l.lstrip().startswith("262144"))
    lines[at] = lines[at][:70] + "\n"
    write("truncated-all_gather_perf.log", "".join(lines))


if __name__ == "__main__":
    main()
