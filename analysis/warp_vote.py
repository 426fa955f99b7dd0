"""Warp votes in the lane interpreter: the mask of a warp's active lanes (`__activemask()`), a vote over them
(`__ballot_sync(mask, p)`, `__any_sync`, `__all_sync`), the bit functions that pick a leader from such a mask (`__ffs(m) - 1`) or count it
(`__popc(m)`), and a lane compared with a leader the data elect.

A mask of lanes is the same in every lane of a warp. It is known where the lanes that get there and the vote are
(the block's lanes under conditions the interpreter evaluated); otherwise it is unknown but warp-uniform
(values.UNIFORM), and `lane == __ffs(votes) - 1` holds in at most one lane of each warp, the one the data elect:
the interpreter follows one sample of that (values.ELECTED)."""

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


def bit_function(name: str, value: Val) -> Val | None:
    """`__ffs(m)` (1 + the lowest set bit's index, 0 for none) and `__popc(m)` of a known 32-bit value; None for
    other names and unknown values (then the call is any call: its result follows its argument)."""
    if value.v is None or value.is_float or name not in ("__ffs", "__popc"):
        return None
    bits = np.broadcast_to(value.v, np.shape(value.v)).astype(np.int64) & 0xFFFFFFFF
    if name == "__popc":
        return Val(sum((bits >> k) & 1 for k in range(WARP)), value.deps)  # type: ignore[arg-type]
    lowest = bits & -bits
    return Val(np.where(bits == 0, 0, np.log2(np.maximum(lowest, 1)).astype(np.int64) + 1), value.deps)


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
