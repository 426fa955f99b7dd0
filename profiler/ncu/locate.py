"""Where Nsight Compute, its Python report module and compute-sanitizer live on this machine."""

from __future__ import annotations

import glob
import os
from pathlib import Path

from cudalens.profiler import processes


def _cuda_homes() -> list[Path]:
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda", "/opt/cuda"]
    return [Path(h) for h in homes if h]


def find_tool(name: str, env_var: str | None = None) -> str | None:
    """`ncu` or `compute-sanitizer`: `$CUDALENS_NCU`-style override, PATH, then the usual install places."""
    if env_var and os.environ.get(env_var):
        return os.environ[env_var]
    found = processes.which(name)
    if found:
        return found
    places = [home / "bin" / name for home in _cuda_homes()]
    places += [home / "compute-sanitizer" / name for home in _cuda_homes()]
    places += [Path(p) for p in sorted(glob.glob(f"/opt/nvidia/nsight-compute/*/{name}"), reverse=True)]
    return next((str(p) for p in places if p.is_file() and os.access(p, os.X_OK)), None)


def find_ncu() -> str | None:
    return find_tool("ncu", "CUDALENS_NCU")


def find_sanitizer() -> str | None:
    return find_tool("compute-sanitizer", "CUDALENS_COMPUTE_SANITIZER")


def ncu_python_dir(ncu: str) -> str | None:
    """The `extras/python` folder holding `ncu_report.py` for this ncu (the CUDA toolkit's `bin/ncu` is a
    launcher script, so the folder sits beside the real install, not beside the launcher)."""
    real = Path(ncu).resolve()
    candidates = [real.parent / "extras" / "python"]
    for home in {real.parent.parent, *_cuda_homes()}:
        candidates += [Path(p) / "extras" / "python" for p in sorted(glob.glob(str(home / "nsight-compute*")), reverse=True)]
    candidates += [Path(p) for p in sorted(glob.glob("/opt/nvidia/nsight-compute/*/extras/python"), reverse=True)]
    return next((str(c) for c in candidates if (c / "ncu_report.py").is_file()), None)
