"""How the memory system serves one warp's request: 32-byte sectors for global memory, 32 four-byte banks for
shared memory (8- and 16-byte accesses are served in 2 and 4 phases and conflict only within a phase; lanes
reading the same word are served by one broadcast)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

WARP = 32
SECTOR = 32
BANKS = 32


@dataclass(frozen=True)
class GlobalRequest:
    sectors: int
    ideal: int
    stride_bytes: int | None  # between consecutive active lanes, when constant
    lanes: int

    @property
    def excess_ratio(self) -> float:
        return self.sectors / self.ideal if self.ideal else 1.0


def global_request(addr: np.ndarray, active: np.ndarray, size: int) -> GlobalRequest | None:
    a = addr[active]
    if a.size == 0:
        return None
    first = a // SECTOR
    last = (a + size - 1) // SECTOR
    spans = [np.arange(f, e + 1) for f, e in zip(first.tolist(), last.tolist(), strict=True)] \
        if size > SECTOR or np.any(first != last) else [first]
    sectors = len(np.unique(np.concatenate(spans)))
    unique = np.unique(a)
    ideal = max(1, math.ceil(unique.size * size / SECTOR))
    diffs = np.diff(a)
    stride = int(diffs[0]) if diffs.size and np.all(diffs == diffs[0]) else None
    return GlobalRequest(sectors, ideal, stride, int(a.size))


@dataclass(frozen=True)
class SharedRequest:
    wavefronts: int
    ideal: int  # one per phase that has active lanes
    degree: int  # the worst n-way conflict in a phase

    @property
    def conflicted(self) -> bool:
        return self.degree > 1


def shared_request(addr: np.ndarray, active: np.ndarray, size: int) -> SharedRequest | None:
    lanes_per_phase = WARP if size <= 4 else max(1, WARP * 4 // size)
    words_per_access = max(1, size // 4)
    wavefronts = ideal = degree = 0
    for start in range(0, WARP, lanes_per_phase):
        phase = slice(start, start + lanes_per_phase)
        a = addr[phase][active[phase]]
        if a.size == 0:
            continue
        words = np.unique((a // 4)[:, None] + np.arange(words_per_access)[None, :])
        counts = np.bincount(words % BANKS, minlength=BANKS)
        d = int(counts.max())
        wavefronts += d
        ideal += 1
        degree = max(degree, d)
    if ideal == 0:
        return None
    return SharedRequest(wavefronts, ideal, degree)


def warps(n_threads: int, limit: int = 8) -> list[slice]:
    """The first few warps of the simulated block (enough to see every pattern that repeats per warp)."""
    return [slice(w * WARP, (w + 1) * WARP) for w in range(min(limit, max(1, n_threads // WARP)))]
