#!/usr/bin/env python3
"""Writes the Megatron-LM logs of this folder's three jobs for the calibration walk-through
(calibration/README.md) and its test. They are NOT measurements: each job's step time is what
Sextant predicts for it on the profile imported from ../nccl-tests (itself synthetic) with the
compute factor set to 0.70 instead of the published 0.759, printed as Megatron-LM prints
"elapsed time per iteration (ms)" over 40 iterations with 1% deterministic noise and three slow
warm-up steps. Fitting the compute factor to them must give back about 0.70: the round trip the
walk-through shows, not evidence of accuracy.

    python3 tests/data/jobs/generate.py build/sextant
"""
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = os.path.join(HERE, "..", "nccl-tests")
COMPUTE = 0.70


def sextant(binary, *args):
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


def main(binary):
    with tempfile.TemporaryDirectory() as tmp:
        imported = os.path.join(tmp, "imported.json")
        logs = sorted(os.path.join(LOGS, f) for f in os.listdir(LOGS)
                      if f.split("-")[0] in ("node", "rail", "cluster") and f.endswith(".log"))
        sextant(binary, "calibrate", "import-nccl-tests", *logs, "--out", imported)
        truth = os.path.join(tmp, "truth.json")
        profile = json.load(open(imported))
        profile["factors"] = {"compute": COMPUTE}
        json.dump(profile, open(truth, "w"))
        for tp in (2, 4, 8):
            name = "llama3-8b-tp%d" % tp
            scenario = os.path.join(HERE, name + ".json")
            step = json.loads(sextant(binary, "simulate", scenario, "--calibration", truth, "--json"))["step_time_s"]
            rng = random.Random(tp)
            lines = []
            for it in range(1, 41):
                ms = step * 1e3 * (1 + rng.uniform(-0.01, 0.01)) * (1.6 if it <= 3 else 1.0)
                lines.append(" [2026-03-18 10:%02d:%02d] iteration %8d/   50000 | consumed samples: %12d | "
                             "elapsed time per iteration (ms): %.1f | learning rate: 3.000E-04 | global batch size:   512 | "
                             "lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations:   0 | "
                             "number of nan iterations:   0 |\n"
                             % (it // 20, (it * 3) % 60, it, it * 512, ms, 11.0 - 0.05 * it, 1.2 + 0.01 * it))
            with open(os.path.join(HERE, name + ".log"), "w") as f:
                f.writelines(lines)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/sextant")
