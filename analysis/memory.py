"""How the memory system serves one warp's request: 32-byte sectors for global memory, 32 four-byte banks for
shared memory (8- and 16-byte accesses are served in 2 and 4 phases and conflict only within a phase; lanes
reading the same word are served by one broadcast).

Everything is computed for several warps at once (rows of a 2-D array): the analyzer asks this for every
access of every simulated warp, so it must cost microseconds, not a Python loop per lane."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

WARP = 32
SECTOR = 32
BANKS = 32
_SENTINEL = np.iinfo(np.int64).min


@dataclass(frozen=True)
class GlobalRequest:
    sectors: int
    ideal: int
    stride_bytes: int | None  # between consecutive active lanes, when constant
    lanes: int

    @property
    def excess_ratio(self) -> float:
        return self.sectors / self.ideal if self.ideal else 1.0


@dataclass(frozen=True)
class SharedRequest:
    wavefronts: int
    ideal: int  # one per phase that has active lanes
    degree: int  # the worst n-way conflict in a phase

    @property
    def conflicted(self) -> bool:
        return self.degree > 1


def _distinct_per_row(values: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Number of distinct active values in each row."""
    x = np.where(active, values, _SENTINEL)
    x.sort(axis=1)
    changes = np.count_nonzero(np.diff(x, axis=1), axis=1) + 1
    has_inactive = ~active.all(axis=1)
    return changes - has_inactive


def _rows(addr: np.ndarray, mask: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    n = min(len(addr) // WARP, limit) * WARP
    if n == 0:  # fewer threads than a warp: one partial warp
        pad = WARP - len(addr)
        return (np.concatenate([addr, np.zeros(pad, np.int64)])[None, :],
                np.concatenate([mask, np.zeros(pad, bool)])[None, :])
    return addr[:n].reshape(-1, WARP), mask[:n].reshape(-1, WARP)


def global_requests(addr: np.ndarray, mask: np.ndarray, size: int, limit: int = 8) -> list[GlobalRequest | None]:
    """The request of each of the first `limit` warps (None for a warp with no active lane)."""
    a, m = _rows(addr, mask, limit)
    first, last = a // SECTOR, (a + size - 1) // SECTOR
    if size <= SECTOR and np.array_equal(first[m], last[m]):
        sectors = _distinct_per_row(first, m)
    else:
        span = max(1, -(-size // SECTOR) + 1)
        ids = first[:, :, None] + np.arange(span)[None, None, :]
        valid = (ids <= last[:, :, None]) & m[:, :, None]
        sectors = _distinct_per_row(ids.reshape(len(a), -1), valid.reshape(len(a), -1))
    unique = _distinct_per_row(a, m)
    lanes = m.sum(axis=1)
    out: list[GlobalRequest | None] = []
    for row in range(len(a)):
        if lanes[row] == 0:
            out.append(None)
            continue
        active = a[row][m[row]]
        diffs = np.diff(active)
        stride = int(diffs[0]) if diffs.size and np.all(diffs == diffs[0]) else None
        out.append(GlobalRequest(int(sectors[row]), max(1, math.ceil(int(unique[row]) * size / SECTOR)), stride,
                                 int(lanes[row])))
    return out


def global_request(addr: np.ndarray, active: np.ndarray, size: int) -> GlobalRequest | None:
    """One warp's request (addr and active have one entry per lane)."""
    return global_requests(np.asarray(addr, np.int64), np.asarray(active, bool), size, limit=1)[0]


def shared_requests(addr: np.ndarray, mask: np.ndarray, size: int, limit: int = 8) -> list[SharedRequest | None]:
    a, m = _rows(addr, mask, limit)
    lanes_per_phase = WARP if size <= 4 else max(1, WARP * 4 // size)
    words_per_access = max(1, size // 4)
    phases = WARP // lanes_per_phase
    pa = a.reshape(-1, lanes_per_phase)
    pm = m.reshape(-1, lanes_per_phase)
    words = ((pa // 4)[:, :, None] + np.arange(words_per_access)[None, None, :]).reshape(len(pa), -1)
    wmask = np.repeat(pm, words_per_access, axis=1)
    x = np.where(wmask, words, _SENTINEL)
    x.sort(axis=1)
    first_of_run = np.ones_like(x, dtype=bool)
    first_of_run[:, 1:] = x[:, 1:] != x[:, :-1]
    keep = first_of_run & (x != _SENTINEL)  # each distinct word once
    rows = np.nonzero(keep)[0]
    banks = (x[keep] % BANKS).astype(np.int64)
    counts = np.bincount(rows * BANKS + banks, minlength=len(pa) * BANKS).reshape(len(pa), BANKS)
    degree = counts.max(axis=1).reshape(-1, phases)
    active_phase = pm.any(axis=1).reshape(-1, phases)
    out: list[SharedRequest | None] = []
    for row in range(len(a)):
        if not active_phase[row].any():
            out.append(None)
            continue
        d = degree[row][active_phase[row]]
        out.append(SharedRequest(int(d.sum()), int(active_phase[row].sum()), int(d.max())))
    return out


def shared_request(addr: np.ndarray, active: np.ndarray, size: int) -> SharedRequest | None:
    return shared_requests(np.asarray(addr, np.int64), np.asarray(active, bool), size, limit=1)[0]


def warps(n_threads: int, limit: int = 8) -> list[slice]:
    """The first few warps of the simulated block (enough to see every pattern that repeats per warp)."""
    return [slice(w * WARP, (w + 1) * WARP) for w in range(min(limit, max(1, n_threads // WARP)))]
