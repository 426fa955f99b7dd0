"""The Judge: one verdict per kernel, deterministic and offline."""

from __future__ import annotations

from dataclasses import replace

from cudalens.agents.evaluation import known_speedup
from cudalens.agents.judge.failing import failing_verdict
from cudalens.agents.judge.inputs import JudgeInput, judge_input
from cudalens.agents.judge.measured import measured_verdict
from cudalens.agents.judge.predicted import predicted_verdict
from cudalens.agents.judge.verdict import Evidence, Verdict


def judge(inp: JudgeInput) -> Verdict:
    """Failing → the critical issue; profiled → the measured bottleneck; otherwise → a predicted verdict."""
    failing = failing_verdict(inp)
    if failing is not None:
        return failing
    if inp.metrics is not None and inp.metrics.metrics:
        return measured_verdict(inp)
    verdict = predicted_verdict(inp)
    if (speedup := known_speedup(inp.timing)) is not None:
        verdict = replace(verdict, speedup=speedup)
    return verdict


__all__ = ["Evidence", "JudgeInput", "Verdict", "judge", "judge_input"]
