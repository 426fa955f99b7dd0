"""Verdicts without a GPU: predicted from the analyzer's `KernelFeatures`, ptxas's resources and the static
findings, labelled predicted."""

from __future__ import annotations

from dataclasses import dataclass

from cudalens.agents.judge.inputs import JudgeInput
from cudalens.agents.judge.methods import METHODS
from cudalens.agents.judge.verdict import Bottleneck, Evidence, Verdict
from cudalens.analysis.features import DIVERGENT_CODES, UNCOALESCED_CODES

LOW_OCCUPANCY = 0.5  # theoretical, 0..1: below it, occupancy is the predicted limiter
COALESCED_ENOUGH = 0.9


@dataclass(frozen=True)
class Signals:
    """What a predicted verdict weighs: the analyzer's features where it has them, else its findings' counts."""

    uncoalesced_sites: int
    coalesced_fraction: float | None  # None: the global access sites were not counted
    bank_conflicts: int
    host_syncs: int
    occupancy: float | None
    occupancy_limiter: str | None  # as `Occupancy.limiter` names it: registers, shared_memory, barriers, ...
    divergent_branches: int
    single_address_atomics: int
    arithmetic_intensity: float
    threads_per_block: int | None
    global_accesses: int
    grid_blocks: int | None  # the launch's blocks when a site gives a constant grid


def signals(inp: JudgeInput) -> Signals:
    codes = [f.code for f in inp.findings]
    features = inp.kernel_info.features if inp.kernel_info else None
    uncoalesced = sum(c in UNCOALESCED_CODES for c in codes)
    sites = [s for s in (inp.kernel_info.launch_sites if inp.kernel_info else ()) if s.grid]
    grid = min((s.grid[0] * s.grid[1] * s.grid[2] for s in sites), default=None) if sites else None
    occupancy = inp.built.occupancy if inp.built else None
    common = {
        "host_syncs": sum(c.startswith("CL6") for c in codes),
        "occupancy": occupancy.fraction if occupancy else None,
        "occupancy_limiter": occupancy.limiter if occupancy else None,
        "grid_blocks": grid,
    }
    if features is None:
        return Signals(
            uncoalesced_sites=uncoalesced,
            coalesced_fraction=None,
            bank_conflicts=codes.count("CL301"),
            divergent_branches=sum(c in DIVERGENT_CODES for c in codes),
            single_address_atomics=codes.count("CL701"),
            arithmetic_intensity=0.0,
            threads_per_block=None,
            global_accesses=0,
            **common,
        )
    return Signals(
        uncoalesced_sites=features.uncoalesced_sites,
        coalesced_fraction=features.coalesced_fraction,
        bank_conflicts=features.bank_conflict_sites,
        divergent_branches=features.divergent_branches,
        single_address_atomics=features.single_address_atomic_sites,
        arithmetic_intensity=features.arithmetic_intensity,
        threads_per_block=features.threads_per_block,
        global_accesses=features.global_access_sites,
        **common,
    )


def _line(inp: JudgeInput, prefix: str | tuple[str, ...]) -> int | None:
    return next((f.span.line for f in inp.findings if f.code.startswith(prefix)), None)


def predicted_verdict(inp: JudgeInput) -> Verdict:
    s = signals(inp)
    ridge = inp.gpu.ridge_point
    bottleneck: Bottleneck
    ev: list[Evidence] = []
    if s.uncoalesced_sites and (s.coalesced_fraction is None or s.coalesced_fraction < COALESCED_ENOUGH):
        bottleneck, method = "memory", "coalesce-global-access"
        ev.append(Evidence("uncoalesced_sites", s.uncoalesced_sites, "global access sites proven uncoalesced",
                           _line(inp, UNCOALESCED_CODES)))
        if s.coalesced_fraction is not None:
            ev.append(Evidence("coalesced_fraction", s.coalesced_fraction, "share of global access sites coalesced"))
    elif s.bank_conflicts > 0:
        bottleneck, method = "memory", "pad-shared-memory"
        ev.append(Evidence("bank_conflict_sites", s.bank_conflicts, "shared accesses with bank conflicts",
                           _line(inp, "CL301")))
    elif s.host_syncs > 0:
        bottleneck, method = "latency", "avoid-host-synchronization"
        ev.append(Evidence("host_syncs", s.host_syncs, "host transfers/syncs near the launch", _line(inp, "CL6")))
    elif s.occupancy is not None and s.occupancy < LOW_OCCUPANCY:
        bottleneck = "occupancy"
        method = {"registers": "reduce-register-pressure", "shared_memory": "reduce-shared-memory"}.get(
            s.occupancy_limiter or "", "increase-parallelism")
        limiter = (s.occupancy_limiter or "unknown").replace("_", " ")
        ev.append(Evidence("theoretical_occupancy", s.occupancy, f"theoretical occupancy, limited by {limiter}",
                           _line(inp, "CL4")))
    elif s.grid_blocks is not None and s.grid_blocks < inp.gpu.sm_count:
        bottleneck, method = "latency", "increase-parallelism"
        ev.append(Evidence("grid_blocks", s.grid_blocks, f"blocks launched, fewer than the {inp.gpu.sm_count} SMs"))
    elif s.divergent_branches > 0:
        bottleneck, method = "compute", "remove-warp-divergence"
        ev.append(Evidence("divergent_branches", s.divergent_branches, "thread-dependent branches",
                           _line(inp, DIVERGENT_CODES)))
    elif s.single_address_atomics > 0:
        bottleneck, method = "latency", "use-warp-shuffles"
        ev.append(Evidence("single_address_atomic_sites", s.single_address_atomics,
                           "atomics every thread aims at one address", _line(inp, "CL701")))
    elif s.arithmetic_intensity >= ridge:
        bottleneck, method = "compute", "use-tensor-cores"
    else:
        bottleneck, method = "memory", "vectorize-memory-access"
    ev.append(Evidence("arithmetic_intensity", s.arithmetic_intensity,
                       f"estimated FLOP/byte vs ridge point {ridge:.1f}"))
    if s.threads_per_block:
        ev.append(Evidence("threads_per_block", s.threads_per_block, "threads per block at the launch"))
    if s.global_accesses:
        ev.append(Evidence("global_access_sites", s.global_accesses, "global loads/stores in the body"))
    m = METHODS[method]
    return Verdict(
        inp.kernel,
        "predicted",
        f"Predicted {bottleneck}-bound → {m.title.lower()}",
        bottleneck=bottleneck,
        method=method,
        method_title=m.title,
        plan=m.plan,
        evidence=tuple(ev[:4]),
    )
