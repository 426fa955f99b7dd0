"""A speedup above the plausibility threshold (KernelBench's 10× over eager PyTorch) counts only once the same test
has passed again in a fresh process: new seeds, the reference timed before the candidate, nothing the first run
left behind (a cache, a patched module, a warmed trick). Then the lower of the two speedups counts; a re-run that
fails fails the result, with its own findings.

Every caller of the `test` job passes its result through here — `cudalens test`, the save-time test, the optimize
loop's evaluations, the model's ops: `reverification` says whether a re-run is needed and with what payload, the
caller runs it in a fresh worker its own way (`run_job` here, an async pool in the server), `reverified` merges.
`verified` does all three for a blocking caller.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from cudalens.worker.child.anti_cheat import finding
from cudalens.worker.child.protocol import JobResult
from cudalens.worker.child.results import TestResult, TimingResult
from cudalens.worker.run_job import run_job

PLAUSIBLE_SPEEDUP = 10.0  # KernelBench's excessive_speedup_threshold
RESEED = 0x2E7E51F1  # the re-run's seed: the first run's, changed


def _timing(result: JobResult) -> TimingResult | None:
    data = result.payload.get("timing") if result.ok else None
    return TimingResult.from_json(data) if data else None


def reverification(result: JobResult, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The payload of the re-run `result` needs before its speedup counts, or None (none claimed above the
    threshold, or the test failed anyway)."""
    timing = _timing(result)
    if timing is None or not (timing.speedup > PLAUSIBLE_SPEEDUP):
        return None
    return {**payload, "time": True, "seed": int(payload.get("seed", 42)) ^ RESEED, "reference_first": True}


def reverified(result: JobResult, again: JobResult) -> JobResult:
    """`result` as its re-run in a fresh process leaves it: failed with the re-run's findings where it did not pass,
    else with the lower of the two timings and a warning that says both."""
    first = _timing(result)
    test = TestResult.from_json(result.payload["test"])
    second = _timing(again)
    again_test = TestResult.from_json(again.payload["test"]) if again.ok and again.payload.get("test") else None
    if first is None:
        return result
    if again_test is None or not again_test.passed or second is None:
        why = (again_test.message if again_test is not None else _first_line(again.error) or again.status)
        cheats = tuple(c for c in (again_test.cheats if again_test else ()) if c.severity == "reject")
        cheats = cheats or (finding("not-reproduced", f"the re-run said: {why}", 0),)
        message = (f"{first.speedup:.3g}× over eager PyTorch (above {PLAUSIBLE_SPEEDUP:g}×) did not hold up in a "
                   f"fresh process with new seeds and the reference timed first: {why}")
        failed = replace(test, status="failed", message=message, cheats=(*test.cheats, *cheats))
        return replace(result, payload={**result.payload, "test": failed.to_json(), "timing": None})
    kept = first if first.speedup <= second.speedup or math.isnan(second.speedup) else second
    note = (f"{first.speedup:.3g}× over eager PyTorch is above the plausibility threshold ({PLAUSIBLE_SPEEDUP:g}×): "
            f"re-verified in a fresh process with new seeds and the reference timed first ({second.speedup:.3g}× "
            "there); the lower counts")
    kept = replace(kept, candidate=replace(kept.candidate, warnings=(*kept.candidate.warnings, note)))
    return replace(result, payload={**result.payload, "timing": kept.to_json()})


def verified(result: JobResult, payload: dict[str, Any], *, timeout_s: float, python: str | None = None,
             env: dict[str, str] | None = None, cwd: str | None = None) -> JobResult:
    """`result`, re-verified in a fresh worker (`run_job`) where its speedup needs it."""
    again = reverification(result, payload)
    if again is None:
        return result
    return reverified(result, run_job("test", again, timeout_s=timeout_s, python=python, env=env, cwd=cwd))


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1][:300] if lines else ""
