"""Job `test`: the correctness test of a file, then (when asked and passed) its timing against PyTorch.

payload: {"path", "reference"?, "trials"?, "seed"?, "device"?, "precision"?, "atol"?, "rtol"?,
          "time"?: bool, "budget_ms"?, "compile_reference"?: bool, "extra_cuda_cflags"?, "build_directory"?}
returns: {"test": TestResult json, "timing": TimingResult json | None, "kernels": [names], "error": str | None,
          "builds": ["fast NAME (…)" | "declined NAME: why" | "fell back NAME: why", ...],
          "context_broken"?: true (the file replaced a clock the timing trusts: this worker retires)}
"""

from __future__ import annotations

import runpy
import traceback
from pathlib import Path
from typing import Any

sibling = runpy.run_path(str(Path(__file__).with_name("jobkit.py")))["sibling"]


def run(payload: dict, ctx: Any = None) -> dict:
    loader = sibling("problem_loader")
    correctness = sibling("harness_correctness")
    results = sibling("../results")
    build_log = sibling("fast_inline").LOG
    guard = sibling("clock_guard")
    guard.remember()
    first = len(build_log)
    out = _run(payload, ctx, loader, correctness, results)
    out["builds"] = build_log[first:]
    patched = guard.replaced()
    if patched:
        # fails whatever it measured; the worker, whose clocks it changed for every later job, retires
        message = f"the file replaces {', '.join(patched)} (timing manipulation)"
        return {**out, "test": {**out["test"], "status": "failed", "message": message}, "timing": None,
                "context_broken": True}
    return out


def _run(payload: dict, ctx: Any, loader: Any, correctness: Any, results: Any) -> dict:
    if ctx is not None:
        ctx.progress("building", 0.1)
    try:
        problem = loader.load_problem(payload)
    except loader.ProblemError as exc:
        return {"test": results.TestResult("error", message=str(exc)).to_json(), "timing": None, "kernels": [], "error": str(exc)}
    except Exception as exc:  # the user's module raised while loading (a load_inline build error, ...)
        message = f"loading {Path(payload['path']).name} failed: {type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
        status = "crashed" if correctness.is_crash(str(exc)) else "error"
        result = results.TestResult(status, message=message, traceback=traceback.format_exc())
        return {"test": result.to_json(), "timing": None, "kernels": [], "error": message}
    test = correctness.check(
        problem.make_reference,
        problem.make_candidate,
        problem.get_inputs,
        trials=int(payload.get("trials", correctness.DEFAULT_TRIALS)),
        seed=int(payload.get("seed", 42)),
        device=payload.get("device"),
        precision=payload.get("precision"),
        atol=payload.get("atol"),
        rtol=payload.get("rtol"),
        on_trial=None if ctx is None else lambda k, n: ctx.progress(f"trial {k + 1}/{n}", 0.2 + 0.5 * k / n),
    )
    timing = None
    if payload.get("time") and test.passed:
        if ctx is not None:
            ctx.progress("timing against PyTorch", 0.7)
        timing = _time(problem, payload)
    return {
        "test": test.to_json(),
        "timing": None if timing is None else timing.to_json(),
        "kernels": problem.kernel_names,
        "error": None,
    }


def _time(problem: Any, payload: dict) -> Any:
    import torch

    timing = sibling("harness_timing")
    correctness = sibling("harness_correctness")
    device = torch.device(payload.get("device") or ("cuda" if torch.cuda.is_available() else "cpu"))
    reference = correctness.place(problem.make_reference(), device, None)
    candidate = correctness.place(problem.make_candidate(), device, None)
    torch.manual_seed(int(payload.get("seed", 42)))
    inputs = correctness.make_inputs(problem.get_inputs, device)
    with torch.no_grad():
        return timing.compare(
            candidate, reference, inputs, device=str(device),
            budget_ms=float(payload.get("budget_ms", timing.DEFAULT_BUDGET_MS)),
            compile_reference=bool(payload.get("compile_reference", False)),
        )
