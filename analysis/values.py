"""Values of the lane interpreter: each is known for every simulated thread at once (a numpy vector) or unknown,
and remembers what it depends on (thread and block indices, parameters, loop variables, loaded data)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from cudalens.analysis.types import TypeInfo

# Dependency labels. Parameters and loop variables are "param:<name>" and "loop:<name>".
TID_X, TID_Y, TID_Z = "tid.x", "tid.y", "tid.z"
BID = "bid"
DATA = "data"
# unknown, but the same in every thread: loaded from one address for all of them, or computed from such values
# and parameters by a function we do not see into (so a branch on it cannot split a warp)
UNIFORM = "data:uniform"
# A stand-in for a value loaded from one address per warp (each warp's lanes read one element, so they hold one
# value; llm.c's `int ix = inp[b * T + t];` in a kernel over the columns of row b·T+t): the global addresses
# computed from it can then be judged by how the lanes differ, which does not depend on the value. What rests
# on the value itself is never taken from the stand-in: a branch on it is one on unknown data, and an access
# whose address uses it is `sampled` (info at most).
STAND_IN = "data:stand-in"
# A value assigned under a condition on loaded data that every thread of the block evaluates alike (`if
# (b_H[(p - 2) * n + p - 1] == 0) p--;`, the data read from one address): the same in every thread, as UNIFORM
# (which it comes with), and known for the outcome the interpreter followed, which the data may not give. What
# rests on its value is a sample, as what rests on DATA is (`follows_sample`); what rests only on the lanes
# agreeing (a branch on it cannot split a warp, an address computed from it plus the lane is not a gather) holds.
OUTCOME = "data:outcome"
# Which lanes of a warp hold the value is the data's choice, and the values are one sample of it: a lane compared
# with a leader the data elect (`lane == __ffs(__ballot_sync(m, p)) - 1` holds in one lane of each warp, here the
# lowest active one: warp_vote.elected), a thread's rank in a coalesced group or a partition of the warp (who is
# active, which label: coop_groups.method; `thread_rank() == 0` holds in one lane of each group). A branch on it is
# not exact, and it is a choice of lane, not a split on the data's values.
ELECTED = "data:elected"
# A value the compiler fixes that the interpreter could not compute: a template argument it cannot evaluate (an
# enum, a trait), a template parameter its call leaves to a default or to deduction, a `constexpr` of such values.
# It is the same in every thread of the grid: a branch on it never splits a warp, whatever its value.
CONSTANT = "constant"
THREAD_DEPS = frozenset((TID_X, TID_Y, TID_Z))


@dataclass(frozen=True)
class Val:
    v: np.ndarray | None  # per-thread values, or a 0-d array broadcast to all threads; None = unknown
    deps: frozenset[str] = frozenset()
    is_float: bool = False
    # per thread, which shared load (its index in SimResult.accesses) this value is, unchanged, or -1; None where
    # it is none in any thread (Simulator.uses: which threads use what a shared load read)
    loaded: np.ndarray | None = None

    @property
    def known(self) -> bool:
        return self.v is not None

    @property
    def thread_dependent(self) -> bool:
        return bool(self.deps & THREAD_DEPS)

    def params(self) -> set[str]:
        return {d.split(":", 1)[1] for d in self.deps if d.startswith("param:")}


def const(x: float | int, is_float: bool = False) -> Val:
    if not is_float and not _INT64_MIN <= x <= _INT64_MAX:
        # wider than the int64 lanes (a 64-bit hash constant such as 0xbf58476d1ce4e5b9ULL): the same in every
        # thread, but not a value the lanes can hold (wrapped, `>>` would sign-extend what C shifts in as zeros)
        return Val(None, frozenset({UNIFORM}))
    return Val(np.array(x, dtype=np.float64 if is_float else np.int64), frozenset(), is_float)


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def compile_time(v: Val) -> Val:
    """A value bound where the compiler fixes it (a non-type template argument, a `constexpr`): known, it is that
    constant (nothing it was computed from varies); unknown, it is CONSTANT, never loaded data."""
    return Val(v.v, frozenset(), v.is_float) if v.known else Val(None, frozenset({CONSTANT}), v.is_float)


def data_dependent(deps: frozenset[str]) -> bool:
    """Whether a value follows loaded data (uniform or not)."""
    return DATA in deps or UNIFORM in deps


def follows_sample(deps: frozenset[str]) -> bool:
    """Whether a known value is one outcome of loaded data, not the value every run has: per-thread data (DATA)
    or a block-uniform outcome (OUTCOME)."""
    return DATA in deps or OUTCOME in deps


def block_uniform(c: Val) -> bool:
    """Whether an unknown value is the same in every thread of a block: it follows no thread index and no data
    loaded per thread (parameters, block indices, loads from one address)."""
    return not (c.thread_dependent or DATA in c.deps or STAND_IN in c.deps)


def followed(c: Val) -> Val:
    """A condition as the interpreter may follow it: the value of a stand-in (STAND_IN) is not the data's."""
    return Val(None, c.deps, c.is_float) if STAND_IN in c.deps else c


def unknown(*deps: str | frozenset[str]) -> Val:
    out: set[str] = set()
    for d in deps:
        out |= {d} if isinstance(d, str) else set(d)
    return Val(None, frozenset(out) | {DATA} if not out else frozenset(out))


@dataclass(frozen=True)
class Ptr:
    """A pointer (or array) value: which allocation, which memory space, byte offset per thread, element type,
    and for arrays the remaining dimensions (`tile` of `float tile[32][33]` has dims (32, 33))."""

    base: str
    space: str  # global | shared | local | const
    off: Val
    elem: TypeInfo
    dims: tuple[int, ...] = ()
    decl: object | None = None  # the declaration node (for related information and fixes)
    assumed_size: bool = False
    # which allocation, where the name does not say: "extern" for the dynamic shared buffer (every `extern
    # __shared__` name aliases it), `name@helper<args>` for a helper's own `__shared__` array (one per
    # function and template instantiation, whatever its name)
    alloc: str = ""
    # reached through a `volatile` pointer (`volatile uint *s_Data` of a helper): the compiler issues every access
    # as written, neither merging neighbours nor serving a re-read from a register (compiled_accesses)
    volatile: bool = False
    # a local array's elements, where a list initialises it and nothing writes it after (`int stride[] = {h,
    # h * n, 1}`): the compiler keeps each in a register, so an element read at a compile-time index is that
    # value (the 1 is 1, not data loaded from memory); None for any other array or pointer
    initial: tuple[Val, ...] | None = None

    @property
    def key(self) -> str:
        return self.alloc or self.base

    def retyped(self, elem: TypeInfo, assumed_size: bool = False) -> Ptr:
        """The same address seen as another element type (a cast, a typed pointer to an untyped buffer)."""
        return replace(self, elem=elem, dims=(), assumed_size=assumed_size, initial=None)

    def moved(self, byte_delta: Val) -> Ptr:
        return replace(self, off=binop("+", self.off, byte_delta))


def _np(v: np.ndarray, is_float: bool) -> np.ndarray:
    return v.astype(np.float64) if is_float and v.dtype != np.float64 else v


def binop(op: str, a: Val, b: Val) -> Val:
    deps = a.deps | b.deps
    if a.v is None or b.v is None:
        decided = _decided(op, a, b)
        if decided is not None:
            return decided
        return Val(None, deps or frozenset({DATA}), a.is_float or b.is_float)
    is_float = a.is_float or b.is_float
    x, y = _np(a.v, is_float), _np(b.v, is_float)
    with np.errstate(all="ignore"):
        if op == "+":
            r = x + y
        elif op == "-":
            r = x - y
        elif op == "*":
            r = x * y
        elif op in ("/", "%"):
            if not is_float and np.any(y == 0):
                return Val(None, deps | {DATA}, False)
            if is_float:
                r = x / y if op == "/" else np.fmod(x, y)
            else:
                q = np.trunc(np.true_divide(x, y)).astype(np.int64)  # C truncates toward zero
                r = q if op == "/" else x - q * y
        elif op in ("<<", ">>", "&", "|", "^"):
            if is_float:
                return Val(None, deps | {DATA}, False)
            r = {"<<": np.left_shift, ">>": np.right_shift, "&": np.bitwise_and, "|": np.bitwise_or,
                 "^": np.bitwise_xor}[op](x, np.clip(y, 0, 63) if op in ("<<", ">>") else y)
        elif op in ("<", "<=", ">", ">=", "==", "!="):
            r = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                 "==": np.equal, "!=": np.not_equal}[op](x, y).astype(np.int64)
            return Val(r, deps, False)
        elif op == "&&":
            return Val(np.logical_and(x != 0, y != 0).astype(np.int64), deps)
        elif op == "||":
            return Val(np.logical_or(x != 0, y != 0).astype(np.int64), deps)
        else:
            return Val(None, deps | {DATA}, is_float)
    if not is_float and r.dtype != np.int64:
        r = r.astype(np.int64)
    return Val(r, deps, is_float)


def _decided(op: str, a: Val, b: Val) -> Val | None:
    """`0 && x`, `x && 0`, `1 || x`, `x || 1`: the known side decides the outcome in every thread, whatever the
    unknown one holds (`CUBE_MODE && (tc.x < 0)` with CUBE_MODE false is false, not loaded data)."""
    if op not in ("&&", "||"):
        return None
    for side in (a, b):
        if side.v is not None and (np.all(side.v == 0) if op == "&&" else np.all(side.v != 0)):
            return Val(np.array(int(op == "||"), dtype=np.int64), side.deps)
    return None


def select(mask: np.ndarray, new: Val, old: Val | None) -> Val:
    """`new` where mask is set (threads that executed the assignment), else `old`."""
    if old is None or mask.all():
        return new
    loaded = None if new.loaded is None and old.loaded is None else \
        np.where(mask, _loads(new, mask.shape), _loads(old, mask.shape))
    if new.v is None or old.v is None:
        return Val(None, new.deps | old.deps, new.is_float or old.is_float, loaded)
    is_float = new.is_float or old.is_float
    return Val(np.where(mask, _np(new.v, is_float), _np(old.v, is_float)), new.deps | old.deps, is_float, loaded)


def _loads(v: Val, shape: tuple[int, ...]) -> np.ndarray:
    return v.loaded if v.loaded is not None else np.full(shape, -1, dtype=np.int64)


class Dim3:
    """A `dim3` value (`dim3 block(16, 16)`, `block.thread_index()`): only its fields are ever read."""

    def __init__(self, values: list) -> None:
        self.values = [v if isinstance(v, Val) else unknown() for v in values[:3]]
        self.deps = frozenset().union(*(v.deps for v in self.values))

    def field(self, name: str) -> Val:
        return self.values["xyz".index(name)] if name in ("x", "y", "z") else unknown()


def per_thread(v: Val, n: int) -> np.ndarray | None:
    if v.v is None:
        return None
    return np.broadcast_to(v.v, (n,))
