"""`cudalens model --integrate`: the candidates beside a model's problems tested again (the test job, as
`cudalens test` runs it), the integration module written for those that pass, and the whole model verified
and timed with them (`jobs/model_verify_job.py`). Typed results and their text."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from cudalens.model import integration as integration_module
from cudalens.model.integration import Accepted
from cudalens.model.profile import ModelError, last_line
from cudalens.model.swap import Mode, SwapDecision, decide, whole_model_check
from cudalens.profiler.reverify import verified
from cudalens.worker.child.results import Measurement, OutputCheck, TimingResult
from cudalens.worker.run_job import run_job

RESULT = "integration.json"  # in the problems' folder: the last `--integrate`'s Integration


@dataclass(frozen=True)
class CandidateTest:
    candidate: Accepted
    passed: bool
    message: str
    timing: TimingResult | None = None  # the op alone: the kernel, eager PyTorch, torch.compile (when asked)
    decisions: tuple[SwapDecision, ...] = ()  # one per mode timed

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(d.mode.value for d in self.decisions if d.swapped)

    def to_json(self) -> dict:
        return {"candidate": self.candidate.to_json(), "passed": self.passed, "message": self.message,
                "timing": None if self.timing is None else self.timing.to_json(),
                "decisions": [d.to_json() for d in self.decisions]}

    @classmethod
    def from_json(cls, d: dict) -> CandidateTest:
        timing = d.get("timing")
        return cls(Accepted.from_json(d["candidate"]), bool(d["passed"]), str(d.get("message", "")),
                   None if timing is None else TimingResult.from_json(timing),
                   tuple(SwapDecision.from_json(x) for x in d.get("decisions", ())))


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
    timings: dict[str, tuple[Measurement, Measurement | None]] | None = None  # eager/compiled: (before, after;
    # None: no kernel swapped in that mode, the model is the original)
    mode_only: Measurement | None = None  # eager through the swap's checks with no kernel run: its own cost
    replaced: int = 0  # calls the compiled graph runs as a kernel's custom op
    seconds: tuple[tuple[str, float], ...] = ()  # wall time of each candidate's test and each verification stage

    @property
    def passed(self) -> bool:
        return self.module is not None and all(c.passed for c in (*self.checks, *self.compiled_checks))

    def to_json(self) -> dict:
        def measured(m: Measurement | None) -> dict | None:
            return None if m is None else m.to_json()

        return {
            "module": None if self.module is None else str(self.module),
            "tests": [t.to_json() for t in self.tests],
            "checks": [c.to_json() for c in self.checks],
            "compiled_checks": [c.to_json() for c in self.compiled_checks],
            "kernels": [asdict(k) for k in self.kernels],
            "timings": {kind: [before.to_json(), measured(after)] for kind, (before, after) in (self.timings or {}).items()},
            "mode_only": measured(self.mode_only),
            "replaced": self.replaced,
            "seconds": [list(s) for s in self.seconds],
        }

    @classmethod
    def from_json(cls, d: dict) -> Integration:
        def measured(m: dict | None) -> Measurement | None:
            return None if m is None else Measurement.from_json(m)

        return cls(
            Path(d["module"]) if d.get("module") else None,
            tuple(CandidateTest.from_json(t) for t in d.get("tests", ())),
            tuple(OutputCheck.from_json(c) for c in d.get("checks", ())),
            tuple(OutputCheck.from_json(c) for c in d.get("compiled_checks", ())),
            tuple(KernelUse(str(k["name"]), int(k["hits"]), int(k["fallbacks"])) for k in d.get("kernels", ())),
            {kind: (Measurement.from_json(pair[0]), measured(pair[1])) for kind, pair in (d.get("timings") or {}).items()},
            measured(d.get("mode_only")), int(d.get("replaced", 0)),
            tuple((str(stage), float(s)) for stage, s in d.get("seconds", ())),
        )


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
    tests, seconds = [], []
    for candidate in found:
        began = time.monotonic()
        tests.append(_test(candidate, device=device, python=python, timeout_s=timeout_s, compile=compile,
                           allow_torch_ops=allow_torch_ops, on_progress=on_progress))
        seconds.append((f"testing {candidate.candidate.name}", round(time.monotonic() - began, 2)))
    accepted = [t.candidate for t in tests if t.passed]
    if not accepted:
        return _kept(folder, path, Integration(None, tuple(tests), seconds=tuple(seconds)))
    module = integration_module.write(folder, accepted, Path(path).name,
                                      {t.candidate.name: t.modes for t in tests if t.passed})
    payload = {"path": str(Path(path).resolve()), "entry": entry, "device": device,
               "integration": str(module.resolve()), "compile": compile, "atol": atol, "rtol": rtol}
    outcome = run_job("model_verify", payload, timeout_s=timeout_s, python=python, on_progress=on_progress,
                      cwd=str(Path(path).resolve().parent))
    if outcome.status != "ok":
        raise ModelError(f"{path}: the model with its kernels did not run: {last_line(outcome.error)}")
    d = outcome.payload
    if d.get("error"):
        raise ModelError(d["error"])
    timings = {kind: (Measurement.from_json(t["before"]), Measurement.from_json(t["after"]) if t.get("after") else None)
               for kind, t in d.get("timings", {}).items()}
    checked = _whole_model_checked(tests, timings)
    if checked != tests:  # a mode the kernels made slower: the module keeps none of them there
        tests = checked
        integration_module.write(folder, accepted, Path(path).name, {t.candidate.name: t.modes for t in tests if t.passed})
    return _kept(folder, path, Integration(
        module, tuple(tests),
        tuple(OutputCheck.from_json(c) for c in d["checks"]),
        tuple(OutputCheck.from_json(c) for c in d.get("compiled_checks", ())),
        tuple(KernelUse(*k) for k in d["kernels"]),
        timings,
        Measurement.from_json(d["mode_only"]) if d.get("mode_only") else None,
        int(d.get("replaced", 0)),
        (*seconds, *((f"verifying: {stage}", s) for stage, s in d.get("seconds", {}).items())),
    ))


def _kept(folder: Path, model: str, result: Integration) -> Integration:
    """`result` written beside the problems as RESULT, what `cudalens report FOLDER` draws its page from."""
    record = {"version": 1, "model": str(Path(model).resolve()), "integration": result.to_json()}
    (folder / RESULT).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return result


def load_result(folder: Path) -> tuple[str, Integration]:
    """The model's path and its last integration, from `folder`'s RESULT; ModelError for one that is not."""
    try:
        record = json.loads((folder / RESULT).read_text(encoding="utf-8"))
        return str(record["model"]), Integration.from_json(record["integration"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"{folder / RESULT}: not an integration result ({exc})") from exc


def _whole_model_checked(tests: list[CandidateTest],
                         timings: dict[str, tuple[Measurement, Measurement | None]]) -> list[CandidateTest]:
    """Each candidate's decisions after the whole model's check in every mode timed with kernels in it."""
    out = []
    for t in tests:
        decisions = t.decisions
        for kind, (before, after) in timings.items():
            if after is not None:
                decisions = whole_model_check(Mode(kind), before, after, decisions)
        out.append(replace(t, decisions=decisions))
    return out


def _test(candidate: Accepted, *, device: str | None, python: str | None, timeout_s: float, compile: bool,
          allow_torch_ops: bool, on_progress: Callable[[str, float | None], None] | None) -> CandidateTest:
    """The candidate tested and timed as `cudalens test --time [--compile-reference]` does it, then the swap
    decided per mode from the op's times (model/swap.py)."""
    payload = {"path": str(candidate.candidate.resolve()), "reference": str(candidate.problem.resolve()),
               "trials": 5, "seed": 42, "time": True, "compile_reference": compile, "device": device,
               "allow_torch_ops": allow_torch_ops}
    outcome = run_job("test", payload, timeout_s=timeout_s, python=python, on_progress=on_progress)
    outcome = verified(outcome, payload, timeout_s=timeout_s, python=python)
    test = outcome.payload.get("test") or {}
    passed = outcome.status == "ok" and test.get("status") == "passed"
    message = "passed" if passed else test.get("message") or last_line(outcome.error)
    timing = TimingResult.from_json(outcome.payload["timing"]) if passed and outcome.payload.get("timing") else None
    op = candidate.op
    modes = (Mode.EAGER, Mode.COMPILED) if compile else (Mode.EAGER,)
    decisions = tuple(
        decide(op, mode, timing and timing.candidate,
               timing and (timing.reference if mode is Mode.EAGER else timing.compiled_reference),
               None if passed else message)
        for mode in modes
    )
    return CandidateTest(candidate, passed, message, timing, decisions)


def render(result: Integration) -> str:
    """Each candidate's test, its op alone against what it replaces and the swap decided per mode; then the
    whole model before/after in each mode, and which kernels it ran."""
    lines = []
    for t in result.tests:
        lines.append(f"{t.candidate.candidate.name}: {'accepted' if t.passed else 'not used: ' + t.message}")
        if t.timing is not None:
            lines.append("  the op alone: " + op_alone(t.timing))
        for d in t.decisions if t.passed else ():
            lines.append(f"  {d.mode.baseline}: {d.reason}")
    if result.module is None:
        lines.append("no kernel to integrate")
        return "\n".join(lines)
    lines.append(f"integration module: {result.module}")
    for k in result.kernels:
        lines.append(f"  {k.name}: ran for {k.hits} call(s), {k.fallbacks} call(s) of other shapes fell back")
    if "compiled" in (result.timings or {}):
        lines.append(f"  torch.compile: {result.replaced} call(s) of the compiled graph replaced by a kernel")
    for label, checks in (("eager", result.checks), ("torch.compile", result.compiled_checks)):
        if checks:
            lines.append(f"whole-model outputs, {label}: {outputs(checks)}")
    lines += model_table(result)
    return "\n".join(lines)


def op_alone(timing: TimingResult) -> str:
    """The op's medians alone: the kernel, eager PyTorch and (when timed) torch.compile."""
    alone = [f"kernel {timing.candidate.median:.4g} ms", f"eager {timing.reference.median:.4g} ms"]
    if timing.compiled_reference is not None:
        alone.append(f"torch.compile {timing.compiled_reference.median:.4g} ms")
    return ", ".join(alone)


def outputs(checks: tuple[OutputCheck, ...]) -> str:
    bad = [c for c in checks if not c.passed]
    return "equal within tolerance" if not bad else "; ".join(c.message for c in bad)


WHOLE_MODEL_HEADER = ("whole model", "before", "after", "speedup", "swapped")


def model_rows(result: Integration) -> list[tuple[str, str, str, str, str]]:
    """The whole model before/after in each mode timed, with the ops swapped there: one row a mode."""
    rows = []
    for kind, (before, after) in (result.timings or {}).items():
        mode = Mode(kind)
        ops = [t.candidate.op for t in result.tests if mode.value in t.modes]
        if after is None:
            rows.append((mode.baseline, f"{before.median:.3f} ms", "(unchanged)", "1.00×", "none"))
            continue
        speedup = before.median / after.median if after.median > 0 else float("nan")
        if not ops:  # the kernels made it slower: the module keeps none of them in this mode
            rows.append((mode.baseline, f"{before.median:.3f} ms", "(unchanged)", "1.00×",
                         f"none: {after.median:.3f} ms with the kernels ({speedup:.2f}×), not kept"))
            continue
        rows.append((mode.baseline, f"{before.median:.3f} ms", f"{after.median:.3f} ms",
                     f"{speedup:.2f}×" + (" slower" if speedup < 1 else ""), ", ".join(ops)))
    return rows


def swap_cost(result: Integration) -> str | None:
    """What the swap's checks alone cost a forward in eager mode, when it was timed."""
    eager = (result.timings or {}).get("eager")
    if eager is None or eager[1] is None or result.mode_only is None:
        return None
    return (f"of which the swap alone, eager: {result.mode_only.median - eager[0].median:+.3f} ms "
            f"({result.mode_only.median:.3f} ms through its checks with no kernel run)")


def model_table(result: Integration) -> list[str]:
    """model_rows as aligned text, and the swap's own cost."""
    rows = [WHOLE_MODEL_HEADER, *model_rows(result)]
    if len(rows) == 1:
        return []
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]) - 1)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=False)) + "  " + r[-1] for r in rows]
    cost = swap_cost(result)
    return [*lines, f"  {cost}"] if cost else lines
