"""Where a machine's first build of a `.cu` file goes (on a GPU host, new caches): torch's import, then the fast
build as the worker runs it, then each of its commands alone, the link also with other linkers. Prints one line
per figure; the commands' text goes to stderr.

    python benchmarks/first_build_phases.py [FILE]   (default: tests/runtime/data/transpose.cu)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(label: str, cmd: str, cwd: Path) -> float:
    start = time.perf_counter()
    run = subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    print(f"{label:<58} {took:6.2f} s{'' if run.returncode == 0 else '  FAILED: ' + run.stderr[-300:]}", flush=True)
    return took


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "runtime" / "data" / "transpose.cu"
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="cudalens-first-build-")
    top = subprocess.run([sys.executable, "-X", "importtime", "-c", "import torch"], capture_output=True, text=True)
    rows = [ln.split("|") for ln in top.stderr.splitlines() if ln.startswith("import time:") and "|" in ln]
    heavy = sorted(((int(r[1]), r[2].rstrip()) for r in rows[1:] if r[1].strip().isdigit()), reverse=True)[:12]
    for cumulative, name in heavy:
        print(f"  import {name.strip():<50} {cumulative / 1e6:6.2f} s (cumulative)")
    start = time.perf_counter()
    import torch

    print(f"{'import torch, in this process':<58} {time.perf_counter() - start:6.2f} s  (torch {torch.__version__})")
    from cudalens.worker.child.lib import fast_inline, problem_loader

    loader, fast = problem_loader, fast_inline
    text = path.read_text()
    start = time.perf_counter()
    loader.compile_cuda(loader.build_name(path, text), text, loader.host_functions(text), {})
    print(f"{'first fast build':<58} {time.perf_counter() - start:6.2f} s")
    print("  " + "\n  ".join(fast.LOG))
    lane = next(fast.build_root().glob("*/lane0"))
    bindings = lane.parent / "bindings"
    so = next(lane.glob("*.so")).name
    explain = subprocess.run(["ninja", "-C", str(lane), "-d", "explain", "-n"], capture_output=True, text=True)
    print(f"  ninja ({shutil.which('ninja')}) after the build, dry run: {(explain.stdout + explain.stderr).strip()[-1500:]}")
    timed("ninja --version", "ninja --version", lane)
    commands = subprocess.run(["ninja", "-C", str(lane), "-t", "commands", so], capture_output=True, text=True).stdout
    *compiles, link = commands.strip().splitlines()
    print("\n".join(commands.strip().splitlines()), file=sys.stderr)
    for cmd in compiles:
        target = re.search(r"-o (\S+)", cmd).group(1)
        timed(f"alone: {target}", cmd, lane)
    main_cmd = subprocess.run(["ninja", "-C", str(bindings), "-t", "commands", "main.o"], capture_output=True, text=True)
    timed("alone: bindings main.o", main_cmd.stdout.strip().splitlines()[-1], bindings)
    timed("alone: link (as torch writes it)", link, lane)
    for linker in ("gold", "lld", "mold"):
        if shutil.which(f"ld.{linker}") or shutil.which(linker):
            timed(f"alone: link with -fuse-ld={linker}", link.replace(f"-o {so}", f"-fuse-ld={linker} -o {linker}.so"), lane)
        else:
            print(f"  no ld.{linker}")
    timed("ninja in the lane, nothing to do", "ninja -v", lane)
    Path(lane / so).unlink()
    timed("ninja in the lane, the link alone", "ninja -v", lane)
    from torch.utils import cpp_extension

    Path(lane / so).unlink()
    start = time.perf_counter()
    cpp_extension._run_ninja_build(str(lane), False, "link")
    print(f"{'torch._run_ninja_build, the link alone':<58} {time.perf_counter() - start:6.2f} s")
    edited = text.replace("}", "}\n// an edit", 1)
    for label, source in (("an edit's build", edited), ("another edit's build", edited + "\n// again")):
        start = time.perf_counter()
        loader.compile_cuda(loader.build_name(path, source), source, loader.host_functions(source), {})
        print(f"{label:<58} {time.perf_counter() - start:6.2f} s  {fast.LOG[-1].split(' in ', 1)[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
