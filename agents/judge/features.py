"""The structural feature vector of a kernel (CUDAPerf's predictive features), from static analysis alone."""

from __future__ import annotations

from dataclasses import dataclass, fields

from cudalens.analysis.findings import Finding

FEATURE_NAMES = (
    "coalescing",  # fraction of global accesses proven coalesced (1.0 = all)
    "arithmetic_intensity",  # estimated FLOP per global byte
    "occupancy",  # theoretical occupancy 0..1
    "divergence",  # count of thread-dependent branches
    "host_transfers",  # host<->device copies / syncs near the launch
    "atomics",
    "barriers",
    "kernel_count",
    "threads_per_block",
    "global_accesses",
    "operations",  # arithmetic operations in the body
    "bank_conflicts",  # shared accesses with a proven conflict
)


@dataclass(frozen=True)
class StructuralFeatures:
    coalescing: float = 1.0
    arithmetic_intensity: float = 0.0
    occupancy: float = 1.0
    divergence: float = 0.0
    host_transfers: float = 0.0
    atomics: float = 0.0
    barriers: float = 0.0
    kernel_count: float = 1.0
    threads_per_block: float = 0.0
    global_accesses: float = 0.0
    operations: float = 0.0
    bank_conflicts: float = 0.0

    def vector(self) -> tuple[float, ...]:
        return tuple(float(getattr(self, f.name)) for f in fields(self))


def structural_features(
    analyzer_features: tuple[tuple[str, float], ...] | dict[str, float] = (),
    findings: list[Finding] | tuple[Finding, ...] = (),
    block: tuple[int, int, int] | None = None,
    theoretical_occupancy: float | None = None,
) -> StructuralFeatures:
    """The analyzer's features where it computed them; otherwise what its findings imply."""
    given = dict(analyzer_features)
    counts: dict[str, int] = {}
    for f in findings:
        for prefix in ("CL1", "CL2", "CL301", "CL302", "CL303", "CL4", "CL6", "CL7", "CL803", "CL804"):
            if f.code.startswith(prefix):
                counts[prefix] = counts.get(prefix, 0) + 1
    implied: dict[str, float] = {}
    accesses = given.get("global_accesses", 0.0)
    if counts.get("CL1"):
        implied["coalescing"] = max(0.0, 1.0 - counts["CL1"] / max(accesses, counts["CL1"] * 2, 1.0))
    if counts.get("CL2"):
        implied["divergence"] = float(counts["CL2"])
    if counts.get("CL301"):
        implied["bank_conflicts"] = float(counts["CL301"])
    if counts.get("CL6"):
        implied["host_transfers"] = float(counts["CL6"])
    if counts.get("CL7"):
        implied["atomics"] = float(counts["CL7"])
    if theoretical_occupancy is not None:
        implied["occupancy"] = theoretical_occupancy
    elif counts.get("CL804") or counts.get("CL4"):
        implied["occupancy"] = 0.5
    if block is not None:
        implied["threads_per_block"] = float(block[0] * block[1] * block[2])
    values = {**implied, **{k: float(v) for k, v in given.items() if k in FEATURE_NAMES}}
    return StructuralFeatures(**values)
