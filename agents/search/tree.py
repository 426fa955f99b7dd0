"""The tree of candidates one optimize run grew: each node a `RoundRecord` (source, evaluation, Judge verdict,
speedup, tokens) under the node it improves. Duplicates (the same normalised source) point at the node that was
evaluated; `render_tree` is what `cudalens optimize` prints at the end and the run log's summary shows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from cudalens.agents.coder.usage import Usage
from cudalens.agents.evaluation import Evaluation
from cudalens.agents.judge import Verdict
from cudalens.worker.child.anti_cheat import CheatFinding, rejected

RoundKind = Literal["initial", "first", "repair", "optimize"]


@dataclass(frozen=True)
class RoundRecord:
    """One node of the tree (a round, in the chain): numbered in the order it was asked for."""

    index: int
    kind: RoundKind
    source: str | None
    evaluation: Evaluation | None
    verdict: Verdict | None
    cheats: tuple[CheatFinding, ...] = ()
    usage: Usage = field(default_factory=Usage)
    error: str = ""  # the Coder failed or its reply had no code
    seconds_eval: float = 0.0
    seconds_llm: float = 0.0
    parent: int | None = None  # None: the root (round 0)
    method: str | None = None  # the Judge method the Coder was asked to follow, when the search chose one
    duplicate_of: int | None = None  # the node with the same normalised source, whose evaluation this reuses
    device: str = ""  # the device whose lease it was evaluated under (a GPU of CUDA_VISIBLE_DEVICES, cpuN)

    @property
    def speedup(self) -> float | None:
        return self.evaluation.speedup if self.evaluation and not rejected(list(self.cheats)) else None


@dataclass(frozen=True)
class Expansion:
    """One request for a child: improve (or repair) node `parent`, following `method` when given."""

    parent: int
    kind: RoundKind
    method: str | None = None  # a key of judge.methods.METHODS; None: the parent's verdict as it is


def normalised_key(source: str) -> str:
    """Sources that differ only in trailing spaces, blank lines or whole-line comments are one candidate."""
    lines = (line.rstrip() for line in source.splitlines())
    kept = (line for line in lines if line.strip() and not line.lstrip().startswith(("#", "//")))
    return hashlib.sha256("\n".join(kept).encode("utf-8")).hexdigest()


def status_of(rec: RoundRecord) -> str:
    if rec.source is None:
        return "no code"
    if rejected(list(rec.cheats)):
        return "rejected"
    if rec.evaluation is None:
        return "-"
    return "correct" if rec.evaluation.correct else rec.evaluation.correctness.status


class SearchTree:
    """The nodes so far and the expansions in flight. Touched by the loop's own thread only."""

    def __init__(self) -> None:
        self.nodes: dict[int, RoundRecord] = {}
        self.done: list[int] = []  # node ids in the order they completed
        self.pending: dict[int, Expansion] = {}  # child id → what it was asked for

    def add(self, rec: RoundRecord) -> None:
        self.nodes[rec.index] = rec
        self.done.append(rec.index)
        self.pending.pop(rec.index, None)

    def expansions(self, node: int) -> list[Expansion]:
        """What was asked of `node` so far: its children and the requests in flight."""
        asked = [
            Expansion(r.parent, r.kind, r.method) for r in self.nodes.values() if r.parent == node
        ]
        return asked + [e for e in self.pending.values() if e.parent == node]

    def candidates(self) -> list[RoundRecord]:
        """Nodes that can be expanded: the root and every other node with a source that is not a duplicate."""
        return [
            r for r in self.nodes.values()
            if r.duplicate_of is None and (r.index == 0 or r.source is not None)
        ]

    def correct(self) -> list[RoundRecord]:
        return [r for r in self.candidates() if r.speedup is not None]

    def best_speedup(self) -> float | None:
        return max((r.speedup for r in self.correct()), default=None)

    def subtree(self, node: int) -> Iterable[RoundRecord]:
        stack = [node]
        while stack:
            n = stack.pop()
            if n in self.nodes:
                yield self.nodes[n]
            stack += [r.index for r in self.nodes.values() if r.parent == n]


def render_tree(rounds: list[RoundRecord], best: int | None = None) -> str:
    """parent → child, each with its status and speedup, `★` on the best; one line a node."""
    kids: dict[int | None, list[RoundRecord]] = {}
    for r in rounds:
        kids.setdefault(r.parent, []).append(r)

    def label(r: RoundRecord) -> str:
        what = r.kind + (f" [{r.method}]" if r.method else "")
        status = f"duplicate of #{r.duplicate_of}" if r.duplicate_of is not None else status_of(r)
        speed = f" {r.speedup:.2f}×" if r.speedup is not None else ""
        error = f" ({r.error[:80]})" if r.error and r.source is None and r.index else ""
        return f"#{r.index} {what}: {status}{speed}{error}{' ★' if r.index == best else ''}"

    lines: list[str] = []

    def walk(r: RoundRecord, prefix: str, last: bool, top: bool) -> None:
        lines.append(label(r) if top else f"{prefix}{'└─ ' if last else '├─ '}{label(r)}")
        below = kids.get(r.index, [])
        inner = "" if top else prefix + ("   " if last else "│  ")
        for i, child in enumerate(below):
            walk(child, inner, i == len(below) - 1, False)

    for root in kids.get(None, []):
        walk(root, "", True, True)
    return "\n".join(lines)
