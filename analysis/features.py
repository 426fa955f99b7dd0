"""`KernelFeatures`: the structural facts about one kernel that the analyzer proves from its model and findings.

One typed value crosses from analysis to the Judge (a predicted verdict when no GPU ran) and the hover; the
fields are CUDAPerf's features predictive of speed (coalescing, arithmetic intensity, occupancy inputs,
divergence, atomics, barriers, threads per block, global accesses, operations). A field the analyzer cannot
know is absent from here rather than guessed: occupancy comes from ptxas, host transfers from the file's
host-side findings.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from cudalens.analysis.findings import Finding

if TYPE_CHECKING:
    from cudalens.analysis.model import KernelModel

UNCOALESCED_CODES = ("CL101", "CL102", "CL103")
DIVERGENT_CODES = ("CL201", "CL202")


@dataclass(frozen=True)
class KernelFeatures:
    threads_per_block: int  # of the launch analysed (an assumed block when `block_shape_known` is False)
    block_shape_known: bool
    global_access_sites: int  # distinct global loads/stores in the body
    uncoalesced_sites: int  # of those, proven uncoalesced (CL101-CL103)
    gather_sites: int  # data-dependent global accesses (CL104)
    shared_access_sites: int
    bank_conflict_sites: int  # shared accesses with a proven conflict (CL301)
    max_bank_conflict_ways: int  # the worst conflict degree (1 = none)
    divergent_branches: int  # thread-dependent branches and loop trip counts (CL201, CL202)
    barriers: int
    atomic_sites: int
    single_address_atomic_sites: int  # atomics every thread aims at one address (CL701)
    float_ops_per_thread: float
    global_bytes_per_thread: float
    static_shared_bytes: int
    # global loads of 2-byte floats (half, bf16): operands the tensor cores take as they are
    half_float_loads: int = 0
    warp_shuffle_sites: int = 0  # __shfl*_sync / __reduce_*_sync calls: the warp already exchanges in registers

    @property
    def coalesced_fraction(self) -> float:
        """Share of global access sites not proven uncoalesced (1.0 when there are none)."""
        if not self.global_access_sites:
            return 1.0
        return max(0.0, 1.0 - self.uncoalesced_sites / self.global_access_sites)

    @property
    def arithmetic_intensity(self) -> float:
        """Estimated FLOP per global byte (0 when the kernel touches no global memory)."""
        return self.float_ops_per_thread / self.global_bytes_per_thread if self.global_bytes_per_thread else 0.0

    def items(self) -> tuple[tuple[str, float], ...]:
        """(name, value) pairs, with the derived ones, for JSON and tables."""
        own = tuple((f.name, float(getattr(self, f.name))) for f in fields(self))
        return (*own, ("coalesced_fraction", self.coalesced_fraction),
                ("arithmetic_intensity", self.arithmetic_intensity))

    def summary(self) -> str:
        """One line for the hover."""
        block = f"{self.threads_per_block} threads/block" + ("" if self.block_shape_known else " (assumed)")
        parts = [
            block,
            f"{self.global_access_sites} global accesses ({self.coalesced_fraction:.0%} coalesced)",
            f"≈{self.arithmetic_intensity:.2g} FLOP/byte",
        ]
        if self.shared_access_sites:
            parts.append(f"{self.shared_access_sites} shared accesses ({self.bank_conflict_sites} conflicted)")
        for count, what in ((self.divergent_branches, "divergent branches"), (self.barriers, "barriers"),
                            (self.atomic_sites, "atomics")):
            if count:
                parts.append(f"{count} {what}")
        return " · ".join(parts)


def kernel_features(model: KernelModel, findings: list[Finding]) -> KernelFeatures:
    run = model.primary
    global_sites = {(a.node.start_byte, a.node.end_byte) for a in run.accesses if a.space == "global"}
    shared_sites = {(a.node.start_byte, a.node.end_byte) for a in run.accesses if a.space == "shared"}
    atomic_sites = {(a.node.start_byte, a.node.end_byte) for a in run.accesses if a.atomic}
    codes = [f.code for f in findings]
    bytes_per_thread = sum(a.size * float(a.mask.sum()) / len(a.mask) for a in run.accesses if a.space == "global")
    block = model.configs[0].block
    n_way = max((int(dict(f.evidence).get("n_way", 1)) for f in findings if f.code == "CL301"), default=1)
    return KernelFeatures(
        threads_per_block=block[0] * block[1] * block[2],
        block_shape_known=not model.block_assumed(),
        global_access_sites=len(global_sites),
        uncoalesced_sites=min(len(global_sites), sum(c in UNCOALESCED_CODES for c in codes)),
        gather_sites=codes.count("CL104"),
        shared_access_sites=len(shared_sites),
        bank_conflict_sites=codes.count("CL301"),
        max_bank_conflict_ways=n_way,
        divergent_branches=sum(c in DIVERGENT_CODES for c in codes),
        barriers=len({(b.node.start_byte, b.node.end_byte) for b in run.barriers}),
        atomic_sites=len(atomic_sites),
        single_address_atomic_sites=codes.count("CL701"),
        float_ops_per_thread=run.float_ops,
        global_bytes_per_thread=bytes_per_thread,
        static_shared_bytes=sum(p.elem.size * _prod(p.dims) for p in run.shared_arrays.values()),
        half_float_loads=len({(a.node.start_byte, a.node.end_byte) for a in run.accesses
                              if a.space == "global" and not a.write and a.floating and a.size == 2}),
        warp_shuffle_sites=len({(c.node.start_byte, c.node.end_byte) for c in run.calls
                                if c.name.startswith(("__shfl", "__reduce_"))}),
    )


def _prod(dims: tuple[int, ...]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out
