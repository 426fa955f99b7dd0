"""The Judge's answer for one kernel: the critical issue of a failing kernel, or the bottleneck of a correct one
with exactly one optimization method, a short plan, and the metrics and lines that justify it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Bottleneck = Literal["memory", "compute", "latency", "occupancy", "unknown"]
VerdictStatus = Literal["failing", "measured", "predicted"]


@dataclass(frozen=True)
class Evidence:
    """One number behind a verdict, what it means, and the source line it points to (if any)."""

    metric: str
    value: float | str
    meaning: str
    line: int | None = None

    def shown(self) -> str:
        value = f"{self.value:.3g}" if isinstance(self.value, float) else str(self.value)
        return f"{self.metric} = {value}"


@dataclass(frozen=True)
class Verdict:
    kernel: str | None
    status: VerdictStatus
    summary: str  # one line: what the hover title and the diagnostic say
    # failing kernels (CudaForge's correction shape)
    critical_issue: str = ""
    why_it_matters: str = ""
    fix_hint: str = ""
    # correct kernels (and predicted verdicts)
    bottleneck: Bottleneck | None = None
    method: str | None = None  # a key of judge.methods.METHODS
    method_title: str = ""
    plan: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = field(default=())
    speedup: float | None = None
    roofline: str = ""  # measured verdicts: the kernel's point against its roofs, one line
    # measured verdicts: a second method that a counter within 10 % of its value would have chosen (both fit;
    # the evidence names the counter), None when the choice is clear
    runner_up: str | None = None

    @property
    def lines(self) -> tuple[int, ...]:
        return tuple(sorted({e.line for e in self.evidence if e.line is not None}))

    @property
    def predicted(self) -> bool:
        return self.status == "predicted"

    def judge_json(self) -> dict:
        """CudaForge's Judge reply (bottleneck, optimisation method, modification plan), with the evidence: what
        the Coder's optimize prompt carries."""
        bottleneck = f"{self.bottleneck}-bound: {self.summary}" if self.bottleneck else self.summary
        if self.roofline:
            bottleneck += f" ({self.roofline})"
        return {
            "bottleneck": bottleneck,
            "optimisation method": self.method_title or self.fix_hint,
            "modification plan": " ".join(f"{i}. {step}" for i, step in enumerate(self.plan, 1)),
            "evidence": [f"{e.shown()}: {e.meaning}" + (f" (line {e.line})" if e.line else "") for e in self.evidence],
        }

    def to_json(self) -> dict:
        data = asdict(self)
        data["lines"] = list(self.lines)
        return data

    @classmethod
    def from_json(cls, data: dict) -> Verdict:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["evidence"] = tuple(Evidence(**e) for e in known.get("evidence", ()))
        known["plan"] = tuple(known.get("plan", ()))
        return cls(**known)
