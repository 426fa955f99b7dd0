"""Whether a kernel is swapped into a model, per op and per mode: only where it was measured to beat what it
replaces in that mode — eager PyTorch's op in eager mode, the op as torch.compile compiles it under
torch.compile. One plain function from measured times to a decision that keeps its reason."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from cudalens.worker.child.results import Measurement, TimingResult


class Mode(str, Enum):
    EAGER = "eager"
    COMPILED = "compiled"

    @property
    def baseline(self) -> str:
        return "eager" if self is Mode.EAGER else "torch.compile"


@dataclass(frozen=True)
class SwapDecision:
    op: str  # softmax
    mode: Mode
    swapped: bool
    speedup: float | None  # the op's baseline median over the kernel's (None: not measured)
    reason: str  # "0.57× vs eager softmax: not swapped (slower)"

    def to_json(self) -> dict:
        return {"op": self.op, "mode": self.mode.value, "swapped": self.swapped, "speedup": self.speedup,
                "reason": self.reason}

    @classmethod
    def from_json(cls, d: dict) -> SwapDecision:
        return cls(str(d["op"]), Mode(d["mode"]), bool(d["swapped"]), d.get("speedup"), str(d["reason"]))


def decide(op: str, mode: Mode, kernel: Measurement | None, baseline: Measurement | None,
           failed: str | None = None) -> SwapDecision:
    """Swap `op`'s kernel in `mode` only when it passed its test (`failed` is None) and its timing beats the
    baseline's beyond the spread of the two: the lower end of the speedup's interval (both medians within
    their 95 % intervals) above 1. Anything else keeps the op PyTorch runs, and the decision says why."""
    against = f"vs {mode.baseline} {op}"
    if failed is not None:
        return SwapDecision(op, mode, False, None, f"failed its test ({failed}): not swapped")
    if kernel is None or baseline is None or not kernel.samples_ms or not baseline.samples_ms:
        return SwapDecision(op, mode, False, None, f"not timed {against}: not swapped")
    versus = TimingResult(kernel, baseline)
    speedup, (low, _) = versus.speedup, versus.speedup_interval
    if not speedup > 1:
        return SwapDecision(op, mode, False, speedup, f"{speedup:.2f}× {against}: not swapped (slower)")
    if not low > 1:
        return SwapDecision(op, mode, False, speedup,
                            f"{speedup:.2f}× {against}: not swapped (within the timing's spread, {low:.2f}× at worst)")
    return SwapDecision(op, mode, True, speedup, f"{speedup:.2f}× {against}: swapped")


def whole_model_check(mode: Mode, before: Measurement, after: Measurement,
                      decisions: tuple[SwapDecision, ...]) -> tuple[SwapDecision, ...]:
    """The op-alone decisions of `mode`, turned down when the whole model ran slower with the kernels swapped
    in: under torch.compile the op alone does not show what Inductor fuses it with (ResNet-50's batch norms go
    into the convolutions' epilogues). The model is never left slower than it came."""
    whole = TimingResult(after, before)
    if not whole.speedup < 1:
        return decisions
    return tuple(
        SwapDecision(d.op, d.mode, False, d.speedup,
                     f"{d.reason.removesuffix(': swapped')}, but the whole model ran {whole.speedup:.2f}× with the "
                     "kernels: not swapped")
        if d.mode is mode and d.swapped else d
        for d in decisions
    )
