"""Severity is a claim of proof. A kernel is analysed in one configuration at a time; what the configuration
does not fix (no launch was found, a dimension is set at run time, a template has no instantiation, a size is a
run-time value) the analysis assumes, and it knows what it assumed. This module is the one place that turns
that knowledge into a finding's severity, message and evidence; every finding a kernel's rules make goes
through `Premises.judge` (FileContext.finding calls it).

A rule declares the facts its conclusions can rest on (`Rule.depends_on`). A finding resting on an assumed fact
is `info` and names the assumption ("assuming a 256-thread block: no launch of `k` found") in its message and
in `evidence["assumed"]` — unless the rule shows that the conclusion held in every run of the model, and the
runs tried other values of that fact (other block shapes, other sizes): then it stands for every plausible
value, stays proven, and the message says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from cudalens.analysis.findings import Severity


class Fact(str, Enum):
    BLOCK = "block"  # the block shape
    TEMPLATE = "template"  # template arguments
    SIZES = "sizes"  # integer parameters (data sizes, counts)


ALL_FACTS = frozenset(Fact)
NO_FACTS: frozenset[Fact] = frozenset()

Dim3 = tuple[int, int, int]


def shape_text(block: Dim3) -> str:
    return "×".join(map(str, block))


def block_phrase(block: Dim3) -> str:
    """`a 256-thread block`, `a 32×8 block`."""
    dims = list(block)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return f"a {dims[0]}-thread block" if len(dims) == 1 else f"a {'×'.join(map(str, dims))} block"


@dataclass(frozen=True)
class Assumption:
    fact: Fact
    name: str  # "block", "block.y", a template parameter, an integer parameter
    value: int | str
    phrase: str  # "a 256-thread block", "T = 32"
    reason: str  # why it had to be assumed: "no launch of `k` found"
    # a size given the value an assumed block makes it (`heads` = 8 of `dim3(hidden_dim / heads, heads)`): small,
    # and tried only at the values the tried blocks give, so a figure computed from it is not the code's
    from_block: bool = False


@dataclass(frozen=True)
class Premises:
    """What one analysis of a kernel took as given without knowing it, and what its runs varied."""

    block: Dim3  # the block of the first run: the one a message's thread ids, lanes and counts are for
    assumptions: tuple[Assumption, ...]
    run_varies: tuple[frozenset[Fact], ...]  # per run of the model: the facts it gives values other than run 0's
    run_blocks: tuple[Dim3, ...]
    site_params: Callable[[object], set[str]] | None = None  # the integer parameters a site's values depend on
    # the sizes the run under a warp gave (model.small_size_config): a finding's `holds` may carry that run's
    # outcome after the runs', and one that held there alone rests on these
    small: tuple[Assumption, ...] = ()

    def judge(self, depends_on: frozenset[Fact], severity: Severity, message: str, evidence: dict,
              node: object, holds: Sequence[bool] | None, stated: Sequence[object] = ()
              ) -> tuple[Severity, str, dict]:
        """The severity, message and evidence a finding may carry, given what it rests on. `holds`: whether
        the rule's conclusion held in each run of the model (None: the rule cannot tell; it then rests on
        every assumption of the facts it depends on). `stated`: per run, the figures the message states as that
        run found them (an n-way, sectors, lanes): a conclusion that held in two runs with other figures holds
        with the figure of neither for every value allowed (`[tx * heads + ty]` is 8-way for heads = 8, 16-way
        for 16, conflict-free for odd heads), so it rests on what those runs varied, as one that did not hold."""
        evidence = dict(evidence)
        if Fact.BLOCK in depends_on:
            evidence.setdefault("block", shape_text(self.block))
        relevant = [a for a in self.assumptions if a.fact in depends_on]
        if not relevant:
            return severity, message, evidence
        tried = frozenset().union(*self.run_varies) if holds is not None else NO_FACTS
        run_varies = self.run_varies + ((frozenset({Fact.SIZES}),) if self.small else ())
        differing: frozenset[Fact] = frozenset().union(
            *(varies for i, (varies, ok) in enumerate(zip(run_varies, holds or (), strict=False))
              if ok != holds[0] or (ok and i < len(stated) and stated[i] != stated[0]))) \
            if holds else frozenset()
        dependent = [a for a in relevant if a.fact not in tried or a.fact in differing]
        dependent = self._sites_sizes(dependent, node)
        if any(stated) and self.site_params is not None:
            # a figure computed from a size an assumed block gives: the runs agreeing on it proves nothing of
            # the size's other values (`[tx * heads + ty]` is 8-way for heads = 8 and 16 alike, conflict-free
            # for odd heads); the sampled sizes are large, where such figures settle, and stay judged by the runs
            used = self.site_params(node)
            tied = [a for a in relevant if a.from_block and a.name in used and a not in dependent]
            if tied:  # (and on the block they follow, named first)
                dependent = [a for a in relevant if a.fact is Fact.BLOCK and a not in dependent] + dependent + tied
        if self.small and holds is not None and len(holds) > len(self.run_varies) and holds[-1] \
                and not any(holds[:-1]) and Fact.SIZES in depends_on:
            # seen only with the sizes under a warp, a run that kept the first run's block and template values:
            # it rests on those sizes (not on the large samples of the same names) and on every other assumption
            names = {a.name for a in self.small}
            dependent = [a for a in relevant if a.fact is not Fact.SIZES] + \
                [a for a in dependent if a.fact is Fact.SIZES and a.name not in names] + list(self.small)
        if dependent:
            if severity.rank > Severity.INFO.rank:
                severity = Severity.INFO
            evidence["assumed"] = tuple((a.name, a.value) for a in dependent)
            return severity, f"{message} ({describe(dependent)})", evidence
        blocks = [a for a in relevant if a.fact is Fact.BLOCK]
        if blocks:  # the conclusion held with every block shape tried
            shapes = " and ".join(dict.fromkeys(shape_text(b) for b in self.run_blocks))
            evidence["holds_for_blocks"] = shapes
            message = f"{message} ({blocks[0].reason}; it holds alike for blocks of {shapes})"
        return severity, message, evidence

    def _sites_sizes(self, dependent: list[Assumption], node: object) -> list[Assumption]:
        """Of the sampled sizes, only those the site's values depend on (all of them when it cannot tell)."""
        sizes = [a for a in dependent if a.fact is Fact.SIZES]
        if not sizes or self.site_params is None:
            return dependent
        used = self.site_params(node)
        named = [a for a in sizes if a.name in used] or sizes
        return [a for a in dependent if a.fact is not Fact.SIZES] + named


def describe(assumptions: Iterable[Assumption]) -> str:
    """`assuming a 256-thread block and n = 4096: no launch of `k` found; assuming T = 32: ...`."""
    by_reason: dict[str, list[str]] = {}
    for a in assumptions:
        by_reason.setdefault(a.reason, []).append(a.phrase)
    return "; ".join(f"assuming {' and '.join(phrases)}: {reason}" for reason, phrases in by_reason.items())
