"""When the optimize loop stops and what it accepts: the one schema behind the editor's `optimize.*` settings and
`cudalens optimize`'s flags (the loop's own knobs stay in `LoopSettings`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudalens.worker.child.typed_json import setting

if TYPE_CHECKING:
    from cudalens.agents.optimize_loop import LoopSettings


@dataclass(frozen=True)
class OptimizeSettings:
    rounds: int = setting(10, range=(1, 1000), doc="Coder–Judge rounds of *Optimize kernel*.")
    budget_usd: float = setting(
        1.0, range=(0, 10_000),
        doc="Stop once the Coder has cost this many US dollars (0: no limit; the cost needs `coder.priceInPer1k` "
            "and `coder.priceOutPer1k`).",
    )
    patience: int = setting(4, range=(1, 1000), doc="Stop after this many rounds without a faster correct candidate.")
    allow_torch_ops: bool = setting(
        False, doc="Accept candidates whose `ModelNew` uses PyTorch operations instead of a CUDA kernel.",
    )

    def loop(self, *, repair_only: bool = False, budget_tokens: int | None = None) -> LoopSettings:
        """The loop's settings for a run ("Fix with Coder": `repair_only`)."""
        # imported here: the server reads these settings at start, and the loop brings the OpenAI client (≈ 0.9 s)
        from cudalens.agents.optimize_loop import LoopSettings
        from cudalens.worker.child.anti_cheat import AntiCheatPolicy

        policy = AntiCheatPolicy(require_custom_kernel=not self.allow_torch_ops, allow_torch_compute=self.allow_torch_ops)
        return LoopSettings(
            rounds=self.rounds, budget_usd=self.budget_usd or None, budget_tokens=budget_tokens,
            patience=self.patience, repair_only=repair_only, anti_cheat=policy,
        )
