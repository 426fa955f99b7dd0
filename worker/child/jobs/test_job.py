"""Job `test`: the correctness test of a file, then (when asked and passed) its timing against PyTorch.

payload: {"path", "reference"?, "trials"?, "seed"?, "device"?, "precision"?, "atol"?, "rtol"?,
          "time"?: bool, "budget_ms"?, "compile_reference"?: bool, "baseline"?: "eager" | "compile" (what the
          speedup is against; "compile" times the compiled reference), "extra_cuda_cflags"?, "build_directory"?,
          "static_checks"?: bool (default true; the optimize loop checks before it runs a candidate),
          "allow_torch_ops"?: bool, "limit_factor"?, "limit_floor_s"?,
          "reference_first"?: bool (time the reference before the candidate: a re-verification's order)}
returns: {"test": TestResult json, "timing": TimingResult json | None, "kernels": [names], "error": str | None,
          "builds": ["fast NAME (…)" | "declined NAME: why" | "fell back NAME: why", ...],
          "seconds": {"load"?, "check"?, "warm-up"?, "timing"?} (where the job's time went, the wait for the
          worker's warm-up included: the server logs it),
          "context_broken"?: true (the file replaced a clock the timing trusts: this worker retires)}

The anti-cheat checks (worker/child/anti_cheat.py) are part of the test: the static ones on a `.py` candidate, the
run-time ones in the harness (inputs, aliasing; the outputs of timed calls, each on fresh inputs) and here
(clocks; a time below the physical bound; device time carried by kernels not the file's). A `reject` finding
fails a test whose trials passed; every finding goes to the result with its code and line.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import anti_cheat, results
from ..lib import (
    attribution,
    background,
    clock_guard,
    fast_inline,
    harness_correctness,
    harness_timing,
    physical_bound,
    problem_loader,
    torch_guard,
)

# the build (load) and the trials run beside the warm-up's profiler session; the timing, which opens its own,
# waits for it (lib/background.py)
BESIDE_WARM_UP = True


def run(payload: dict, ctx: Any = None) -> dict:
    clock_guard.remember()
    torch_guard.remember()
    first = len(fast_inline.LOG)
    try:
        out = _run(payload, ctx)
    except Exception:
        if not _replacements():
            raise
        out = {"test": results.TestResult("error", traceback=traceback.format_exc()).to_json(), "timing": None,
               "kernels": [], "error": None}
    out["builds"] = fast_inline.LOG[first:]
    patched = _replacements()
    if patched:
        # fails whatever it measured; the worker, whose clocks or torch it changed for every later job, retires
        test = results.TestResult.from_json(out["test"])
        cheats = [clock_finding(r, payload["path"], check) for r, check in patched]
        message = f"{cheats[0].message} (timing manipulation)"
        seen = {(c.code, c.line) for c in test.cheats if c.line}  # the static check saw the same line
        cheats = [c for c in cheats if (c.code, c.line) not in seen]
        failed = replace(test, status="failed", message=message, cheats=(*test.cheats, *cheats))
        return {**out, "test": failed.to_json(), "timing": None, "context_broken": True}
    return out


def _replacements() -> list[tuple[Any, str]]:
    """What the file replaced in this process: a clock the timing trusts, or a torch function the reference (or a
    check) calls — a slower `torch.sigmoid` makes an honest kernel look six times faster."""
    clocks = [(r, "clock-replaced") for r in clock_guard.replaced()]
    return clocks + [(clock_guard.Replacement(*r), "torch-replaced") for r in torch_guard.replaced()]


def clock_finding(replacement: Any, path: str, check: str = "clock-replaced") -> Any:
    """CL906 at the line that replaced the clock (or torch function), when that line is in the tested file."""
    here = replacement.file and Path(replacement.file).resolve() == Path(path).resolve()
    if here:
        where = f" at line {replacement.line}"
    elif replacement.file:
        where = f" in {replacement.file}:{replacement.line}"
    else:
        where = ""
    return anti_cheat.finding(check, f"the file replaces {replacement.name}{where}", replacement.line if here else 0)


def _run(payload: dict, ctx: Any) -> dict:
    if ctx is not None:
        ctx.progress("building", 0.1)
    seconds: dict[str, float] = {}
    began = time.perf_counter()
    try:
        problem = problem_loader.load_problem(payload)
    except problem_loader.ProblemError as exc:
        return {"test": results.TestResult("error", message=str(exc)).to_json(), "timing": None, "kernels": [], "error": str(exc)}
    except Exception as exc:  # the user's module raised while loading (a load_inline build error, ...)
        message = f"loading {Path(payload['path']).name} failed: {type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
        status = "crashed" if harness_correctness.is_crash(str(exc)) else "error"
        result = results.TestResult(status, message=message, traceback=traceback.format_exc())
        return {"test": result.to_json(), "timing": None, "kernels": [], "error": message}
    seconds["load"] = time.perf_counter() - began
    limits = {k: float(payload[k]) for k in ("limit_factor", "limit_floor_s") if payload.get(k) is not None}
    began = time.perf_counter()
    test = harness_correctness.check(
        problem.make_reference,
        problem.make_candidate,
        problem.get_inputs,
        trials=int(payload.get("trials", harness_correctness.DEFAULT_TRIALS)),
        seed=int(payload.get("seed", 42)),
        device=payload.get("device"),
        precision=payload.get("precision"),
        atol=payload.get("atol"),
        rtol=payload.get("rtol"),
        on_trial=None if ctx is None else lambda k, n: ctx.progress(f"trial {k + 1}/{n}", 0.2 + 0.5 * k / n),
        watch=None if ctx is None else lambda stage, limit_s: ctx.progress(stage, None, limit_s),
        # a problem `cudalens model` wrote: one more trial on what the model passed to the call
        recorded=getattr(problem.reference_module, "get_recorded_inputs", None) if problem.inputs_how == "full size" else None,
        **limits,
    )
    test = with_static_checks(test, payload)
    seconds["check"] = time.perf_counter() - began
    timing = None
    if payload.get("time") and test.passed:
        if ctx is not None:
            ctx.progress("timing against PyTorch", 0.7)
        waited = background.wait()  # the warm-up's profiler session, which the build and trials ran beside
        if waited >= 0.05:
            seconds["warm-up"] = waited
        began = time.perf_counter()
        timing, test = _time(problem, payload, test, ctx)
        seconds["timing"] = time.perf_counter() - began
    return {
        "test": test.to_json(),
        "timing": None if timing is None else timing.to_json(),
        "kernels": problem.kernel_names,
        "error": None,
        "seconds": {k: round(v, 3) for k, v in seconds.items()},
    }


def with_static_checks(test: Any, payload: dict) -> Any:
    """The test with the static anti-cheat findings of a `.py` candidate; a `reject` one fails it."""
    path = Path(payload["path"])
    if path.suffix != ".py" or not payload.get("static_checks", True):
        return test
    source = path.read_text(encoding="utf-8", errors="replace")
    policy = anti_cheat.AntiCheatPolicy.for_test(
        source, bool(payload.get("allow_torch_ops")), "fp32" if test.dtype in ("float32", "") else test.dtype,
    )
    found = tuple(anti_cheat.check_candidate(source, policy))
    if not found:
        return test
    test = replace(test, cheats=(*test.cheats, *found))
    rejects = anti_cheat.rejected(list(found))
    if test.passed and rejects:
        where = f" (line {rejects[0].line})" if rejects[0].line else ""
        more = f"; {len(rejects) - 1} more" if len(rejects) > 1 else ""
        test = replace(test, status="failed", message=f"{rejects[0].message}{where}{more}")
    return test


def _time(problem: Any, payload: dict, test: Any, ctx: Any) -> tuple[Any, Any]:
    """The timing, and the test again: failed when a timed call's result or inputs differ from the reference's on
    the same inputs (harness_correctness.TimedCheck), when the time is below what the problem needs on this GPU
    (CL906, physical_bound), or when the file's kernels did not do the work (CL907, attribution)."""
    import torch

    device = torch.device(payload.get("device") or ("cuda" if torch.cuda.is_available() else "cpu"))
    baseline = payload.get("baseline", "eager")
    if baseline not in results.BASELINES:
        raise ValueError(f"baseline {baseline!r}: expected one of {', '.join(results.BASELINES)}")
    reference = harness_correctness.place(problem.make_reference(), device, None)
    candidate = harness_correctness.place(problem.make_candidate(), device, None)
    seeds = harness_correctness.trial_seeds(int(payload.get("seed", 42)) ^ harness_correctness.TIMING_SEED, 2)
    watch = None if ctx is None else (lambda stage, limit_s: ctx.progress(stage, 0.8, limit_s))
    with torch.no_grad():
        # the candidate's timed calls and the reference's on draws apart: the reference never computes, before a
        # candidate's call, the values that call gets (its checks run the reference after it)
        fresh = harness_correctness.FreshInputs(problem.get_inputs, device, seeds[0])
        reference_draws = harness_correctness.seeded_draws(problem.get_inputs, device, seeds[1])
        bound = _bound(reference, reference_draws, device)
        try:
            measured = harness_timing.compare(
                candidate, reference, fresh, check=harness_correctness.TimedCheck(reference, fresh, test.atol, test.rtol),
                device=str(device), budget_ms=float(payload.get("budget_ms", harness_timing.DEFAULT_BUDGET_MS)),
                compile_reference=bool(payload.get("compile_reference", False)) or baseline == "compile",
                call_limit=test.limits, watch=watch,
                reference_first=bool(payload.get("reference_first", False)), reference_draw=reference_draws,
            )
        except harness_timing.TimedCallWrong as wrong:
            return None, _failed(test, anti_cheat.finding(wrong.check, wrong.message, 0))
    measured = replace(measured, bound=bound, attribution=_attribution(problem, payload, measured), baseline=baseline)
    if bound is not None and measured.candidate.median < bound.ms:
        return None, _failed(test, anti_cheat.finding("below-physical-bound", (
            f"the candidate's call took {measured.candidate.median:.4g} ms, but any correct kernel needs at least "
            f"{bound.ms:.4g} ms on this GPU ({bound.describe()}): the work was not done while it was timed"
        ), 0))
    if measured.attribution is not None and (found := attribution.finding(measured.attribution)) is not None:
        return None, _failed(test, found)
    return measured, test


def _failed(test: Any, cheat: Any) -> Any:
    return replace(test, status="failed", message=cheat.message, cheats=(*test.cheats, cheat))


def _bound(reference: Any, draws: Any, device: Any) -> Any:
    """The problem's physical bound on `device`, from one reference call on its first timed call's inputs."""
    if device.type != "cuda":
        return None
    args = draws(0)
    flops, out = physical_bound.counted(reference, args)
    return physical_bound.bound(args, harness_correctness.flatten(out), flops, device)


def _attribution(problem: Any, payload: dict, measured: Any) -> Any:
    """Whose kernels carried the candidate's device time, where the file defines kernels that must carry it."""
    if not measured.candidate.kernels or payload.get("allow_torch_ops"):
        return None
    source = Path(payload["path"]).read_text(encoding="utf-8", errors="replace")
    if not anti_cheat.defines_kernel(source):
        return None  # a PyTorch candidate: torch's kernels are its own
    return attribution.attribute(measured.candidate.kernels, problem.kernel_names, source)
