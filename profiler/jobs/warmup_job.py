"""Import what later jobs need (and open the CUDA context) so that the first real job does not pay for it."""

from __future__ import annotations

import importlib
import time


def run(payload: dict) -> dict:
    timings: dict[str, float] = {}
    missing: dict[str, str] = {}
    for name in payload.get("modules", ()):
        start = time.perf_counter()
        try:
            importlib.import_module(name)
        except ImportError as exc:
            missing[name] = str(exc)
            continue
        timings[name] = time.perf_counter() - start
    cuda = False
    if payload.get("cuda") and "torch" in timings:
        import torch

        if torch.cuda.is_available():
            start = time.perf_counter()
            torch.empty(1, device="cuda")
            torch.cuda.synchronize()
            timings["cuda_context"] = time.perf_counter() - start
            cuda = True
    return {"seconds": timings, "missing": missing, "cuda": cuda}
