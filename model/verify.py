"""`cudalens model --integrate`: the candidates beside a model's problems tested again (the test job, as
`cudalens test` runs it), the integration module written for those that pass, and the whole model verified
and timed with them (`jobs/model_verify_job.py`). Typed results and their text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cudalens.model import integration as integration_module
from cudalens.model.integration import Accepted
from cudalens.model.profile import ModelError, last_line
from cudalens.worker.child.results import Measurement, OutputCheck
from cudalens.worker.run_job import run_job


@dataclass(frozen=True)
class CandidateTest:
    candidate: Accepted
    passed: bool
    message: str


@dataclass(frozen=True)
class KernelUse:
    name: str
    hits: int  # calls it ran in the eager comparison
    fallbacks: int  # calls of the same function with other arguments, run by the original


@dataclass(frozen=True)
class Integration:
    module: Path | None  # None: no candidate passed
    tests: tuple[CandidateTest, ...]
    checks: tuple[OutputCheck, ...] = ()
    compiled_checks: tuple[OutputCheck, ...] = ()
    kernels: tuple[KernelUse, ...] = ()
    timings: dict[str, tuple[Measurement, Measurement]] | None = None  # eager/compiled: (before, after)
    mode_only: Measurement | None = None  # eager through the swap mode with no kernel: the mode's own cost

    @property
    def passed(self) -> bool:
        return self.module is not None and all(c.passed for c in (*self.checks, *self.compiled_checks))


def integrate(
    path: str, entry: str | None, folder: Path, *, device: str | None = None, python: str | None = None,
    timeout_s: float = 600.0, compile: bool = True, allow_torch_ops: bool = False, atol: float | None = None,
    rtol: float | None = None,
    on_progress: Callable[[str, float | None], None] | None = None,
) -> Integration:
    """Test the candidates in `folder`, write the integration module for those that pass, verify and time the
    model with it. Raises `ModelError` for what the user must fix."""
    found = integration_module.candidates(folder)
    if not found:
        raise ModelError(f"{folder}: no candidate beside a problem (NAME{integration_module.CANDIDATE_SUFFIX}: "
                         "`cudalens optimize PROBLEM` writes one)")
    tests = []
    for candidate in found:
        payload = {"path": str(candidate.candidate.resolve()), "reference": str(candidate.problem.resolve()),
                   "trials": 5, "seed": 42, "time": False, "device": device, "allow_torch_ops": allow_torch_ops}
        outcome = run_job("test", payload, timeout_s=timeout_s, python=python, on_progress=on_progress)
        test = outcome.payload.get("test") or {}
        passed = outcome.status == "ok" and test.get("status") == "passed"
        message = "passed" if passed else test.get("message") or last_line(outcome.error)
        tests.append(CandidateTest(candidate, passed, message))
    accepted = [t.candidate for t in tests if t.passed]
    if not accepted:
        return Integration(None, tuple(tests))
    module = integration_module.write(folder, accepted, Path(path).name)
    payload = {"path": str(Path(path).resolve()), "entry": entry, "device": device,
               "integration": str(module.resolve()), "compile": compile, "atol": atol, "rtol": rtol}
    outcome = run_job("model_verify", payload, timeout_s=timeout_s, python=python, on_progress=on_progress,
                      cwd=str(Path(path).resolve().parent))
    if outcome.status != "ok":
        raise ModelError(f"{path}: the model with its kernels did not run: {last_line(outcome.error)}")
    d = outcome.payload
    if d.get("error"):
        raise ModelError(d["error"])
    timings = {kind: (Measurement.from_json(t["before"]), Measurement.from_json(t["after"]))
               for kind, t in d.get("timings", {}).items()}
    return Integration(
        module, tuple(tests),
        tuple(OutputCheck.from_json(c) for c in d["checks"]),
        tuple(OutputCheck.from_json(c) for c in d.get("compiled_checks", ())),
        tuple(KernelUse(*k) for k in d["kernels"]),
        timings,
        Measurement.from_json(d["mode_only"]) if d.get("mode_only") else None,
    )


def render(result: Integration) -> str:
    lines = []
    for t in result.tests:
        lines.append(f"{t.candidate.candidate.name}: {'accepted' if t.passed else 'not used: ' + t.message}")
    if result.module is None:
        lines.append("no kernel to integrate")
        return "\n".join(lines)
    lines.append(f"integration module: {result.module}")
    for k in result.kernels:
        lines.append(f"  {k.name}: ran for {k.hits} call(s), {k.fallbacks} call(s) of other shapes fell back")
    for label, checks in (("eager", result.checks), ("torch.compile", result.compiled_checks)):
        if checks:
            bad = [c for c in checks if not c.passed]
            lines.append(f"whole-model outputs, {label}: "
                         + ("equal within tolerance" if not bad else "; ".join(c.message for c in bad)))
    for kind, (before, after) in (result.timings or {}).items():
        speedup = before.median / after.median if after.median > 0 else float("nan")
        slower = ": slower with the kernels" if speedup < 1 else ""
        lines.append(f"{kind}: {before.median:.3f} ms before, {after.median:.3f} ms after ({speedup:.2f}×{slower})")
        if kind == "eager" and result.mode_only is not None:
            lines.append(f"  of which the swap mode alone: {result.mode_only.median - before.median:+.3f} ms "
                         f"({result.mode_only.median:.3f} ms through it with no kernel)")
    return "\n".join(lines)
