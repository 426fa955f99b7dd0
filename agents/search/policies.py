"""What to expand next. A policy looks at the tree and answers with up to `slots` expansions; the loop asks the
Coder for each, evaluates the replies and asks again as slots free up, under one budget.

- chain: CudaForge's loop, one candidate at a time from the last one (repair it if it failed, else optimize it
  with the Judge's method). The baseline.
- beam: the best `width` correct candidates, each expanded once per method — the Judge's first, then the others
  that fit the same bottleneck; while nothing is correct, the latest failing candidates are repaired.
- tree: UCT over the whole tree: a node's value is the mean over its subtree of speedup ÷ best speedup (0 for a
  failure), plus an exploration term that shrinks with the requests already made of it; requests in flight count
  as visits with no reward (virtual loss), so `width` concurrent picks spread out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, Protocol

from cudalens.agents.judge.methods import METHODS
from cudalens.agents.judge.verdict import Verdict
from cudalens.agents.search.tree import Expansion, RoundKind, RoundRecord, SearchTree
from cudalens.worker.child.anti_cheat import rejected

SearchPolicyName = Literal["chain", "beam", "tree"]
POLICIES: tuple[SearchPolicyName, ...] = ("chain", "beam", "tree")

# the methods worth trying for each bottleneck, most often useful first (the Judge names one: it goes first)
_BY_BOTTLENECK: dict[str, tuple[str, ...]] = {
    "memory": ("vectorize-memory-access", "coalesce-global-access", "tile-in-shared-memory",
               "hide-memory-latency", "pad-shared-memory"),
    "compute": ("reduce-instruction-count", "use-tensor-cores", "remove-warp-divergence", "use-warp-shuffles"),
    "latency": ("hide-memory-latency", "increase-parallelism", "use-warp-shuffles", "avoid-host-synchronization"),
    "occupancy": ("reduce-register-pressure", "reduce-shared-memory", "increase-parallelism"),
}
REPAIRS_PER_NODE = 2  # a failing candidate is repaired at most this often before the search looks elsewhere


def methods_for(verdict: Verdict | None) -> list[str]:
    """The Judge's method, then the others for its bottleneck, then the rest: each tried once from a node."""
    first = [verdict.method] if verdict is not None and verdict.method in METHODS else []
    fitting = list(_BY_BOTTLENECK.get(verdict.bottleneck or "", ())) if verdict is not None else []
    return list(dict.fromkeys([*first, *fitting, *METHODS]))


def is_correct(rec: RoundRecord) -> bool:
    return rec.evaluation is not None and rec.evaluation.correct and not rejected(list(rec.cheats))


def kind_for(rec: RoundRecord) -> RoundKind:
    if rec.source is None:
        return "first"
    return "optimize" if is_correct(rec) else "repair"


def next_expansion(tree: SearchTree, rec: RoundRecord, chosen: Sequence[Expansion]) -> Expansion | None:
    """The next request to make of `rec`: a method not yet asked of it, or a repair while repairs are left."""
    asked = tree.expansions(rec.index) + [e for e in chosen if e.parent == rec.index]
    kind = kind_for(rec)
    if kind != "optimize":
        return Expansion(rec.index, kind) if len(asked) < REPAIRS_PER_NODE else None
    tried = {e.method for e in asked}
    method = next((m for m in methods_for(rec.verdict) if m not in tried), None)
    return Expansion(rec.index, "optimize", method) if method else None


class SearchPolicy(Protocol):
    name: SearchPolicyName
    width: int  # how many expansions may be in flight at once

    def select(self, tree: SearchTree, slots: int) -> list[Expansion]: ...


class Chain:
    name: SearchPolicyName = "chain"
    width = 1

    def select(self, tree: SearchTree, slots: int) -> list[Expansion]:
        if tree.pending or slots < 1:
            return []
        last = next((tree.nodes[i] for i in reversed(tree.done) if tree.nodes[i].source is not None), None)
        last = last or tree.nodes[0]
        return [Expansion(last.index, kind_for(last))]


class Beam:
    name: SearchPolicyName = "beam"

    def __init__(self, width: int) -> None:
        self.width = max(1, width)

    def select(self, tree: SearchTree, slots: int) -> list[Expansion]:
        beam = sorted(tree.correct(), key=lambda r: -(r.speedup or 0.0))[: self.width]
        if not beam:  # nothing correct yet: repair the latest failures (or write the first file)
            beam = sorted(tree.candidates(), key=lambda r: -r.index)[: self.width]
        chosen: list[Expansion] = []
        for _ in range(slots):
            # the member asked least so far, the faster first among equals
            options = sorted(
                beam, key=lambda r: (len(tree.expansions(r.index)) + sum(e.parent == r.index for e in chosen),
                                     -(r.speedup or 0.0)),
            )
            pick = next((e for r in options if (e := next_expansion(tree, r, chosen)) is not None), None)
            if pick is None:
                break
            chosen.append(pick)
        return chosen


class Tree:
    name: SearchPolicyName = "tree"

    def __init__(self, width: int, exploration: float = math.sqrt(2)) -> None:
        self.width = max(1, width)
        self.c = exploration

    def select(self, tree: SearchTree, slots: int) -> list[Expansion]:
        best = tree.best_speedup() or 1.0
        chosen: list[Expansion] = []
        for _ in range(slots):
            total = len(tree.nodes) + len(tree.pending) + len(chosen)
            scored = []
            for rec in tree.candidates():
                expansion = next_expansion(tree, rec, chosen)
                if expansion is None:
                    continue
                sub = list(tree.subtree(rec.index))
                reward = sum((r.speedup or 0.0) / best for r in sub if is_correct(r))
                now = sum(e.parent == rec.index for e in chosen)
                asked = len(tree.expansions(rec.index)) + now
                # requests in flight or chosen now count as visits without reward (virtual loss)
                visits = len(sub) + now + sum(e.parent == rec.index for e in tree.pending.values())
                score = reward / visits + self.c * math.sqrt(math.log(total + 1) / (1 + asked))
                scored.append((score, rec.index, expansion))
            if not scored:
                break
            chosen.append(max(scored, key=lambda s: (s[0], s[1]))[2])
        return chosen


def policy_for(name: SearchPolicyName, width: int) -> SearchPolicy:
    if name == "beam":
        return Beam(width)
    if name == "tree":
        return Tree(width)
    return Chain()
