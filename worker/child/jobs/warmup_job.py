"""Import what later jobs need (and open the CUDA context) so that the first real job does not pay for it."""

from __future__ import annotations

import importlib
import time

from ..lib import background, fast_inline

BESIDE_WARM_UP = True  # it starts the warm-up's threads (lib/background.py)


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
    precompiling = False
    if payload.get("precompile") is not None and cuda:
        # the header every fast build's glue includes, started now in a thread of this worker, so that the first
        # save finds it made (on a fresh H200 it was half of that save's 30.6 s)
        precompiling = fast_inline.warm_precompiled_header(list(payload["precompile"])) is not None
    profiling = False
    if payload.get("profiler") and cuda:
        # the timing's kernel_ms opens torch.profiler sessions: CUPTI starts, and the profiler's event parser
        # loads, in the first one (≈ 2.8 s on the H200), which was otherwise the first save's test. In a thread, so
        # that the build of a file that just opened, which needs none of it, does not wait for it (jobs that do
        # wait: worker_main.run_job); no CUPTI: the timing says so where it needs kernel_ms
        background.start("profiler", _profiler_session)
        profiling = True
    return {"seconds": timings, "missing": missing, "cuda": cuda, "precompiling": precompiling, "profiling": profiling}


def _profiler_session() -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.ones(1, device="cuda").add_(1)
        torch.cuda.synchronize()
    prof.events()
