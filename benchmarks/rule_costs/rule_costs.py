"""What the CL501, CL503, CL601 and CL701 patterns cost on this GPU, against their fixes: builds
rule_costs.cu with nvcc, runs it, and prints each pair's medians and the ratio.

Run (GPU machine): python3 benchmarks/rule_costs/rule_costs.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("rule_costs.cu")
PAIRS = (
    ("CL501_fp64_literal", "CL501_fp32_literal"),
    ("CL503_runtime_divisor", "CL503_constant_divisor"),
    ("CL701_atomic_one_address", "CL701_atomic_per_block"),
    ("CL601_sync_every_step", "CL601_sync_once"),
)


def main() -> int:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        print("needs nvcc and an NVIDIA GPU", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "rule_costs"
        subprocess.run([nvcc, "-O3", "-arch=native", "-std=c++17", "-o", str(exe), str(SOURCE)], check=True)
        out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        print(out.stdout + out.stderr, file=sys.stderr)
        return 1
    ms = {name: float(value) for name, value in (line.split() for line in out.stdout.splitlines())}
    for flagged, fixed in PAIRS:
        print(f"{flagged:28s} {ms[flagged]:9.3f} ms   {fixed:28s} {ms[fixed]:9.3f} ms   "
              f"× {ms[flagged] / ms[fixed]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
