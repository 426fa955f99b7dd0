"""How the memory system serves one warp's request: 32-byte sectors for global memory, 32 four-byte banks for
shared memory (8- and 16-byte accesses are served in 2 and 4 phases and conflict only within a phase; lanes
reading the same word are served by one broadcast).

Everything is computed for several warps at once (rows of a 2-D array): the analyzer asks this for every
access of every simulated warp, so it must cost microseconds, not a Python loop per lane."""

from __future__ import annotations

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
    # where the stride is not constant but regular: (bytes between neighbours, lanes per group), as a warp
    # of a 16×16 block walks two rows of 16 lanes each
    groups: tuple[int, int] | None = None

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


def _stacked(accesses: list, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The warps of several instances of one access site, as the rows of one array."""
    rows = [_rows(a.addr, a.mask, limit) for a in accesses if a.addr is not None]
    if not rows:
        return np.zeros((0, WARP), np.int64), np.zeros((0, WARP), bool)
    return np.concatenate([r[0] for r in rows]), np.concatenate([r[1] for r in rows])


def _global_counts(a: np.ndarray, m: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sectors, ideal sectors and active lanes of each row."""
    first, last = a // SECTOR, (a + size - 1) // SECTOR
    if size <= SECTOR and np.array_equal(first[m], last[m]):
        sectors = _distinct_per_row(first, m)
    else:
        span = max(1, -(-size // SECTOR) + 1)
        ids = first[:, :, None] + np.arange(span)[None, None, :]
        valid = (ids <= last[:, :, None]) & m[:, :, None]
        sectors = _distinct_per_row(ids.reshape(len(a), -1), valid.reshape(len(a), -1))
    ideal = np.maximum(1, -(-_distinct_per_row(a, m) * size // SECTOR))
    return sectors, ideal, m.sum(axis=1)


def _request(a_row: np.ndarray, m_row: np.ndarray, sectors: int, ideal: int) -> GlobalRequest:
    diffs = np.diff(a_row[m_row])
    stride = int(diffs[0]) if diffs.size and np.all(diffs == diffs[0]) else None
    described = stride is None and sectors >= 2 * ideal  # only an uncoalesced request's pattern is ever told
    return GlobalRequest(int(sectors), int(ideal), stride, int(m_row.sum()), _groups(diffs) if described else None)


def _groups(diffs: np.ndarray) -> tuple[int, int] | None:
    """(stride, lanes per group) when the lanes form equal groups with one stride inside each group (the
    jumps between groups being something else), else None: the offsets are irregular."""
    if diffs.size < 3:
        return None
    values, counts = np.unique(diffs, return_counts=True)
    inner = int(values[np.argmax(counts)])
    breaks = np.flatnonzero(diffs != inner)
    bounds = np.concatenate([[-1], breaks, [diffs.size]])
    sizes = np.diff(bounds)  # lanes per group
    jumps = diffs[breaks]
    if inner == 0 or sizes.size < 2 or np.any(sizes != sizes[0]) or sizes[0] < 2 or np.any(jumps != jumps[0]):
        return None  # pseudo-random offsets, or groups that do not repeat
    return inner, int(sizes[0])


def worst_global(accesses: list, limit: int = 8) -> GlobalRequest | None:
    """The request with the most excess sectors over all instances and warps of one global access site
    (warps with a single active lane say nothing about coalescing and are skipped)."""
    a, m = _stacked(accesses, limit)
    if len(a) == 0:
        return None
    size = next(x.size for x in accesses if x.addr is not None)
    sectors, ideal, lanes = _global_counts(a, m, size)
    ratio = np.where(lanes > 1, sectors / ideal, -1.0)
    row = int(np.argmax(ratio))
    if ratio[row] < 0:
        return None
    return _request(a[row], m[row], sectors[row], ideal[row])


def worst_shared(accesses: list, limit: int = 8) -> SharedRequest | None:
    """The most conflicted request over all instances and warps of one shared access site."""
    worst = None
    for x in accesses:
        if x.addr is None:
            continue
        for r in shared_requests(x.addr, x.mask, x.size, limit):
            if r is not None and (worst is None or r.degree > worst.degree):
                worst = r
    return worst


def global_requests(addr: np.ndarray, mask: np.ndarray, size: int, limit: int = 8) -> list[GlobalRequest | None]:
    """The request of each of the first `limit` warps (None for a warp with no active lane)."""
    a, m = _rows(addr, mask, limit)
    sectors, ideal, lanes = _global_counts(a, m, size)
    return [_request(a[r], m[r], sectors[r], ideal[r]) if lanes[r] else None for r in range(len(a))]


def global_request(addr: np.ndarray, active: np.ndarray, size: int) -> GlobalRequest | None:
    """One warp's request (addr and active have one entry per lane)."""
    return global_requests(np.asarray(addr, np.int64), np.asarray(active, bool), size, limit=1)[0]


def shared_requests(addr: np.ndarray, mask: np.ndarray, size: int, limit: int = 8) -> list[SharedRequest | None]:
    a, m = _rows(addr, mask, limit)
    # 8- and 16-byte accesses are served in 2 and 4 phases; odd sizes (a 12- or 40-byte struct) in as many
    # phases as keep a phase within 128 bytes, rounded down to a power of two so the phases split the warp
    lanes_per_phase = WARP if size <= 4 else 1 << (max(1, WARP * 4 // size).bit_length() - 1)
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
