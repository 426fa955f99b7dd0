"""Theoretical occupancy: how many blocks of a kernel fit on one SM, and what stops more from fitting.

A port of `cudaOccMaxActiveBlocksPerMultiprocessor` from CUDA's `cuda_occupancy.h` for sm_70 … sm_90 (the
tests compile that header and compare, case by case). Four limits, the smallest wins:

- warps: `max threads per SM / 32` over the block's warps (rounded up);
- registers: registers per thread × 32, rounded up to 256 per warp, in four sub-partitions of the register
  file; a block must also fit `regsPerBlock` with its warps rounded up to a multiple of four;
- shared memory: static + dynamic + the 1 KB the driver reserves per block (sm_80 and newer), rounded up to
  the allocation granularity (256 B before sm_80, 128 B after), against the SM's carve-out (by default the
  largest; raised to the next supported size when one block needs more);
- blocks: the SM's block slots (32, 16 on sm_75/sm_86, 24 on sm_89); on sm_90 also the block barriers.
"""

from __future__ import annotations

from dataclasses import dataclass

INT_MAX = 2**31 - 1
KB = 1024


@dataclass(frozen=True)
class ArchLimits:
    """What `cudaGetDeviceProperties` reports for every part of one compute capability."""

    major: int
    minor: int
    max_threads_per_sm: int
    shared_per_sm: int  # the largest carve-out, bytes
    shared_per_block_optin: int
    reserved_shared_per_block: int
    max_threads_per_block: int = 1024
    registers_per_block: int = 65536
    registers_per_sm: int = 65536
    shared_per_block: int = 48 * KB
    warp_size: int = 32

    @property
    def name(self) -> str:
        return f"sm_{self.major}{self.minor}"

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    @property
    def max_blocks_per_sm(self) -> int:
        if self.major == 7:
            return 16 if self.minor == 5 else 32
        if self.major == 8:
            return {0: 32, 9: 24}.get(self.minor, 16)
        return 32

    @property
    def shared_granularity(self) -> int:
        return 256 if self.major < 8 else 128

    @property
    def carveouts(self) -> tuple[int, ...]:
        """The shared-memory sizes an SM can be configured to, bytes."""
        if self.major == 7:
            return (32 * KB, 64 * KB) if self.minor == 5 else (0, 8 * KB, 16 * KB, 32 * KB, 64 * KB, 96 * KB)
        base = (0, 8 * KB, 16 * KB, 32 * KB, 64 * KB, 100 * KB)
        if self.major == 8:
            return (*base, 132 * KB, 164 * KB) if self.minor in (0, 7) else base
        return (*base, 132 * KB, 164 * KB, 196 * KB, 228 * KB)


ARCHS: dict[str, ArchLimits] = {
    a.name: a
    for a in (
        ArchLimits(7, 0, 2048, 96 * KB, 96 * KB, 0),
        ArchLimits(7, 5, 1024, 64 * KB, 64 * KB, 0),
        ArchLimits(8, 0, 2048, 164 * KB, 163 * KB, KB),
        ArchLimits(8, 6, 1536, 100 * KB, 99 * KB, KB),
        ArchLimits(8, 7, 2048, 164 * KB, 163 * KB, KB),
        ArchLimits(8, 9, 1536, 100 * KB, 99 * KB, KB),
        ArchLimits(9, 0, 2048, 228 * KB, 227 * KB, KB),
    )
}


def arch_limits(arch: str) -> ArchLimits:
    """`sm_90`, `sm_90a`, `compute_90` or `9.0` → its limits; `KeyError` names the known ones."""
    text = arch.strip().lower().removeprefix("sm_").removeprefix("compute_").rstrip("af").replace(".", "")
    key = f"sm_{text}"
    if key not in ARCHS:
        raise KeyError(f"no occupancy data for {arch!r} (known: {', '.join(ARCHS)})")
    return ARCHS[key]


@dataclass(frozen=True)
class Occupancy:
    arch: str
    block_size: int
    active_blocks: int  # per SM
    active_warps: int
    max_warps: int
    limiters: tuple[str, ...]  # the limits equal to the result: warps, registers, shared_memory, blocks, barriers
    block_limit_warps: int
    block_limit_registers: int
    block_limit_shared: int
    block_limit_blocks: int
    block_limit_barriers: int
    registers_per_block: int  # as allocated
    shared_per_block: int  # as allocated, reserved part included

    @property
    def fraction(self) -> float:
        return self.active_warps / self.max_warps if self.max_warps else 0.0

    @property
    def limiter(self) -> str:
        """The one limit to name to a user: a resource before the fixed warp and block limits."""
        for name in ("registers", "shared_memory", "barriers", "warps", "blocks"):
            if name in self.limiters:
                return name
        return "none"


def _round_up(x: int, y: int) -> int:
    return -(-x // y) * y


def _align_carveout(size: int, limits: ArchLimits) -> int | None:
    for option in limits.carveouts:
        if size <= option:
            return option
    return None


def theoretical_occupancy(
    arch: str | ArchLimits,
    block_size: int,
    registers_per_thread: int,
    static_shared_bytes: int = 0,
    dynamic_shared_bytes: int = 0,
    barriers: int = 0,
    carveout_percent: int = -1,
    max_dynamic_shared_bytes: int | None = None,
) -> Occupancy:
    """Blocks and warps per SM for one launch, as `cudaOccMaxActiveBlocksPerMultiprocessor` computes them.

    `carveout_percent` is `cudaFuncAttributePreferredSharedMemoryCarveout` (-1: no preference, the default);
    `max_dynamic_shared_bytes` is `cudaFuncAttributeMaxDynamicSharedMemorySize` when the kernel opted in
    (None: it did not, and a block gets at most 48 KB).
    """
    p = arch if isinstance(arch, ArchLimits) else arch_limits(arch)
    if block_size <= 0:
        raise ValueError("block size must be positive")
    warps_per_block = -(-block_size // p.warp_size)

    # registers (cudaOccMaxBlocksPerSMRegsLimit; partitioned global caching is off on sm_70+)
    regs_per_warp = _round_up(registers_per_thread * p.warp_size, 256)
    regs_per_block = regs_per_warp * warps_per_block
    regs_assumed = regs_per_warp * _round_up(warps_per_block, 4)
    if p.registers_per_block < regs_assumed or p.registers_per_block < regs_per_block or registers_per_thread > 256:
        by_regs = 0
    elif regs_per_warp > 0:
        by_regs = ((p.registers_per_sm // 4) // regs_per_warp) * 4 // warps_per_block
    else:
        by_regs = INT_MAX

    # warps and block slots
    by_warps = 0 if block_size > p.max_threads_per_block else p.max_warps_per_sm // warps_per_block
    by_blocks = p.max_blocks_per_sm

    # shared memory (cudaOccMaxBlocksPerSMSmemLimit)
    static = static_shared_bytes + p.reserved_shared_per_block
    allocated = _round_up(static + dynamic_shared_bytes, p.shared_granularity)
    preference = p.shared_per_sm if carveout_percent < 0 else carveout_percent * p.shared_per_sm // 100
    preference = _align_carveout(preference, p) or 0
    if max_dynamic_shared_bytes is None:
        block_limit = p.shared_per_block
        exceeded = False
    else:
        wanted = static + max_dynamic_shared_bytes
        block_limit = p.shared_per_block_optin if wanted > p.shared_per_block else p.shared_per_block
        exceeded = dynamic_shared_bytes > max_dynamic_shared_bytes
    block_limit += p.reserved_shared_per_block
    if exceeded or allocated > block_limit:
        by_shared = 0
    else:
        per_sm = preference if preference >= allocated else (_align_carveout(allocated, p) or 0)
        by_shared = per_sm // allocated if allocated > 0 else INT_MAX

    blocks = min(by_regs, by_shared, by_warps, by_blocks)
    limiters = [
        name
        for name, value in (
            ("warps", by_warps),
            ("registers", by_regs),
            ("shared_memory", by_shared),
            ("blocks", by_blocks),
        )
        if value == blocks
    ]
    by_barriers = INT_MAX
    if p.major >= 9 and barriers > 0:
        by_barriers = by_blocks * 2 // barriers
        blocks = min(blocks, by_barriers)
        if blocks == by_barriers:
            limiters.append("barriers")
    return Occupancy(
        arch=p.name,
        block_size=block_size,
        active_blocks=blocks,
        active_warps=blocks * warps_per_block,
        max_warps=p.max_warps_per_sm,
        limiters=tuple(limiters),
        block_limit_warps=by_warps,
        block_limit_registers=by_regs,
        block_limit_shared=by_shared,
        block_limit_blocks=by_blocks,
        block_limit_barriers=by_barriers,
        registers_per_block=regs_per_block,
        shared_per_block=allocated,
    )
