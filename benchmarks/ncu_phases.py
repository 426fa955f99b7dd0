"""Where save→ncu hints spends its time (on a GPU): python+torch start plain and under ncu, and one
`profile_file` with each tool run timed. Prints one line per phase.

    python benchmarks/ncu_phases.py [FILE]   (default: tests/runtime/data/transpose.cu)
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from cudalens.profiler.ncu import locate
from cudalens.profiler.ncu import profile as ncu_profile

ROOT = Path(__file__).resolve().parents[1]
START = "import torch; torch.zeros(1, device='cuda'); torch.cuda.synchronize()"


def timed(label: str, cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=False)
    took = time.perf_counter() - start
    print(f"{label:<58} {took:6.2f} s", flush=True)
    return took


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "runtime" / "data" / "transpose.cu"
    ncu = locate.find_ncu()
    if ncu is None:
        print("no ncu")
        return 2
    timed("python + import torch + CUDA context", [sys.executable, "-c", START])
    timed("the same under ncu (no kernel profiled)", [ncu, "--kernel-name", "regex:^nothing$", sys.executable, "-c", START])
    timed("ncu --version", [ncu, "--version"])
    original = ncu_profile.processes.run

    def run_tool(cmd, **kwargs):
        start = time.perf_counter()
        out = original(cmd, **kwargs)
        print(f"  tool {Path(cmd[0]).name} {' '.join(Path(c).name for c in cmd[1:3])[:40]:<44} {time.perf_counter() - start:6.2f} s", flush=True)
        return out

    ncu_profile.processes.run = run_tool  # every child of the profile goes through processes.run
    for attempt in ("first", "second (build cached)"):
        start = time.perf_counter()
        profile = ncu_profile.profile_file(ncu_profile.ProfileRequest(str(path), use_cache=False))
        print(f"profile_file {attempt:<45} {time.perf_counter() - start:6.2f} s  "
              f"({len(profile.kernels)} kernels, {len(profile.lines)} lines, error={profile.error})", flush=True)
    request = ncu_profile.ProfileRequest(str(path), use_cache=False, standby=True)
    ncu_profile.prepare_standby(request, str(path), path.read_text())
    time.sleep(10)  # what the test and timing of a save give it
    start = time.perf_counter()
    profile = ncu_profile.profile_file(request)
    print(f"profile_file from a warm standby {'':<29} {time.perf_counter() - start:6.2f} s  "
          f"({len(profile.kernels)} kernels, {len(profile.lines)} lines, error={profile.error})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
