"""What evaluating one candidate kernel yields, and the one protocol the loop evaluates candidates through.

Plain frozen dataclasses over the profiler's own result types (ptxas's `KernelResources`, the `Occupancy` at a
launch, timing `Measurement`s: one definition each, in profiler/), so the Judge and the loop depend on a small
typed surface and any evaluator (the profiler's worker in `profiler_evaluator`, a stand-in in a test) can stand
behind it.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Literal, Protocol

from cudalens.profiler.occupancy import Occupancy
from cudalens.profiler.ptxas import KernelResources
from cudalens.worker.child.results import CheatFinding, TimingResult

# "test": build and the correctness test; "time": and the timing; "full": and the ncu profile; "profile": build,
# test and profile without timing (a beam or tree search profiles a candidate it timed earlier when it expands it)
EvaluationKind = Literal["full", "test", "time", "profile"]
CorrectnessStatus = Literal["passed", "failed", "crashed", "timeout", "not_run"]


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class CompiledKernel:
    """One kernel of the candidate as ptxas built it, with the theoretical occupancy at the launch the source
    gives (None: no launch shape known). Occupancy belongs to a launch, not to the build, so it sits beside
    ptxas's report rather than in it."""

    resources: KernelResources
    occupancy: Occupancy | None = None


@dataclass(frozen=True)
class CompileOutcome:
    ok: bool
    log: str = ""  # compiler errors/warnings, as the compiler printed them
    kernels: tuple[CompiledKernel, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class CorrectnessOutcome:
    status: CorrectnessStatus
    trials: int = 0
    passed_trials: int = 0
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    message: str = ""  # the first thing that went wrong, one line
    traceback: str = ""  # the candidate's traceback (a string: no exception objects cross the worker)
    warnings: tuple[str, ...] = ()  # degenerate reference, aliasing, constant output...
    # what the test's run-time checks found (timed outputs, device time, the physical bound, inputs): the loop
    # records them with the round and the Judge names them
    cheats: tuple[CheatFinding, ...] = ()

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def known_speedup(timing: TimingResult | None) -> float | None:
    """The timing's speedup over the reference, None where there is none to speak of (no timing, a zero or
    undefined median: the profiler's `TimingResult.speedup` is NaN there)."""
    if timing is None:
        return None
    speedup = timing.speedup
    return speedup if math.isfinite(speedup) and speedup > 0 else None


@dataclass(frozen=True)
class LineCounter:
    """A source-level ncu counter mapped to a line of the candidate file."""

    line: int
    metric: str
    value: float


@dataclass(frozen=True)
class ProfileMetrics:
    """ncu metrics for one kernel launch, by ncu's metric names."""

    kernel: str
    metrics: tuple[tuple[str, float], ...] = ()
    lines: tuple[LineCounter, ...] = ()
    launches: int = 1  # launches of this kernel in the profiled call (the metrics are the first one's)

    def get(self, name: str, default: float | None = None) -> float | None:
        for key, value in self.metrics:
            if key == name:
                return value
        return default

    @classmethod
    def of(
        cls, kernel: str, metrics: dict[str, float], lines: tuple[LineCounter, ...] = (), launches: int = 1
    ) -> ProfileMetrics:
        return cls(kernel, tuple(sorted(metrics.items())), lines, launches)


@dataclass(frozen=True)
class Evaluation:
    """Everything known about one candidate after the evaluator ran it."""

    source_hash: str
    compile: CompileOutcome
    correctness: CorrectnessOutcome
    timing: TimingResult | None = None  # the worker's own; the device is `device` below
    profiles: tuple[ProfileMetrics, ...] = ()
    device: str = "cpu"
    seconds: float = 0.0  # wall time of the whole evaluation (the loop's overhead outside the LLM)
    notes: tuple[str, ...] = field(default=())
    builds: tuple[str, ...] = ()  # how each extension was built: "fast NAME (…)", "declined NAME: why", …
    stages: tuple[tuple[str, float], ...] = ()  # (stage, seconds): where the evaluation's time went

    @property
    def correct(self) -> bool:
        return self.compile.ok and self.correctness.passed

    @property
    def speedup(self) -> float | None:
        return known_speedup(self.timing) if self.correct else None


class CandidateEvaluator(Protocol):
    """Compiles, tests, times and (where it can) profiles one candidate source against its reference."""

    def evaluate(self, source: str, kind: EvaluationKind = "full") -> Evaluation: ...
