"""Verdicts without a GPU: predicted from the structural features and the static findings, labelled predicted."""

from __future__ import annotations

from cudalens.agents.judge.features import StructuralFeatures, structural_features
from cudalens.agents.judge.inputs import JudgeInput
from cudalens.agents.judge.methods import METHODS
from cudalens.agents.judge.verdict import Bottleneck, Evidence, Verdict


def features_of(inp: JudgeInput) -> StructuralFeatures:
    info = inp.kernel_info
    occupancy = inp.resources.theoretical_occupancy if inp.resources else None
    return structural_features(
        info.features if info else (), inp.findings, info.block if info else None, occupancy
    )


def _line(inp: JudgeInput, prefix: str) -> int | None:
    return next((f.span.line for f in inp.findings if f.code.startswith(prefix)), None)


def predicted_verdict(inp: JudgeInput) -> Verdict:
    f = features_of(inp)
    ridge = inp.gpu.ridge_point
    bottleneck: Bottleneck
    ev: list[Evidence] = []
    if f.coalescing < 0.9:
        bottleneck, method = "memory", "coalesce-global-access"
        ev.append(
            Evidence("coalescing", f.coalescing, "fraction of global accesses coalesced", _line(inp, "CL1"))
        )
    elif f.bank_conflicts > 0:
        bottleneck, method = "memory", "pad-shared-memory"
        ev.append(
            Evidence(
                "bank_conflicts", f.bank_conflicts, "shared accesses with bank conflicts", _line(inp, "CL301")
            )
        )
    elif f.host_transfers > 0:
        bottleneck, method = "latency", "avoid-host-synchronization"
        ev.append(Evidence("host_transfers", f.host_transfers, "host transfers/syncs", _line(inp, "CL6")))
    elif f.occupancy < 0.5:
        bottleneck = "occupancy"
        method = (
            "reduce-register-pressure"
            if inp.resources and inp.resources.occupancy_limiter == "registers"
            else "reduce-shared-memory"
            if inp.resources and inp.resources.occupancy_limiter == "shared"
            else "increase-parallelism"
        )
        ev.append(Evidence("occupancy", f.occupancy, "theoretical occupancy", _line(inp, "CL4")))
    elif f.divergence > 0:
        bottleneck, method = "compute", "remove-warp-divergence"
        ev.append(Evidence("divergence", f.divergence, "thread-dependent branches", _line(inp, "CL2")))
    elif f.atomics > 0:
        bottleneck, method = "latency", "use-warp-shuffles"
        ev.append(Evidence("atomics", f.atomics, "atomic operations", _line(inp, "CL7")))
    elif f.arithmetic_intensity >= ridge:
        bottleneck, method = "compute", "use-tensor-cores"
    else:
        bottleneck, method = "memory", "vectorize-memory-access"
    ev.append(
        Evidence(
            "arithmetic_intensity", f.arithmetic_intensity, f"estimated FLOP/byte vs ridge point {ridge:.1f}"
        )
    )
    if f.threads_per_block:
        ev.append(Evidence("threads_per_block", f.threads_per_block, "threads per block at the launch"))
    if f.global_accesses:
        ev.append(Evidence("global_accesses", f.global_accesses, "global loads/stores in the body"))
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
