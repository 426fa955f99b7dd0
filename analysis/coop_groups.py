"""Cooperative groups in the lane interpreter: the groups a kernel makes (`cg::this_thread_block()`,
`cg::tiled_partition<32>(block)`, `tiled_partition(block, 16)`, `cg::this_grid()`, `cg::coalesced_threads()`,
`cg::labeled_partition(active, label)`), what their methods return for every simulated thread (`thread_rank()`,
`meta_group_rank()`, `size()`...), which barrier their `sync()` is, `cg::reduce` over a tile (and whether one
over a partition runs once per label), and the barriers inside CUB's block and warp collectives.

A group is a value like a pointer or a `dim3`: it lives in the interpreter's scopes, so a helper that takes
`cg::thread_block_tile<32>& warp` sees the caller's tile."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

import numpy as np

from cudalens.analysis.values import BID, DATA, ELECTED, THREAD_DEPS, TID_X, TID_Y, TID_Z, Dim3, Val, const

WARP = 32


class GroupKind(Enum):
    BLOCK = "block"
    TILE = "tile"  # a thread_block_tile or a tiled_partition: consecutive ranks of the block
    COALESCED = "coalesced"  # the active lanes of a warp
    GRID = "grid"
    BARRIER = "barrier"  # a `cuda::barrier`: not a group of threads, but what its waits order is the block


class SyncScope(Enum):
    """What a group's `sync()` orders: the whole block (a `__syncthreads()`) or the lanes of each warp."""

    BLOCK = "block"
    WARP = "warp"


@dataclass(frozen=True)
class Group:
    kind: GroupKind
    size: int | None = None  # threads in a tile; None where the program chooses it at run time
    # a coalesced group's rank of each thread among its warp's active lanes (a partition's: among those with its
    # label; one sample where the label is the data's, as if every lane had one: `thread_rank() == 0` still
    # picks one lane of each group)
    rank: np.ndarray | None = None
    # a partition of a warp by a label (`cg::labeled_partition(active, bucket)`, `cg::binary_partition(tile, odd)`):
    # the label's text and what its value depends on; None for every other group
    label: str | None = None
    label_deps: frozenset[str] = frozenset()

    @property
    def barrier(self) -> SyncScope:
        return SyncScope.BLOCK if self.kind in (GroupKind.BLOCK, GroupKind.GRID, GroupKind.BARRIER) else SyncScope.WARP


def sync_of(obj: object, name: str) -> SyncScope | None:
    """The barrier that `obj.name()` is, or None: a group's `sync()`, a `cuda::barrier`'s `arrive_and_wait()` or
    `wait(token)`; `sync()` and `arrive_and_wait()` on an object we did not follow are taken as the block's."""
    if isinstance(obj, Group) and obj.kind == GroupKind.BARRIER:
        return SyncScope.BLOCK if name in ("arrive_and_wait", "wait") else None
    if isinstance(obj, Group):
        return obj.barrier if name == "sync" else None
    return SyncScope.BLOCK if name in ("sync", "arrive_and_wait") else None


# CUB's collectives, made on their temp storage and used at once: `BlockReduce(temp).Sum(v)`,
# `cub::BlockScan<int, 128>(temp).ExclusiveSum(x, y)`, `WarpReduce(temp[w]).Reduce(v, op)` (typedef'd names too)
_CUB_COLLECTIVE = re.compile(r"\b(Block|Warp)(?:Reduce|Scan|RadixSort|Exchange|Load|Store|Histogram|MergeSort|Shuffle"
                             r"|Discontinuity|AdjacentDifference|RunLengthDecode)\w*\s*(?:<.*>)?$")


def collective_sync(constructor: str) -> SyncScope | None:
    """The barrier a CUB collective's method holds, from the text of what makes the object (`BlockReduce`,
    `cub::WarpScan<int>`): a block collective exchanges partial results through shared memory between
    `__syncthreads()`, a warp collective between `__syncwarp()`. Shared memory written before the call is then
    ordered with reads after it."""
    found = _CUB_COLLECTIVE.search(constructor.strip())
    if found is None:
        return None
    return SyncScope.BLOCK if found.group(1) == "Block" else SyncScope.WARP


@dataclass(frozen=True)
class Lanes:
    """The simulated block, as the group methods need it."""

    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    n: int  # simulated threads

    def rank(self) -> Val:
        """The thread's linear rank in the block (x fastest), depending on the indices that vary."""
        deps = {TID_X}
        deps |= {TID_Y} if self.block[1] > 1 else set()
        deps |= {TID_Z} if self.block[2] > 1 else set()
        return Val(np.arange(self.n, dtype=np.int64), frozenset(deps))


_GROUP_TYPES = re.compile(r"\b(thread_block_tile|thread_group|coalesced_group|thread_block|grid_group|barrier)\b")
_TILE_SIZE = re.compile(r"thread_block_tile\s*<\s*(\d+)")
PARTITIONS = frozenset({"labeled_partition", "binary_partition"})
_MAKERS = {"this_thread_block", "this_grid", "tiled_partition", "coalesced_threads", *PARTITIONS}
_CG_NAMESPACES = {"cg", "cooperative_groups"}


def from_type(type_text: str) -> Group | None:
    """The group a declared type names (`cg::thread_block_tile<32>&` → a 32-thread tile), for a parameter or a
    variable whose value the interpreter does not know."""
    m = _GROUP_TYPES.search(type_text)
    if m is None:
        return None
    word = m.group(1)
    if word == "thread_block":
        return Group(GroupKind.BLOCK)
    if word == "grid_group":
        return Group(GroupKind.GRID)
    if word == "barrier":
        return Group(GroupKind.BARRIER) if "<" in type_text else None  # `cuda::barrier<scope>`, not a name
    size = _TILE_SIZE.search(type_text)
    return Group(GroupKind.TILE, int(size.group(1)) if size else None)


def is_group_function(name: str, scope: str | None) -> bool:
    """A free function of cooperative groups: qualified with its namespace, or one of the group makers by its
    unqualified name (after `using namespace cooperative_groups`)."""
    return (scope in _CG_NAMESPACES and name in _MAKERS | {"reduce", "sync"}) or (scope is None and name in _MAKERS)


def make(name: str, targs: list[Val], args: list[object], lanes: Lanes, mask: np.ndarray,
         texts: list[str] = ()) -> Group | None:
    """The group a maker returns; `texts` are its arguments as written (a partition's label is named by them)."""
    if name in PARTITIONS:  # lanes of a warp with equal labels; who they are is the label's, known or not
        label = args[1] if len(args) > 1 else None
        deps = label.deps if isinstance(label, Val) else frozenset({DATA})
        known = label.v if isinstance(label, Val) and label.v is not None and DATA not in deps else None
        return Group(GroupKind.COALESCED, rank=_ranks(mask, known), label=texts[1] if len(texts) > 1 else "",
                     label_deps=deps)
    if name == "this_thread_block":
        return Group(GroupKind.BLOCK)
    if name == "this_grid":
        return Group(GroupKind.GRID)
    if name == "tiled_partition":
        size = targs[0] if targs else (args[1] if len(args) > 1 else None)
        known = isinstance(size, Val) and size.v is not None and size.v.ndim == 0
        return Group(GroupKind.TILE, int(size.v) if known else None)  # type: ignore[union-attr,arg-type]
    if name == "coalesced_threads":
        return Group(GroupKind.COALESCED, None, _ranks(mask, None))
    return None


def _ranks(mask: np.ndarray, labels: np.ndarray | None) -> np.ndarray:
    """Each thread's rank among the lanes of its warp in `mask` (with its label, where `labels` are given)."""
    if labels is None:
        m = np.concatenate([mask, np.zeros(-len(mask) % WARP, bool)]).reshape(-1, WARP)
        return (np.cumsum(m, axis=1) - 1).ravel()[:len(mask)].astype(np.int64)
    rank = np.zeros(len(mask), np.int64)
    values = np.broadcast_to(labels, mask.shape)
    for start in range(0, len(mask), WARP):
        lanes = slice(start, start + WARP)
        for label in np.unique(values[lanes][mask[lanes]]):
            same = mask[lanes] & (values[lanes] == label)
            rank[lanes] = np.where(same, np.cumsum(same) - 1, rank[lanes])
    return rank


def method(group: Group, name: str, lanes: Lanes, builtins: dict) -> Val | Dim3 | None:
    """The value of `group.name()` for every thread; None for a method that is not a value of the lanes (a
    barrier, a shuffle) or one not modelled."""
    rank = lanes.rank()
    if group.kind == GroupKind.BLOCK:
        if name == "thread_rank":
            return rank
        if name in ("size", "num_threads"):
            return const(lanes.n)
        if name == "thread_index":
            return _dim3(builtins["threadIdx"])
        if name in ("group_index",):
            return _dim3(builtins["blockIdx"])
        if name in ("group_dim", "dim_threads"):
            return _dim3(builtins["blockDim"])
        return None
    if group.kind == GroupKind.GRID:
        gx, gy, _ = lanes.grid
        block_rank = Val(np.array(1 + gx + gx * gy, dtype=np.int64), frozenset({BID}))
        if name == "thread_rank":
            return Val(block_rank.v * lanes.n + rank.v, rank.deps | {BID})  # type: ignore[operator]
        if name == "block_rank":
            return block_rank
        if name in ("size", "num_threads"):
            return const(lanes.n * int(np.prod(lanes.grid)))
        if name == "num_blocks":
            return const(int(np.prod(lanes.grid)))
        return None
    if group.kind == GroupKind.COALESCED:
        if name == "thread_rank" and group.rank is not None:
            # which lane has which rank is the data's (who is active, which label), and the ranks are one sample
            # of it (values.ELECTED); each group still has exactly one lane of each rank, so `thread_rank() == 0`
            # elects one lane per group (a leader write after a reduction), a choice of lane, not of data
            return Val(group.rank, rank.deps | {ELECTED})
        return None
    size = group.size
    if size is None or size <= 0:
        return Val(None, rank.deps | {DATA}) if name in ("thread_rank", "meta_group_rank") else None
    if name == "thread_rank":
        return Val(rank.v % size, rank.deps)  # type: ignore[operator]
    if name == "meta_group_rank":
        return Val(rank.v // size, rank.deps)  # type: ignore[operator]
    if name == "meta_group_size":
        return const(-(-lanes.n // size))
    if name in ("size", "num_threads"):
        return const(size)
    return None


def reduce(group: Group, value: object, op_text: str, lanes: Lanes) -> Val:
    """`cg::reduce(tile, v, op)`: the same value on every lane of a tile — computed when `v` is known and the
    operator is one of cooperative groups' (plus, less, greater, bit_and/or/xor), else unknown but no longer
    varying within the tile."""
    if not isinstance(value, Val):
        return Val(None, frozenset({DATA}))
    size = group.size if group.kind == GroupKind.TILE else None
    ops = {"plus": np.sum, "less": np.min, "greater": np.max, "bit_and": np.bitwise_and.reduce,
           "bit_or": np.bitwise_or.reduce, "bit_xor": np.bitwise_xor.reduce}
    op = next((f for word, f in ops.items() if re.search(rf"\b{word}\b", op_text)), None)
    if value.v is not None and size and lanes.n % size == 0 and op is not None:
        tiles = np.broadcast_to(value.v, (lanes.n,)).reshape(-1, size)
        per_tile = op(tiles, axis=1)
        return Val(np.repeat(per_tile, size), value.deps, value.is_float)
    return Val(None, (value.deps - THREAD_DEPS) | {DATA}, value.is_float)


# cooperative groups' operators that `cg::reduce` lowers to one `redux.sync` for a 32-bit integer (sm_80 and
# later; cooperative_groups/details/reduce.h): the same instruction for each distinct membermask in a warp
_REDUX_OPS = re.compile(r"\b(?:plus|less|greater|bit_and|bit_or|bit_xor)\s*(?:<\s*([\w\s]+?)\s*>)?")
_REDUX_TYPES = frozenset({"int", "unsigned", "unsigned int", "signed int", "int32_t", "uint32_t", "short",
                          "unsigned short", "int16_t", "uint16_t", "char", "signed char", "unsigned char", "int8_t",
                          "uint8_t"})


def runs_per_label(group: Group, value: object, op_text: str) -> bool:
    """Whether `cg::reduce(group, value, op)` runs once for each distinct label in a warp: a reduction over a
    partition whose label follows loaded data, with an operator and a 32-bit integer type that lower it to
    `redux.sync` on the group's mask. Lanes whose masks differ cannot take one `redux.sync`: the warp runs it for
    one subgroup after another (cuda-samples' warpAggregatedAtomicsCG `cg::reduce(labeledGroup, v,
    cg::greater<int>())` over 5 buckets: 6 instructions per warp on its line, at 10.7 active lanes, on an H200).
    A shuffle reduction (a float, another operator) steps all subgroups at once and is not one of these."""
    if group.label is None or DATA not in group.label_deps or not isinstance(value, Val):
        return False
    op = _REDUX_OPS.search(op_text)
    if op is None:
        return False
    type_name = " ".join(op.group(1).split()) if op.group(1) else None
    return type_name in _REDUX_TYPES if type_name is not None else not value.is_float


def _dim3(fields: dict[str, Val]) -> Dim3:
    return Dim3([fields["x"], fields["y"], fields["z"]])
