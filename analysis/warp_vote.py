"""Warp votes in the lane interpreter: the mask of a warp's active lanes (`__activemask()`), a vote over them
(`__ballot_sync(mask, p)`, `__any_sync`, `__all_sync`), the bit functions that pick a leader from such a mask (`__ffs(m) - 1`) or count it
(`__popc(m)`), and a lane compared with a leader the data elect.

A mask of lanes is the same in every lane of a warp. It is known where the lanes that get there and the vote are
(the block's lanes under conditions the interpreter evaluated); otherwise it is unknown but warp-uniform
(values.UNIFORM), and `lane == __ffs(votes) - 1` holds in at most one lane of each warp, the one the data elect:
the interpreter follows one sample of that (values.ELECTED). So does the rank of a lane among those whose bit a
warp-uniform mask sets (`__popc(m & ((1 << lane) - 1))`, a compaction: bits_below)."""

from __future__ import annotations

import numpy as np

from cudalens.analysis.values import DATA, ELECTED, STAND_IN, THREAD_DEPS, UNIFORM, Val, block_uniform

WARP = 32


def _per_warp(lanes: np.ndarray) -> np.ndarray:
    """The lanes of each warp as rows (the last warp padded with unset lanes)."""
    return np.concatenate([lanes, np.zeros(-len(lanes) % WARP, bool)]).reshape(-1, WARP)


def _lane_bits(lanes: np.ndarray) -> np.ndarray:
    """For each thread, the bit mask of the lanes of its warp that are set in `lanes` (lane 0 the lowest bit)."""
    bits = (_per_warp(lanes).astype(np.int64) << np.arange(WARP, dtype=np.int64)).sum(axis=1)
    return np.repeat(bits, WARP)[:len(lanes)]


def active_mask(mask: np.ndarray, exact: bool, deps: frozenset[str]) -> Val:
    """`__activemask()`: the lanes of the thread's warp that run with it; `deps`, what the conditions that
    chose them follow. Unknown (but one value per warp) where the interpreter ran a superset of the lanes."""
    if not exact:
        return Val(None, frozenset({UNIFORM}))
    return Val(_lane_bits(mask), deps - THREAD_DEPS - {DATA, STAND_IN})


def ballot(mask: np.ndarray, exact: bool, members: Val, pred: Val) -> Val:
    """`__ballot_sync(members, pred)`: the lanes of the warp, among `members`, whose `pred` is true."""
    if not exact or pred.v is None or members.v is None:
        return Val(None, (pred.deps - THREAD_DEPS - {DATA, STAND_IN}) | {UNIFORM})
    voting = mask & (np.broadcast_to(pred.v, mask.shape) != 0)
    voting &= (np.broadcast_to(members.v, mask.shape) >> (np.arange(len(mask)) % WARP)) & 1 != 0
    return Val(_lane_bits(voting), pred.deps - THREAD_DEPS)


def vote(name: str, mask: np.ndarray, exact: bool, members: Val, pred: Val) -> Val:
    """`__any_sync(members, p)`, `__all_sync(members, p)`: whether any / every running lane of the warp among
    `members` has `p`. One value in every lane of the warp whatever the data decide, so a branch on it never splits
    a warp: known where the vote is exactly known (`ballot`), else unknown and warp-uniform, never data."""
    votes = ballot(mask, exact, members, pred)
    if votes.v is None or DATA in votes.deps or STAND_IN in votes.deps:
        return Val(None, (pred.deps - THREAD_DEPS - {DATA, STAND_IN}) | {UNIFORM})
    voters = ballot(mask, exact, members, Val(1, frozenset()))
    hit = votes.v != 0 if name == "__any_sync" else votes.v == voters.v
    return Val(np.asarray(hit).astype(np.int64), votes.deps)


_POPCOUNTS = ("__popc", "__popcll", "__builtin_popcount", "__builtin_popcountll")
_LOWEST_BITS = ("__ffs", "__ffsll", "__builtin_ctz", "__builtin_ctzll")
BIT_FUNCTIONS = _POPCOUNTS + _LOWEST_BITS


def bit_function(name: str, value: Val) -> Val | None:
    """`__ffs(m)` (1 + the lowest set bit's index, 0 for none), `__builtin_ctz(m)` (the lowest set bit's index:
    `__builtin_ctz(TILE_SIZE)`, a shift) and `__popc(m)` of a known 32-bit value, their `ll` forms of a 64-bit
    one; None for other names and unknown values (then the call is any call: its result follows its argument)."""
    if value.v is None or value.is_float or name not in BIT_FUNCTIONS:
        return None
    width = 64 if name.endswith("ll") else WARP
    bits = np.broadcast_to(value.v, np.shape(value.v)).astype(np.int64)
    bits = bits if width == 64 else bits & 0xFFFFFFFF
    if name in _POPCOUNTS:
        return Val(sum((bits >> k) & 1 for k in range(width)), value.deps)  # type: ignore[arg-type]
    lowest = bits & -bits
    ffs = np.where(bits == 0, 0, np.log2(np.maximum(lowest, 1)).astype(np.int64) + 1)
    return Val(ffs if name.startswith("__ffs") else np.maximum(ffs - 1, 0), value.deps)


def bits_below(left: Val, right: Val, mask: np.ndarray) -> Val | None:
    """`m & ((1 << bit) - 1)`: a mask the same in every lane of a warp (a tile's bitmask of active pixels, a
    ballot) cut to the bits below each lane's own (`bit`, distinct in the lanes of each warp). Which bits `m` has
    is the data's; `__popc` of this is then each lane's rank among the lanes whose bit is set, and over those
    lanes the ranks are 0, 1, 2... whatever `m` is (a prefix-sum compaction: `out[start + rank]` is contiguous).
    The sample the interpreter follows is `m` with the bit of every running lane of the warp set, marked ELECTED,
    as a coalesced group's ranks are. None unless one side is such a mask and the other the lanes' bits below."""
    for below, m in ((left, right), (right, left)):
        if below.v is None or below.is_float or m.is_float or not below.thread_dependent or not mask.any() \
                or m.thread_dependent or (m.v is None and not block_uniform(m)) \
                or (m.v is not None and not (m.deps & {DATA, STAND_IN, UNIFORM})):
            continue  # a mask the code writes (`0xffff & lanemask`) is computed as it is
        values = np.broadcast_to(below.v, mask.shape).astype(np.int64)
        bit = np.log2(np.maximum(values, 0) + 1).astype(np.int64)
        if np.any(values[mask] < 0) or np.any((np.int64(1) << np.clip(bit, 0, 62)) - 1 != values) \
                or (m.v is not None and not _warp_uniform(m.v, mask)) or not _distinct_per_warp(bit, mask):
            continue
        ones = np.where(mask, np.int64(1) << bit, 0)
        sampled = np.repeat(np.bitwise_or.reduce(_per_warp_int(ones), axis=1), WARP)[:len(mask)]
        return Val(sampled & values, (m.deps - {DATA, STAND_IN}) | below.deps | {ELECTED})
    return None


def _per_warp_int(values: np.ndarray) -> np.ndarray:
    return np.concatenate([values, np.zeros(-len(values) % WARP, values.dtype)]).reshape(-1, WARP)


def _warp_uniform(values: np.ndarray, mask: np.ndarray) -> bool:
    rows = _per_warp_int(np.broadcast_to(values, mask.shape).astype(np.int64))
    return all(len(np.unique(row[active])) <= 1 for row, active in zip(rows, _per_warp(mask), strict=True))


def _distinct_per_warp(values: np.ndarray, mask: np.ndarray) -> bool:
    rows = _per_warp_int(values)
    return all(len(np.unique(row[active])) == active.sum() for row, active in zip(rows, _per_warp(mask), strict=True))


def elected(op: str, left: Val, right: Val, mask: np.ndarray) -> Val | None:
    """`lane == leader`: a value that differs between the lanes of each warp compared with an unknown one the
    same in every lane of a warp (a leader from `__ffs(__ballot_sync(...)) - 1`, a broadcast, a parameter)
    holds in at most one lane of each warp, whichever the data make it. The sample the interpreter follows is
    the lowest lane of `mask` in each warp, marked ELECTED (a branch on it is not exact). None for any other
    comparison."""
    if op not in ("==", "!="):
        return None
    lane, leader = (left, right) if left.v is not None else (right, left)
    if lane.v is None or leader.v is not None or lane.is_float or not block_uniform(leader) or not mask.any():
        return None
    values = np.broadcast_to(lane.v, mask.shape)
    for row, active in zip(_per_warp(values.copy()), _per_warp(mask), strict=True):
        if len(np.unique(row[active])) != active.sum():
            return None
    first = _per_warp(mask)
    first &= np.cumsum(first, axis=1) == 1
    truth = first.ravel()[:len(mask)]
    return Val((truth if op == "==" else ~truth).astype(np.int64), left.deps | right.deps | {ELECTED})


def conjoined(left: Val, right: Val) -> Val | None:
    """`p && lane == leader` with `p` unknown: still at most one lane of each warp; the sample is the elected
    lane with `p` true there. None unless exactly one side is an elected sample and the other unknown."""
    for known, other in ((left, right), (right, left)):
        if known.v is not None and ELECTED in known.deps and other.v is None:
            return Val(known.v, known.deps | other.deps)
    return None
