"""The lane interpreter: runs a kernel's body once for every thread of one block at the same time (numpy
vectors), following masks through branches, loops (a few sampled iterations), early returns and inlined
`__device__` helpers, and records what the rules need: memory accesses with per-thread addresses, branches with
per-thread conditions, barriers with the threads that reach them.

Nothing here knows about rules; it is the kernel model's dataflow. Unknown values (loaded data, unresolved
names) stay unknown and say what they depend on, so rules can tell proven facts from data-dependent ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

from cudalens.analysis import coop_groups as cg
from cudalens.analysis import ts_binding as ts
from cudalens.analysis import warp_vote
from cudalens.analysis.running_counts import running_counts
from cudalens.analysis.syntax import find, read_only_array
from cudalens.analysis.types import FLOAT_TYPES, TypeInfo, substitute
from cudalens.analysis.unit import (
    Function,
    Unit,
    callee,
    lambda_params,
    parse_expression,
    pointer_depth,
    template_parameters,
)
from cudalens.analysis.values import (
    BID,
    CONSTANT,
    DATA,
    ELECTED,
    OUTCOME,
    STAND_IN,
    THREAD_DEPS,
    TID_X,
    TID_Y,
    TID_Z,
    UNIFORM,
    Dim3,
    Ptr,
    Val,
    binop,
    block_uniform,
    compile_time,
    const,
    data_dependent,
    followed,
    follows_sample,
    per_thread,
    select,
    unknown,
)

Node = ts.Node
LOOP_SAMPLES = 2  # iterations simulated per loop: enough to see strides, races across iterations, trip counts
# (and as many last ones where the step scales the variable: Simulator.last_iterations)
MAX_INLINE_DEPTH = 4
WARP = 32
_COMPARISONS = frozenset(("<", "<=", ">", ">=", "==", "!="))
_WARP_SIZED_OPS = _COMPARISONS | {"&"}  # the operators that can give a size a warp-sized role (note_warp_sized)
# `shfl.sync.idx.b32 %0, %1, <source lane>, 0x1f, <mask>;`: one lane's value to the whole (32-lane) warp
_SHFL_IDX = re.compile(r"\s*shfl\.sync\.idx\.b32\s+%0\s*,\s*%1\s*,\s*(\d+|0x[0-9a-fA-F]+)\s*,\s*(?:0x1[fF]|31)\s*,"
                       r"\s*(?:0xffffffff|0xFFFFFFFF|-1)\s*;?\s*$")
MAX_SCALED_TRIPS = 64  # a scaled step reaches 0 or overflows within 64 trips of a 64-bit value
MAX_STEPS = 20000
DEFAULT_ELEM = TypeInfo("float", 4, 4)
POINTER_ELEM = TypeInfo("pointer", 8, 8)
_BUILTIN_DIMS = {"threadIdx", "blockIdx", "blockDim", "gridDim"}
_LOAD_INTRINSICS = {"__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv"}
_STORE_INTRINSICS = {"__stcs", "__stcg", "__stwb", "__stwt"}
_BARRIERS = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"}
# the warp collectives whose lanes all arrive before any leaves (Access.collectives)
_WARP_COLLECTIVE = re.compile(r"__(?:shfl(?:_up|_down|_xor)?|ballot|any|all|uni|match_any|match_all|reduce_\w+)_sync")
_PTX_COLLECTIVE = re.compile(r"\b(?:shfl|vote|match|redux)\.sync\b")  # the same in inline PTX
# CUDA's own atomic functions: a helper of that name (`atomicAdd(double*, double)` written with `atomicCAS`) is
# that atomic; a helper of another `atomic…` name (`atomicAggInc`) is followed into
_CUDA_ATOMIC = re.compile(r"atomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)(?:_block|_system)?$")
_NUMBER = re.compile(r"^(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9']+)([uUlL]*)$")


@dataclass
class Access:
    node: Node
    space: str  # global | shared | local | const
    base: str
    write: bool
    atomic: bool
    addr: np.ndarray | None  # byte offset in the allocation, per thread
    size: int
    mask: np.ndarray
    deps: frozenset[str]
    epoch: int
    decl: object | None
    field_name: str | None = None
    struct_size: int | None = None
    assumed_size: bool = False
    order: int = 0
    warp_epoch: int = 0
    # per thread, the warp collectives (`__shfl_xor_sync`, `__ballot_sync`) its whole warp ran before it: every
    # lane reaches one before any leaves it, so a read before one is done before another lane's write after it
    # (CL303). Counted only where every live lane of the warp surely runs it (Simulator.warp_collective)
    collectives: np.ndarray | None = None
    alloc: str = ""  # the allocation (Ptr.key): two arrays of one name in different helpers are two
    # False under a condition the interpreter could not evaluate (both arms, or the loop's body, run with every
    # lane of `mask`): which threads make the access is then a superset, not a fact
    exact_mask: bool = True
    floating: bool = False  # the element is a floating-point type (half, float, float4...)
    # the arms of block-uniform conditions it could not evaluate that it sits in ((the `if`'s start byte, 0 for
    # the consequence, 1 for the else)): every thread of a block takes the same arm, so the mask is exact for a
    # block that gets there, and an access in one arm never meets one in the other arm in the same block
    arms: tuple[tuple[int, int], ...] = ()
    # the expression in a header's helper that makes the access, where `node` is the call it is shown at
    origin: Node | None = None
    # the kernel's own statement that reached an access of a helper of this file (the call that inlined it)
    via: Node | None = None
    volatile: bool = False  # made through a `volatile` pointer (Ptr.volatile)
    # a shared load: the threads of `mask` whose value no thread's code uses (Simulator.uses), None where all do
    unused: np.ndarray | None = None

    @property
    def threads(self) -> np.ndarray:
        """The threads that make the access on the hardware: a load whose value is never used is one nvcc drops
        (or sinks under the condition that uses it: `if (threadIdx.x == 0) use(v)` after `v = s[0]`)."""
        return self.mask if self.unused is None else self.mask & ~self.unused

    @property
    def site(self) -> tuple[int, ...]:
        """Which access of the source this is: its expression, and within a header's helper shown at a call,
        the helper's own expression too (a compare-and-swap's six loads and stores are six sites)."""
        here = (self.node.start_byte, self.node.end_byte)
        return here if self.origin is None else (*here, self.origin.start_byte, self.origin.end_byte)

    @property
    def sampled(self) -> bool:
        """Addresses known for one outcome of a branch on loaded data (see Simulator.forget_assigned), computed
        from a stand-in for a loaded value (values.STAND_IN) or from the lane the data elect (values.ELECTED)."""
        return self.addr is not None and (follows_sample(self.deps) or bool(self.deps & {STAND_IN, ELECTED}))


@dataclass
class Branch:
    node: Node
    kind: str  # if | loop | switch
    cond: np.ndarray | None  # per thread (0/1), meaningful where mask
    mask: np.ndarray
    deps: frozenset[str]
    iteration: int = 0
    # a loop whose variable starts at a lane-dependent value and advances by a uniform step wider than its
    # spread over a warp (`for (i = lane; i < n; i += 32)`): the lanes' trip counts differ by one at most
    strided: bool = False
    at: Node | None = None  # where to report it: the call in this file, for a branch in a header's helper
    # the kernel's own statement that reached a branch of a helper or lambda of this file (the call inlining it)
    via: Node | None = None
    # on a loop's first record: how many times its lanes run the body (the most of any lane), where a counted
    # `for` tells (Simulator.trip_count), and what that number depends on besides the loop's own variable
    trips: int | None = None
    trip_deps: frozenset[str] = frozenset()

    @property
    def thread_dependent(self) -> bool:
        return bool(self.deps & THREAD_DEPS)


@dataclass
class Barrier:
    node: Node
    mask: np.ndarray  # threads that reach it
    alive: np.ndarray  # threads that have not returned
    cond_deps: frozenset[str]  # what the enclosing conditions depend on
    name: str = "__syncthreads"


@dataclass
class SplitCollective:
    """A warp collective that runs once for each distinct label of a partition in a warp (coop_groups.
    runs_per_label): `cg::reduce(labeledGroup, v, cg::greater<int>())` over a partition by loaded data."""

    node: Node
    label: str  # the partition's label as written (`bucket`)
    mask: np.ndarray
    deps: frozenset[str]  # what the label depends on
    via: Node | None = None  # the kernel's own statement that reached it, for one in a helper of this file


@dataclass
class CallSite:
    node: Node
    name: str
    args: list[Val | Ptr]
    mask: np.ndarray


class Cut(Enum):
    """Why a run stopped before the end of the kernel (what it recorded up to there stands)."""

    STEPS = "steps"  # MAX_STEPS statements and expressions: a kernel too long to interpret whole
    RECURSION = "recursion"  # Python's recursion limit: helpers and macros nested too deep to follow


@dataclass
class SimResult:
    block: tuple[int, int, int]
    accesses: list[Access] = field(default_factory=list)
    branches: list[Branch] = field(default_factory=list)
    barriers: list[Barrier] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    split_collectives: list[SplitCollective] = field(default_factory=list)
    shared_arrays: dict[str, Ptr] = field(default_factory=dict)
    truncated: Cut | None = None  # None: the run reached the end of the kernel
    stopped_at: Node | None = None  # the kernel's own statement the run stopped in, when it did
    float_ops: float = 0.0  # floating-point operations per thread (sampled loops count their samples)
    # integer parameters in a role where a size under a warp changes what the lanes do: a mask of thread indices
    # (`tid & (size - 1)`) or a size compared with the warp's width (`size < 32`); see model.small_size_config
    warp_sized: set[str] = field(default_factory=set)


class _Frame:
    def __init__(self, n: int) -> None:
        self.returned = np.zeros(n, dtype=bool)
        self.ret: Val | Ptr | None = None
        self.ret_mask = np.zeros(n, dtype=bool)  # the lanes a `return` with a value has run in
        # a `return` under a condition the interpreter could not evaluate was passed (Simulator.settle_exits):
        # what the conditions depend on, None before; the rest of the function runs as a superset
        self.exit_deps: frozenset[str] | None = None


class _Loop:
    def __init__(self, n: int) -> None:
        self.broken = np.zeros(n, dtype=bool)
        self.continued = np.zeros(n, dtype=bool)
        self.data_skipped = False  # a `continue` on loaded data was passed in this iteration (Simulator.if_statement)
        # a `break` under a condition the interpreter could not evaluate was passed: what the conditions depend
        # on (None before), and the variables as they were before the first one (how many iterations ran, and so
        # what the body assigned, is the data's choice)
        self.exit_deps: frozenset[str] | None = None
        self.exit_before: list[dict[str, Val | Ptr]] | None = None


class Budget(Exception):
    pass


class Simulator:
    def __init__(self, unit: Unit, kernel: Function, block: tuple[int, int, int], params: dict[str, int],
                 template_values: dict[str, int], grid: tuple[int, int, int] = (64, 64, 1),
                 pad: dict[str, int] | None = None, template_types: dict[str, str] | None = None,
                 block_index: tuple[int, int, int] = (1, 1, 1), host_key: str = "") -> None:
        self.pad = pad or {}  # shared arrays whose rows get extra elements (to test a padding fix)
        self.unit, self.kernel = unit, kernel
        bx, by, bz = block
        self.n = n = max(1, min(bx * by * bz, 1024))
        lin = np.arange(n, dtype=np.int64)
        self.builtins = {
            "threadIdx": {"x": Val(lin % bx, frozenset({TID_X})), "y": Val((lin // bx) % by, frozenset({TID_Y})),
                          "z": Val(lin // (bx * by), frozenset({TID_Z}))},
            "blockIdx": {k: Val(np.array(v, dtype=np.int64), frozenset({BID}))
                         for k, v in zip("xyz", block_index, strict=True)},
            "blockDim": {k: const(v) for k, v in zip("xyz", block, strict=True)},
            "gridDim": {k: const(v) for k, v in zip("xyz", grid, strict=True)},
        }
        self.lanes = cg.Lanes(block, grid, n)
        self.params, self.template_values = params, template_values
        self.running_counts = running_counts(unit, kernel, host_key)  # parameters a scan fills before the launch
        self.result = SimResult(block)
        self.scopes: list[dict[str, Val | Ptr]] = [{}]
        self.frames: list[_Frame] = [_Frame(n)]
        self.loops: list[_Loop] = []
        self.cond_deps: list[frozenset[str]] = []
        self.inexact = 0  # how many enclosing conditions are unknown (Access.exact_mask)
        self.arms: list[tuple[int, int]] = []  # enclosing block-uniform unknown conditions' arms (Access.arms)
        self.epoch = 0
        self.warp_epoch = 0
        self.collectives = np.zeros(n, dtype=np.int64)  # replaced, never changed in place (Access.collectives)
        self.skippable = 0  # inside the right side of a `&&` / `||` whose left side is unknown
        self.steps = 0
        self.at: Node | None = None  # the kernel's own statement being run (not an inlined helper's)
        self.order = 0
        self.report_node: Node | None = None  # a macro's call site, while its expansion is evaluated
        self.inline_depth = 0
        self.instance = ""  # the inlined helper and its template arguments (`blockReduce<warpReduceMax>`)
        # the template parameters of the kernel or inlined helper → the arguments' text (`T` → `float`)
        self.template_names: dict[str, str] = dict(template_types or {})
        # the use analysis of shared loads (uses): per load site, the threads whose loaded value was used, and
        # those in which a variable holding it was overwritten or went out of scope
        self.used: dict[tuple[int, ...], np.ndarray] = {}
        self.killed: dict[tuple[int, ...], np.ndarray] = {}
        self.loop_names: dict[tuple[int, int], frozenset[str]] = {}
        self.tagged = False  # a shared load's value was followed: nothing to do before (kernels without shared loads)

    # ---- entry -------------------------------------------------------------------------------------------
    def run(self) -> SimResult:
        for p in self.kernel.params:
            self.scopes[0][p.name] = self._param_value(p.name, p.type_text, p.pointer, pointer_depth(p.node))
        for name, value in self.template_values.items():
            self.scopes[0].setdefault(name, const(value))
        try:
            # sampled values overflow and casts meet NaN as binop's arithmetic does: numpy's RuntimeWarnings
            # reached `cudalens check`'s stderr ("overflow encountered in scalar negative")
            with np.errstate(all="ignore"):
                if self.kernel.body is not None:
                    self.exec(self.kernel.body, np.ones(self.n, dtype=bool))
        except Budget:
            self.result.truncated = Cut.STEPS
        except RecursionError:
            self.result.truncated = Cut.RECURSION
        if self.result.truncated is not None:
            self.result.stopped_at = self.at
        self.uses()
        return self.result

    def _param_value(self, name: str, type_text: str, pointer: bool, depth: int = 1) -> Val | Ptr:
        elem = self.type_info(type_text)
        if pointer and depth > 1:  # `float** x`: its elements are 8-byte pointers
            return Ptr(name, "global", const(0), POINTER_ELEM)
        if pointer:
            return Ptr(name, "global", const(0), elem or DEFAULT_ELEM, assumed_size=elem is None)
        if elem is not None and elem.name in FLOAT_TYPES:
            return unknown(f"param:{name}")
        if name in self.params:
            return Val(np.array(self.params[name], dtype=np.int64), frozenset({f"param:{name}"}))
        return unknown(f"param:{name}")

    # ---- helpers -----------------------------------------------------------------------------------------
    def _tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Budget

    def active(self, mask: np.ndarray) -> np.ndarray:
        m = mask & ~self.frames[-1].returned
        for loop in self.loops[-1:]:
            m = m & ~loop.broken & ~loop.continued
        return m

    def lookup(self, name: str) -> Val | Ptr | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def assign(self, name: str, value: Val | Ptr, mask: np.ndarray, overwrite: bool = False) -> None:
        """`overwrite`: the code's own assignment under conditions the interpreter evaluated, where the lanes of
        `mask` lose the old value; any other replacement keeps a loaded value counted as used (uses)."""
        for scope in reversed(self.scopes):
            if name in scope:
                old = scope[name]
                if isinstance(old, Val) and old.loaded is not None:
                    self.mark(self.killed if overwrite else self.used, old.loaded, mask | self._dead())
                if not isinstance(value, Val) or not isinstance(old, Val):
                    scope[name] = value  # pointers, groups, dim3s: the last assignment wins
                else:
                    scope[name] = select(mask | self._dead(), value, old)
                return
        self.scopes[-1][name] = value

    def _dead(self) -> np.ndarray:
        return self.frames[-1].returned

    # ---- the use analysis of shared loads --------------------------------------------------------------------
    # A shared load whose value no code of a thread uses is not an access of that thread on the hardware: nvcc
    # drops it, or sinks it under the condition of its only use (`v = reduce(v, buf)` returns `buf[0]` to every
    # thread; only `if (threadIdx.x == 0) out[b] = v;` reads it: the PTX loads under that branch). A load's value
    # (Val.loaded) is used where the code reads a variable holding it (identifier) or where it flows into anything
    # but a local variable (it then leaves the analysis and counts as used). It is dead in a thread where every
    # variable holding it was overwritten by the code's own assignment under conditions the interpreter evaluated,
    # or went out of scope, first. Per load site (and kernel statement inlining it), over all its runs: a value of
    # one loop iteration used is the site's value used.
    def moved(self, node: Node, mask: np.ndarray) -> Val | Ptr:
        """The value of an expression assigned to a local variable: a variable holding a loaded value passes it
        on unread (`float v = s[0]; float w = v;`: whether it is used is w's and v's uses)."""
        if not self.tagged:
            return self.eval(node, mask)
        while node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[-1]
        if node.type == "identifier":
            v = self.lookup(ts.text(node))
            if isinstance(v, Val) and v.loaded is not None:
                return v
        return self.eval(node, mask)

    def mark(self, table: dict[tuple[int, ...], np.ndarray], loaded: np.ndarray, threads: np.ndarray) -> None:
        hit = threads & (loaded >= 0)
        for index in np.unique(loaded[hit]).tolist():
            key = _use_key(self.result.accesses[index])
            table[key] = table.get(key, np.zeros(self.n, dtype=bool)) | (hit & (loaded == index))

    def end_scope(self, scope: dict[str, Val | Ptr]) -> None:
        if not self.tagged:
            return
        for value in scope.values():
            if isinstance(value, Val) and value.loaded is not None:
                self.mark(self.killed, value.loaded, np.ones(self.n, dtype=bool))

    def uses(self) -> None:
        """Marks the threads of each shared load whose value no thread used (Access.unused)."""
        if not self.killed:
            return
        for a in self.result.accesses:
            if a.space != "shared" or a.write:
                continue
            key = _use_key(a)
            if key in self.killed:
                dead = a.mask & self.killed[key] & ~self.used.get(key, np.zeros(self.n, dtype=bool))
                a.unused = dead if dead.any() else None

    def node_for_report(self, node: Node) -> Node:
        return self.report_node or node

    def inlined_via(self) -> Node | None:
        """The kernel's own statement being run, while a helper or lambda of this file is inlined into it (what
        happens in a header's helper is shown at the call instead: `report_node`)."""
        return self.at if self.inline_depth and self.report_node is None else None

    # ---- statements --------------------------------------------------------------------------------------
    def exec(self, node: Node, mask: np.ndarray) -> None:
        if not self.inline_depth:
            self.at = node
        self._tick()
        mask = self.active(mask)
        if not mask.any():
            return
        t = node.type
        if t == "compound_statement":
            self.scopes.append({})
            for child in node.named_children:
                self.exec(child, mask)
                mask = self.active(mask)
                if not mask.any():
                    break
            self.end_scope(self.scopes.pop())
        elif t == "declaration":
            self.declaration(node, mask)
        elif t == "alias_declaration":
            self.local_type(node)
        elif t == "expression_statement":
            for child in node.named_children:
                self.eval(child, mask)
        elif t == "if_statement":
            self.if_statement(node, mask)
        elif t == "for_statement":
            self.for_statement(node, mask)
        elif t in ("while_statement", "do_statement"):
            self.while_statement(node, mask, do=t == "do_statement")
        elif t == "return_statement":
            value = node.named_children[0] if node.named_children else None
            frame = self.frames[-1]
            if value is not None:
                frame.ret = self.merged_return(frame, self.eval(value, mask), mask)
            frame.returned = frame.returned | mask
        elif t == "break_statement" and self.loops:
            self.loops[-1].broken |= mask
        elif t == "continue_statement" and self.loops:
            self.loops[-1].continued |= mask
        elif t == "switch_statement":
            self.switch_statement(node, mask)
        elif t in ("labeled_statement",):
            for child in node.named_children[1:]:
                self.exec(child, mask)
        elif t in ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"):
            # the arm the file's macros select (Unit.compiled); the first arm where they cannot tell
            for child in node.named_children:
                if child.type in ("preproc_else", "preproc_elif"):
                    if self.unit.compiled(child):
                        self.exec(child, mask)
                elif (child.type.endswith("statement") or child.type == "declaration") \
                        and self.unit.compiled(child) is not False:
                    self.exec(child, mask)

    def switch_statement(self, node: Node, mask: np.ndarray) -> None:
        """Every case runs with every lane (which lanes take which is not followed), each entered afresh: a
        `break` leaves the switch, not the loop around it, and a `return` or `continue` in a case leaves only
        where every way through the switch leaves (settle_exits), a missing `default` being one way."""
        cond = node.child_by_field_name("condition")
        c = self.eval(cond, mask) if cond is not None else unknown()
        self.record_branch(node, "switch", c, mask)
        body = node.child_by_field_name("body")
        if body is None:
            return
        self.cond_deps.append(c.deps)
        self.inexact += 1  # every case runs with every lane
        start, outer = self.exits(), self.loops
        switch = _Loop(self.n)
        self.loops = [*outer, switch]
        outcomes, default = [], False
        for case in body.named_children:
            value = case.child_by_field_name("value") if case.type == "case_statement" else None
            default |= case.type == "case_statement" and value is None
            self.frames[-1].returned = start[0].copy()
            switch.broken[:], switch.continued[:] = False, False
            for stmt in [s for s in case.named_children if s != value] if case.type == "case_statement" else [case]:
                self.exec(stmt, mask)
            outcomes.append((self.frames[-1].returned.copy(), start[1],
                             None if start[2] is None else start[2] | switch.continued))
        self.loops = outer
        self.inexact -= 1
        self.cond_deps.pop()
        self.settle_exits([*outcomes, *([] if default else [start])], c.deps, None)

    def local_type(self, node: Node) -> None:
        """`using input_t = typename Ktraits::input_t;`: the name spells its target, with the template
        parameters in scope replaced (what the type table then looks up: the traits struct's member type)."""
        name, target = node.child_by_field_name("name"), node.child_by_field_name("type")
        if name is not None and target is not None:
            self.template_names[ts.text(name)] = substitute(ts.text(target), self.template_names)

    def declaration(self, node: Node, mask: np.ndarray) -> None:
        text_head = ts.text(node).split("=")[0]
        type_node = node.child_by_field_name("type")
        type_text = ts.text(type_node) if type_node is not None else "int"
        elem = self.type_info(type_text)
        shared = "__shared__" in text_head
        is_float = elem is not None and elem.name in FLOAT_TYPES
        for d in node.children_by_field_name("declarator"):
            if d.type == "array_declarator" or (d.type == "init_declarator"
                                                and d.child_by_field_name("declarator").type == "array_declarator"):
                arr = d if d.type == "array_declarator" else d.child_by_field_name("declarator")
                name, dims = self.array_dims(arr, mask)
                if name in self.pad and len(dims) > 1:
                    dims = (*dims[:-1], dims[-1] + self.pad[name])
                alloc = "extern" if shared and "extern" in text_head.split() else \
                    f"{name}@{self.instance}" if shared and self.instance else ""
                ptr = Ptr(name, "shared" if shared else "local", const(0), elem or DEFAULT_ELEM, dims, node,
                          assumed_size=elem is None, alloc=alloc,
                          initial=None if shared or len(dims) > 1 else self.table(d, name, node, text_head, mask))
                if shared:
                    self.result.shared_arrays[name] = ptr
                self.scopes[-1][name] = ptr
                continue
            if d.type == "init_declarator":
                target = d.child_by_field_name("declarator")
                value_node = d.child_by_field_name("value")
                name = _ident(target)
                if value_node is None:
                    continue
                if value_node.type == "argument_list" or value_node.type == "initializer_list":
                    self.scopes[-1][name] = self.dim3(value_node, mask, type_text)
                    continue
                value = source = self.moved(value_node, mask)
                if target.type == "pointer_declarator" and isinstance(value, Ptr) and elem is not None \
                        and value.elem.name != elem.name and not value.dims:
                    value = value.retyped(elem)
                if target.type == "pointer_declarator":
                    value = _qualified(value, text_head)
                if isinstance(value, Ptr) and value.base == "extern_shared":
                    value = Ptr(name, value.space, value.off, elem or value.elem, (), node, elem is None,
                                alloc="extern")
                if isinstance(value, Val) and not is_float and value.is_float and value.v is not None:
                    value = Val(np.trunc(value.v).astype(np.int64), value.deps, False, value.loaded)
                if isinstance(value, Val) and is_float:
                    value = Val(None if value.v is None else value.v.astype(np.float64), value.deps, True, value.loaded)
                if not isinstance(value, cg.Group):
                    value = cg.from_type(type_text) or value  # a group made by something we do not follow
                if isinstance(value, Val) and _CONSTEXPR.search(text_head):
                    value = compile_time(value)
                if isinstance(source, Val) and source.loaded is not None and not (
                        isinstance(value, Val) and value.loaded is source.loaded):
                    self.mark(self.used, source.loaded, mask)  # not kept as the loaded value: used here
                self.scopes[-1][name] = value
            elif d.type in ("identifier", "pointer_declarator"):
                name = _ident(d)
                group = cg.from_type(type_text)
                if shared and group is None and d.type == "identifier":
                    alloc = f"{name}@{self.instance}" if self.instance else ""
                    ptr = Ptr(name, "shared", const(0), elem or DEFAULT_ELEM, (), node, elem is None, alloc)
                    self.scopes[-1][name] = _Alias(_Ref(ptr, ptr.off, ptr.elem))  # type: ignore[assignment]
                    continue
                self.scopes[-1][name] = group or unknown("uninitialized")

    def table(self, declarator: Node, name: str, declaration: Node, text_head: str,
              mask: np.ndarray) -> tuple[Val, ...] | None:
        """The elements of a local array that a list of names and literals initialises and nothing writes after
        (values.Ptr.initial), each as a scalar declared alike would be: a `constexpr` one's are compile-time
        values."""
        values = declarator.child_by_field_name("value") if declarator.type == "init_declarator" else None
        block = declaration.parent
        if values is None or values.type != "initializer_list" or block is None or find(values, "memory_read") \
                or not read_only_array(name, block, declarator.end_byte):
            return None
        if any(e.type == "initializer_list" for e in ts.arguments(values)):
            return None  # elements that are structs (`float2 c[] = {{0, 1}}`)
        elements = [self.eval(e, mask) for e in ts.arguments(values)]
        if not all(isinstance(e, Val) for e in elements):
            return None
        return tuple(compile_time(e) if _CONSTEXPR.search(text_head) else e for e in elements)  # type: ignore[arg-type]

    def dim3(self, args: Node, mask: np.ndarray, type_text: str) -> Val | Ptr:
        values = [self.eval(a, mask) for a in ts.arguments(args)]
        if "dim3" in type_text:
            return Dim3(values + [const(1)] * (3 - len(values)))  # type: ignore[return-value]
        return values[0] if values else unknown()

    def array_dims(self, arr: Node, mask: np.ndarray) -> tuple[str, tuple[int, ...]]:
        dims: list[int] = []
        node = arr
        while node is not None and node.type == "array_declarator":
            size = node.child_by_field_name("size")
            v = self.eval(size, mask) if size is not None else None
            dims.append(int(np.max(v.v)) if isinstance(v, Val) and v.v is not None else 0)
            node = node.child_by_field_name("declarator")
        return _ident(node), tuple(reversed(dims))

    def if_statement(self, node: Node, mask: np.ndarray) -> None:
        cond_node = node.child_by_field_name("condition")
        c = self.eval(cond_node, mask) if cond_node is not None else unknown()
        c = followed(c) if isinstance(c, Val) else const(1)
        if any(child.type == "constexpr" for child in node.children):  # `if constexpr (…)`: the compiler's choice
            c = compile_time(c)
        self.record_branch(node, "if", c, mask)
        cons, alt = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
        if alt is not None and alt.type == "else_clause":  # the grammar wraps the else branch's statement
            alt = alt.named_children[0] if alt.named_children else None
        self.cond_deps.append(c.deps)
        if c.v is None:
            before = self.snapshot() if data_dependent(c.deps) else None
            start = self.exits()
            # a loop-variant one may take the other arm next iteration: its arms are not apart across iterations
            uniform = block_uniform(c) and not any(d.startswith("loop:") for d in c.deps)
            self.inexact += not uniform
            self.arms.extend([(node.start_byte, 0)] if uniform else [])
            self.exec(cons, mask)
            taken = self.exits()
            if alt is not None:
                if uniform:
                    self.arms[-1] = (node.start_byte, 1)
                self.restore_exits(start)  # the lanes of the other outcome did not leave in the first arm
                self.exec(alt, mask)
                other = self.exits()
            else:
                other = start
            del self.arms[len(self.arms) - uniform:]
            self.inexact -= not uniform
            self.settle_exits([taken, other], c.deps, before)
            if before is not None:
                self.forget_assigned(before, c.deps, uniform=block_uniform(c))
        else:
            truth = np.broadcast_to(c.v != 0, (self.n,))
            sampled = ELECTED in c.deps  # one sample of the lanes the data elect: not exact
            before = self.snapshot() if sampled else None
            self.inexact += sampled
            self.exec(cons, mask & truth)
            if alt is not None:
                self.exec(alt, mask & ~truth)
            self.inexact -= sampled
            if before is not None:
                self.forget_assigned(before, c.deps)
        self.cond_deps.pop()

    def snapshot(self) -> list[dict[str, Val | Ptr]]:
        return [dict(scope) for scope in self.scopes]

    def exits(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Which lanes have left the function, the innermost loop and its iteration (copies)."""
        loop = self.loops[-1] if self.loops else None
        return (self.frames[-1].returned.copy(), None if loop is None else loop.broken.copy(),
                None if loop is None else loop.continued.copy())

    def restore_exits(self, exits: tuple[np.ndarray, np.ndarray | None, np.ndarray | None]) -> None:
        returned, broken, continued = exits
        self.frames[-1].returned = returned.copy()
        if self.loops and broken is not None and continued is not None:
            self.loops[-1].broken, self.loops[-1].continued = broken.copy(), continued.copy()

    def settle_exits(self, outcomes: list[tuple], deps: frozenset[str],
                     before: list[dict[str, Val | Ptr]] | None) -> None:
        """After every arm of a condition the interpreter could not evaluate ran with every lane (`outcomes`:
        the exits after each, as `exits` gives them): a lane leaves (the function, the loop, the iteration) only
        where it leaves whichever outcome the condition has. `if (in[i] <= 0) return; atomicAdd(count, 1);`:
        the lanes the data keep run what follows, which then runs with every lane, as a superset
        (Access.exact_mask), until the end of what they left (the function, the loop, the iteration), and what
        it computes is one sampled outcome (forget_assigned's marks). An exit in both arms (`if (d) { ...;
        return; } else { ...; return; }`) stays an exit for every lane."""
        def every(i: int) -> np.ndarray:
            return np.logical_and.reduce([o[i] for o in outcomes])

        def some(i: int) -> np.ndarray:
            return np.logical_or.reduce([o[i] for o in outcomes])

        frame = self.frames[-1]
        frame.returned = every(0)
        if not np.array_equal(frame.returned, some(0)):
            if frame.exit_deps is None:
                frame.exit_deps = frozenset()
                self.inexact += 1  # until the function ends (inline; the kernel's own: the end of the run)
            frame.exit_deps |= deps
        if not self.loops or any(o[1] is None or o[2] is None for o in outcomes):
            return
        loop = self.loops[-1]
        loop.broken = every(1)
        if not np.array_equal(loop.broken, some(1)):
            if loop.exit_deps is None:
                loop.exit_deps = frozenset()
                self.inexact += 1  # until the loop ends (Simulator.loop)
            loop.exit_deps |= deps
            loop.exit_before = loop.exit_before if loop.exit_before is not None else before
        loop.continued = every(2)
        if not np.array_equal(loop.continued, some(2)):
            # `if (alpha < 1.0f / 255.0f) continue;`: the data let some lanes skip the rest of the iteration, not
            # all of them
            if not loop.data_skipped:
                loop.data_skipped = True
                self.inexact += 1  # until the iteration ends (Simulator.loop)

    @staticmethod
    def merged_return(frame: _Frame, v: Val | Ptr, mask: np.ndarray) -> Val | Ptr:
        """What the lanes of `mask` return, with what the others returned before. A lane that returns twice ran
        on after a `return` on a condition the interpreter could not evaluate (settle_exits: `if (nlist[m] ==
        target) return true; ... return false;`): which of the two it returns is the data's choice, so a value
        the two disagree on is unknown, not the last one."""
        old, overlap = frame.ret, mask & frame.ret_mask
        frame.ret_mask = frame.ret_mask | mask
        if old is None or isinstance(v, Ptr) or isinstance(old, Ptr):
            return v
        if overlap.any():
            mine, before = per_thread(v, len(mask)), per_thread(old, len(mask))
            if mine is None or before is None or not np.array_equal(mine[overlap], before[overlap]):
                return Val(None, v.deps | old.deps | _exit_marks(frame.exit_deps), v.is_float or old.is_float)
        return select(mask, v, old)

    def returned_value(self, frame: _Frame) -> Val | Ptr:
        """What a helper returns: after a `return` on a condition it could not evaluate (`if (x < 0) return 0;
        return x;`), the value of the outcome the interpreter followed, marked as following that condition."""
        ret = frame.ret if frame.ret is not None else unknown()
        if frame.exit_deps is None or not isinstance(ret, Val):
            return ret
        return Val(ret.v, ret.deps | frame.exit_deps | _exit_marks(frame.exit_deps), ret.is_float)

    def forget_assigned(self, before: list[dict[str, Val | Ptr]], deps: frozenset[str], uniform: bool = False,
                        ) -> None:
        """After code that ran under a condition on loaded data, a variable it assigned holds the old value in
        some threads and the new one in others, as the data decide (`pos = newPos` in a binary search). It keeps
        the value of the outcome the interpreter followed, marked as following the data: what is computed from
        it is one sampled outcome, which rules report as `info`, never as proven. Where every thread of the block
        evaluates the condition alike (`uniform`: `if (b_H[k * n + k] == 0) p--;`), every thread holds the same
        one of the two (values.OUTCOME), not a value of its own."""
        marks = _sample_marks(uniform)
        for scope, old in zip(self.scopes, before, strict=False):
            for name, value in scope.items():
                prior = old.get(name)
                if prior is not None and prior is not value and isinstance(value, Val) and isinstance(prior, Val):
                    scope[name] = Val(value.v, value.deps | prior.deps | deps | marks, value.is_float or prior.is_float,
                                      value.loaded)

    def record_branch(self, node: Node, kind: str, c: Val, mask: np.ndarray, iteration: int = 0) -> Branch:
        # which lanes take a branch on an elected lane is the data's: the sample followed is not the condition
        cond = per_thread(c, self.n) if ELECTED not in c.deps else None
        branch = Branch(node, kind, None if cond is None else cond.copy(), mask.copy(), c.deps, iteration,
                        at=self.report_node, via=self.inlined_via())
        self.result.branches.append(branch)
        return branch

    def for_statement(self, node: Node, mask: np.ndarray) -> None:
        self.scopes.append({})
        init = node.child_by_field_name("initializer")
        if init is not None:
            if init.type == "declaration":
                self.declaration(init, mask)
            else:
                self.eval(init, mask)
        loop_vars = set(self.scopes[-1])
        if init is not None and init.type != "declaration":
            loop_vars |= {_ident(init.child_by_field_name("left"))} if init.type == "assignment_expression" else set()
        self.loop(node, mask, node.child_by_field_name("condition"), node.child_by_field_name("update"),
                  loop_vars)
        self.end_scope(self.scopes.pop())

    def while_statement(self, node: Node, mask: np.ndarray, do: bool) -> None:
        cond = node.child_by_field_name("condition")
        # `while (i < n) { ...; i += blockSize; }` steps `i` as a for loop's update would
        self.loop(node, mask, cond, None, set(), do=do, stepped=_stepped_in_body(cond, node.child_by_field_name("body")))

    def loop(self, node: Node, mask: np.ndarray, cond: Node | None, update: Node | None, loop_vars: set[str],
             do: bool = False, stepped: set[str] | None = None) -> None:
        body = node.child_by_field_name("body")
        entering = self.held_into(node)
        state = _Loop(self.n)
        running = mask.copy()
        deps: frozenset[str] = frozenset()
        # `for (; t2 <= t; t2 += 32)` steps a variable declared before
        stepped = loop_vars | _updated(update) | (stepped or set())
        entry = {name: self.lookup(name) for name in stepped}
        recorded: list[Branch] = []
        strided = False
        before: list[dict[str, Val | Ptr]] | None = None  # the variables when the exit first depended on data
        data_exit: frozenset[str] = frozenset()
        unknown_exit = False  # some iteration's condition could not be evaluated: `running` is a superset since
        iterations = list(range(LOOP_SAMPLES))
        held: dict[str, Val | Ptr] = {}  # outer variables the body assigns, as they were before the last iterations
        position = 0
        ran_body = False
        while position < len(iterations):
            iteration = iterations[position]
            position += 1
            if iteration == 1 and _strided(entry, {name: self.lookup(name) for name in stepped}, mask, running):
                strided = True
                for b in recorded:
                    b.strided = True
            if iteration == 1 and recorded and not do:
                recorded[0].trips, recorded[0].trip_deps = self.trip_count(cond, entry, running)
            for name in loop_vars:
                v = self.lookup(name)
                if isinstance(v, Val):
                    self.assign(name, Val(v.v, v.deps | {f"loop:{name}"}, v.is_float), running)
            if cond is not None and not (do and iteration == 0):
                c = self.eval(cond, running)
                c = followed(c) if isinstance(c, Val) else const(1)
                recorded.append(self.record_branch(node, "loop", c, self.active(running), iteration))
                recorded[-1].strided = strided
                deps = deps | c.deps
                if c.v is None and data_dependent(c.deps):
                    data_exit = data_exit | c.deps
                    before = self.snapshot() if before is None else before
                if c.v is not None:
                    running = running & np.broadcast_to(c.v != 0, (self.n,))
                elif not block_uniform(c):  # a uniform exit: the whole block runs this iteration or none of it
                    unknown_exit = True
            running = running & ~state.broken & ~self.frames[-1].returned
            if not running.any():
                break
            self.loops.append(state)
            self.cond_deps.append(deps)
            state.continued[:] = False
            ran_body = True
            if body is not None:
                self.inexact += unknown_exit
                self.exec(body, running)
                self.inexact -= unknown_exit
            self.cond_deps.pop()
            self.loops.pop()
            state.continued[:] = False
            if state.data_skipped:
                state.data_skipped = False
                self.inexact -= 1
            running = running & ~state.broken
            if update is not None:
                self.eval(update, running)
            if position == LOOP_SAMPLES and running.any():
                tail, held = self.last_iterations(cond, update, body, running)
                iterations += tail
        if recorded and recorded[0].trips is None and not any(b.iteration for b in recorded) and not do:
            recorded[0].trips = int(ran_body)  # it ended before a second iteration
        for name, value in held.items():  # after the loop, the state of the first iterations, as before
            self.assign(name, value, mask)
        if state.exit_deps is not None:  # a `break` on a condition it could not evaluate (settle_exits)
            self.inexact -= 1
            if state.exit_before is not None:
                self.forget_assigned(state.exit_before, state.exit_deps)
        if before is not None:  # how many iterations ran is the data's choice
            self.forget_assigned(before, data_exit)
        for loaded in entering:  # read in iterations the interpreter did not run, maybe (held_into)
            self.mark(self.used, loaded, mask)

    def held_into(self, node: Node) -> list[np.ndarray]:
        """The loaded values that variables hold as a loop starts and the loop names: used, as iterations the
        interpreter does not run may read them (`v = s[j]; for (k = 0; k < 8; ++k) if (k == 5) out[i] = v;`).
        A value the body loads is judged by the iterations that ran, as its accesses are."""
        if not self.tagged:
            return []
        key = (node.start_byte, node.end_byte)  # loops run many times: their names once per run
        names = self.loop_names.get(key)
        if names is None:
            names = self.loop_names[key] = frozenset(ts.text(n) for n in ts.walk(node) if n.type == "identifier")
        return [value.loaded for scope in self.scopes for name, value in scope.items()
                if name in names and isinstance(value, Val) and value.loaded is not None]

    def trip_count(self, cond: Node | None, entry: dict[str, Val | Ptr],
                   running: np.ndarray) -> tuple[int | None, frozenset[str]]:
        """How many times a counted loop (`for (i = a; i < b; i += s)`: its condition compares a variable the
        update steps by one uniform amount with a bound free of side effects) runs its body, the most of the
        lanes that ran the first update (`running`), with what the start, step and bound depend on. Called at
        the second iteration, when the variable holds its stepped value. (None, deps) where it cannot tell."""
        if cond is None or cond.type != "binary_expression" or not _side_effect_free(cond) or not running.any():
            return None, frozenset()
        left, op, right = (cond.child_by_field_name(f) for f in ("left", "operator", "right"))
        if left is None or op is None or right is None:
            return None, frozenset()
        operator = ts.text(op)
        if right.type == "identifier" and ts.text(right) in entry:
            left, right, operator = right, left, _FLIPPED.get(operator, operator)
        name = ts.text(left)
        start, now = entry.get(name), self.lookup(name) if left.type == "identifier" else None
        if operator not in _FLIPPED or not isinstance(start, Val) or not isinstance(now, Val):
            return None, frozenset()
        flops = self.result.float_ops
        bound = self.eval(right, running)
        self.result.float_ops = flops  # a second look at the bound, not work the lanes do
        if not isinstance(bound, Val):
            return None, frozenset()
        deps = frozenset(d for d in start.deps | now.deps | bound.deps if not d.startswith("loop:"))
        if start.v is None or now.v is None or bound.v is None or start.is_float or now.is_float or bound.is_float:
            return None, deps
        a, b = (np.broadcast_to(x.v, running.shape)[running].astype(np.int64) for x in (start, bound))
        step = np.broadcast_to(now.v, running.shape)[running].astype(np.int64) - a
        if np.any(step != step[0]) or step[0] == 0:
            return None, deps
        s = int(step[0])
        if operator in ("<", "<=") and s > 0:
            trips = -((a - b) // s) if operator == "<" else (b - a) // s + 1
        elif operator in (">", ">=") and s < 0:
            trips = -((b - a) // -s) if operator == ">" else (a - b) // -s + 1
        elif operator == "!=" and np.all((b - a) % s == 0) and np.all((b - a) // s >= 0):
            trips = (b - a) // s
        else:
            return None, deps
        return int(np.maximum(trips, 0).max()), deps

    def last_iterations(self, cond: Node | None, update: Node | None, body: Node | None,
                        running: np.ndarray) -> tuple[list[int], dict[str, Val | Ptr]]:
        """The indices of a loop's last iterations, when its step scales its variable (`stride >>= 1`,
        `s *= 2`) by a uniform amount and its condition is uniform: each such iteration puts the lanes at a new
        distance from each other, and the last ones (`stride` 2, 1) are where lanes of one warp meet (a
        bitonic sort's `2 * tid - (tid & (stride - 1))`, a radix-4 transform's `stride` 1). An additive step
        moves every lane alike, and the first iterations already show its pattern. The loop variable is left
        at the first of them; outer variables the body assigns keep their value but are marked as following
        the data (what is computed from them is one sampled outcome), and the returned values are restored
        after the loop. ([], {}) where the loop is not of this kind."""
        if cond is None or not _scales(update) or not _pure(cond) or not _pure(update):
            return [], {}
        stepped = _updated(update)
        if not all(_uniform(self.lookup(name), running) for name in stepped):
            return [], {}
        states: list[dict[str, Val | Ptr]] = []
        start = {name: self.lookup(name) for name in stepped}
        for _ in range(MAX_SCALED_TRIPS):
            c = self.eval(cond, running)
            if not isinstance(c, Val) or not _uniform(c, running):
                break
            if not np.broadcast_to(c.v, (self.n,))[running].all():
                names = _assigned(body) - stepped if body is not None else set()
                held = {n: v for n in names if isinstance(v := self.lookup(n), Val) and v.v is not None}
                first = max(0, len(states) - LOOP_SAMPLES)
                for name, value in (states[first] if states else start).items():
                    self.assign(name, value, running)  # type: ignore[arg-type]
                for name, value in held.items():
                    self.assign(name, Val(value.v, value.deps | {DATA}, value.is_float), running)  # type: ignore[union-attr]
                return [LOOP_SAMPLES + first + k for k in range(len(states) - first)], held
            states.append({name: self.lookup(name) for name in stepped})  # type: ignore[misc]
            self.eval(update, running)
        for name, value in start.items():  # not uniform, or more trips than a scaled step can make
            self.assign(name, value, running)  # type: ignore[arg-type]
        return [], {}

    # ---- expressions -------------------------------------------------------------------------------------
    def eval(self, node: Node | None, mask: np.ndarray) -> Val | Ptr:
        if node is None:
            return unknown()
        self._tick()
        t = node.type
        if t == "number_literal":
            return _number(ts.text(node))
        if t in ("true", "false"):
            return const(1 if t == "true" else 0)
        if t in ("null", "nullptr"):
            return const(0)
        if t == "identifier":
            return self.identifier(node, mask)
        if t == "parenthesized_expression" or t == "condition_clause":
            inner = node.child_by_field_name("value") if t == "condition_clause" else None
            inner = inner or (node.named_children[-1] if node.named_children else None)
            return self.eval(inner, mask)
        if t == "field_expression":
            return self.field_expression(node, mask)
        if t == "subscript_expression":
            ref = self.ref(node, mask)
            return self.load(ref, node, mask) if isinstance(ref, _Ref) else ref
        if t == "pointer_expression":
            op = node.child_by_field_name("operator")
            arg = node.child_by_field_name("argument")
            if op is not None and ts.text(op) == "&":
                ref = self.ref(arg, mask)
                if isinstance(ref, _Ref):
                    return ref.as_ptr()
                # the address of a variable in registers (`&dw` passed to a helper's `float4* pdw`): never null,
                # fixed where the code is compiled; 1 stands for "not null" (`pdw && …`), never an address
                return ref if isinstance(ref, Ptr) else const(1)
            ref = self.ref(node, mask)
            return self.load(ref, node, mask) if isinstance(ref, _Ref) else unknown()
        if t == "binary_expression":
            return self.binary(node, mask)
        if t == "unary_expression":
            op = ts.text(node.child_by_field_name("operator"))
            v = self.eval(node.child_by_field_name("argument"), mask)
            if not isinstance(v, Val):
                return unknown()
            if v.v is None:
                return v
            if op == "-":
                return Val(-v.v, v.deps, v.is_float)
            if op == "!":
                return Val((v.v == 0).astype(np.int64), v.deps)
            if op == "~":
                return Val(~v.v.astype(np.int64), v.deps) if not v.is_float else unknown(v.deps)
            return v
        if t == "conditional_expression":
            c = self.eval(node.child_by_field_name("condition"), mask)
            c = followed(c) if isinstance(c, Val) else const(1)
            truth = np.broadcast_to(c.v != 0, (self.n,)) if c.v is not None else None
            # an arm's assignment (`x = px < c ? (j = 1, r) : (j = 0, -r)`) is made as the data decide, as an if's
            before = self.snapshot() if truth is None and data_dependent(c.deps) else None
            a = self.eval(node.child_by_field_name("consequence"), mask if truth is None else mask & truth)
            b = self.eval(node.child_by_field_name("alternative"), mask if truth is None else mask & ~truth)
            if before is not None:
                self.forget_assigned(before, c.deps, uniform=block_uniform(c))
            if isinstance(a, Val) and isinstance(b, Val) and truth is not None:
                return Val(select(truth, a, b).v, a.deps | b.deps | c.deps, a.is_float or b.is_float)
            return a if isinstance(a, Ptr) else unknown(c.deps, a.deps if isinstance(a, Val) else frozenset())
        if t == "cast_expression":
            return self.cast(ts.text(node.child_by_field_name("type")),
                             self.eval(node.child_by_field_name("value"), mask))
        if t == "call_expression":
            return self.call(node, mask)
        if t == "lambda_expression":
            return _Lambda(node)  # type: ignore[return-value]
        if t == "assignment_expression":
            return self.assignment(node, mask)
        if t == "update_expression":
            arg = node.child_by_field_name("argument")
            op = "+" if "++" in ts.text(node) else "-"
            old = self.eval(arg, mask)
            new = old.moved(const(old.elem.size if op == "+" else -old.elem.size)) if isinstance(old, Ptr) \
                else binop(op, old, const(1))
            self.store(arg, new, mask)
            return old
        if t == "comma_expression":
            self.eval(node.child_by_field_name("left"), mask)
            return self.eval(node.child_by_field_name("right"), mask)
        if t == "sizeof_expression":  # `sizeof(x128)` parses as a parenthesised value: a type the table knows
            tn = node.child_by_field_name("type") or node.child_by_field_name("value")
            info = self.type_info(ts.text(tn).strip("() ")) if tn is not None else None
            return const(info.size) if info is not None else unknown("sizeof")
        if t == "qualified_identifier":
            return self.qualified(node)
        if t == "template_function":  # a variable template's value (`NUM_PASSES<T>`): fixed per instantiation
            name = node.child_by_field_name("name")
            value = self.identifier(name, mask) if name is not None and name.type == "identifier" else None
            return compile_time(value) if isinstance(value, Val) else Val(None, frozenset({CONSTANT}))
        if t == "initializer_list" or t == "argument_list":
            vals = [self.eval(c, mask) for c in node.named_children]
            return vals[0] if len(vals) == 1 else unknown()
        if t == "gnu_asm_expression" and _PTX_COLLECTIVE.search(ts.text(node)):
            self.warp_collective(mask)  # `asm("shfl.sync.bfly.b32 …")`: as `__shfl_xor_sync`
        if t == "gnu_asm_expression" and self.shuffle_asm(node, mask):
            return unknown()
        # anything else (strings, lambdas, new/delete...): evaluate children for their accesses
        for child in node.named_children:
            self.eval(child, mask)
        return unknown()

    def identifier(self, node: Node, mask: np.ndarray) -> Val | Ptr:
        name = ts.text(node)
        v = self.lookup(name)
        if isinstance(v, _Alias):
            return self.load(v.ref(), node, mask)
        if isinstance(v, Val) and v.loaded is not None:  # the code reads the variable: it uses the loaded value
            self.mark(self.used, v.loaded, mask)
            return Val(v.v, v.deps, v.is_float)
        if v is not None:
            return v
        if name == "warpSize":
            return const(32)
        macro = self.unit.macros.get(name)
        if macro is not None and macro.params is None:
            return self.expand(macro.body, node, mask)
        if name in self.unit.constants:
            return self.eval(self.unit.constants[name], mask)
        return unknown(f"name:{name}")

    def expand(self, text: str, call_node: Node, mask: np.ndarray) -> Val | Ptr:
        if self.inline_depth > MAX_INLINE_DEPTH:
            return unknown("macro")
        expr = parse_expression(text) if text else None
        if expr is None:
            return unknown("macro")
        saved = self.report_node
        self.report_node = saved or call_node
        self.inline_depth += 1
        try:
            return self.eval(expr, mask)
        finally:
            self.inline_depth -= 1
            self.report_node = saved

    def field_expression(self, node: Node, mask: np.ndarray) -> Val | Ptr:
        arg = node.child_by_field_name("argument")
        fname = ts.text(node.child_by_field_name("field"))
        if arg is not None and arg.type == "identifier" and ts.text(arg) in _BUILTIN_DIMS \
                and self.lookup(ts.text(arg)) is None:
            return self.builtins[ts.text(arg)].get(fname, unknown())
        ref = self.ref(node, mask)
        if isinstance(ref, _Ref):
            return self.load(ref, node, mask)
        return self.field_value(arg, fname, mask)

    def field_value(self, arg: Node | None, fname: str, mask: np.ndarray) -> Val | Ptr:
        """`arg.fname` where `arg` is no memory the interpreter models (a dim3, a struct in registers)."""
        base = self.eval(arg, mask) if arg is not None else unknown()
        if isinstance(base, Dim3):
            return base.field(fname)
        declared = _declared_type(arg) if arg is not None and arg.type == "identifier" else None
        info = self.type_info(declared) if declared is not None else None
        static = info.static(fname) if info is not None else None
        if static is not None:  # `packed.size` of a `x128 packed`: the type's constant, not the loaded value's
            return const(static)
        return unknown(base.deps if isinstance(base, Val) else frozenset({DATA}))

    def binary(self, node: Node, mask: np.ndarray) -> Val | Ptr:
        op = ts.text(node.child_by_field_name("operator"))
        left = self.eval(node.child_by_field_name("left"), mask)
        if op in ("&&", "||") and isinstance(left, Val) and left.v is not None:
            # C short-circuits: the right side runs only where it decides the outcome
            lv = np.broadcast_to(left.v != 0, (self.n,))
            right = self.eval(node.child_by_field_name("right"), mask & (lv if op == "&&" else ~lv))
        elif op in ("&&", "||"):  # which lanes run the right side is not known
            self.skippable += 1
            right = self.eval(node.child_by_field_name("right"), mask)
            self.skippable -= 1
        else:
            right = self.eval(node.child_by_field_name("right"), mask)
        if isinstance(left, Ptr) and isinstance(right, Val) and op in ("+", "-"):
            scale = const(left.elem.size * (int(np.prod(left.dims[1:])) if len(left.dims) > 1 else 1))
            delta = binop("*", right, scale)
            return left.moved(delta if op == "+" else binop("-", const(0), delta))
        if isinstance(right, Ptr) and isinstance(left, Val) and op == "+":
            return right.moved(binop("*", left, const(right.elem.size)))
        if op in ("==", "!=", "<", ">", "<=", ">=") and (isinstance(left, Ptr) or isinstance(right, Ptr)):
            # `bias != NULL`: whether a parameter is null is the same in every thread
            deps = frozenset(f"param:{p.base}" for p in (left, right) if isinstance(p, Ptr) and p.space == "global")
            deps |= frozenset().union(*(v.deps for v in (left, right) if isinstance(v, Val)))
            return Val(None, deps or frozenset({DATA}))
        if isinstance(left, Ptr) and isinstance(right, Ptr):
            if op == "-":
                return binop("/", binop("-", left.off, right.off), const(left.elem.size))
            return unknown()
        if isinstance(left, Val) and isinstance(right, Val):
            if op in _WARP_SIZED_OPS:
                self.note_warp_sized(op, left, right)
            leader = warp_vote.elected(op, left, right, mask) if op in ("==", "!=") else \
                warp_vote.conjoined(left, right) if op == "&&" else \
                warp_vote.bits_below(left, right, mask) if op == "&" else None
            if leader is not None:
                return leader
            result = binop(op, left, right)
            if result.is_float and op in ("+", "-", "*", "/"):
                self.result.float_ops += float(mask.sum()) / self.n
            return result
        return unknown()

    def note_warp_sized(self, op: str, left: Val, right: Val) -> None:
        """Records the parameters of a block-uniform operand that masks thread indices (`tid & (size - 1)`)
        or is compared with the warp's width (`size < 32`, `n >= warpSize`): SimResult.warp_sized."""
        for a, b in ((left, right), (right, left)):
            if b.v is None or b.thread_dependent or not b.deps:
                continue
            if op == "&" and a.thread_dependent:
                self.result.warp_sized |= b.params()
            elif op in _COMPARISONS and not a.deps and a.v is not None and a.v.ndim == 0 and int(a.v) == WARP:
                self.result.warp_sized |= b.params()

    def cast(self, type_text: str, value: Val | Ptr) -> Val | Ptr:
        info = self.type_info(type_text)
        if "*" in type_text:
            if isinstance(value, Ptr):  # an element type we cannot size (`T*`, T unknown) is assumed a float
                # and `(half2*)&p[i]` of such a `p` keeps the float's byte offsets: its addresses rest on it too
                moved = value.off.deps or value.off.v is None or bool(np.any(value.off.v != 0))
                return value.retyped(info or DEFAULT_ELEM, assumed_size=info is None or (value.assumed_size and moved))
            return value
        if isinstance(value, Val) and info is not None and value.v is not None:
            if info.name in FLOAT_TYPES:
                return Val(value.v.astype(np.float64), value.deps, True)
            return Val(np.trunc(value.v).astype(np.int64), value.deps, False)
        return value

    # ---- memory ------------------------------------------------------------------------------------------
    def ref(self, node: Node, mask: np.ndarray) -> _Ref | Val | Ptr:
        """The memory location an lvalue expression names (or its value when it is not memory)."""
        t = node.type
        if t == "parenthesized_expression" and node.named_children:
            return self.ref(node.named_children[-1], mask)
        if t == "identifier":
            scalar = self.lookup(ts.text(node))
            if isinstance(scalar, _Alias):  # `&count` of a `__shared__ int count;`
                return scalar.ref()
        if t == "subscript_expression":
            base = self.eval(node.child_by_field_name("argument"), mask)
            indices = node.child_by_field_name("indices")
            idx_node = indices.named_children[0] if indices is not None and indices.named_children else None
            index = self.eval(idx_node, mask)
            if not isinstance(base, Ptr):
                return unknown(base.deps if isinstance(base, Val) else frozenset(),
                               index.deps if isinstance(index, Val) else frozenset())
            if not isinstance(index, Val):
                index = unknown()
            if len(base.dims) > 1:
                row = int(np.prod(base.dims[1:])) * base.elem.size
                return replace(base, off=binop("+", base.off, binop("*", index, const(row))), dims=base.dims[1:])
            return _Ref(base, binop("+", base.off, binop("*", index, const(base.elem.size))), base.elem)
        if t == "pointer_expression":
            arg = self.eval(node.child_by_field_name("argument"), mask)
            if isinstance(arg, Ptr):
                return _Ref(arg, arg.off, arg.elem)
            return unknown()
        if t == "field_expression":
            arg = node.child_by_field_name("argument")
            fname = ts.text(node.child_by_field_name("field"))
            op = next((c.type for c in node.children if not c.is_named), ".")  # an anonymous token's type is its text
            if op == "->":
                p = self.eval(arg, mask)
                base = _Ref(p, p.off, p.elem) if isinstance(p, Ptr) else None
            else:
                base = self.ref(arg, mask) if arg is not None and arg.type in (
                    "subscript_expression", "pointer_expression", "field_expression",
                    "parenthesized_expression") else None
            if isinstance(base, _Ref):
                f = base.elem.field(fname)
                if f is not None:
                    offset, ftype = f
                    # a member of a member (`pairs[i].b.w`): the array's element is the outer struct
                    outer = base.struct_size if base.struct_size is not None else \
                        base.elem.size if base.elem.is_struct else None
                    return _Ref(base.ptr, binop("+", base.off, const(offset)), ftype,
                                f"{base.field_name}.{fname}" if base.field_name else fname, outer)
            # not self.eval(node): field_expression asks this method first, and `q.x` of a local `float4 q`
            # went round the two until Python's recursion limit stopped the kernel's analysis there
            return self.field_value(arg, fname, mask) if op != "->" and arg is not None \
                and arg.type == "identifier" else unknown()
        return self.eval(node, mask)

    def load(self, ref: _Ref, node: Node, mask: np.ndarray) -> Val | Ptr:
        self.record(ref, node, mask, write=False)
        value = self.loaded_value(ref, mask)
        if ref.ptr.space == "shared" and not ref.ptr.volatile and mask.any():  # a volatile load is never dropped
            self.tagged = True
            return Val(value.v, value.deps, value.is_float, np.where(mask, len(self.result.accesses) - 1, -1))
        return value

    def loaded_value(self, ref: _Ref, mask: np.ndarray) -> Val:
        is_float = ref.elem.name in FLOAT_TYPES
        element = _element(ref)
        if element is not None:
            return element
        if ref.off.v is not None and (ref.off.v.ndim == 0 or _same(ref.off.v[mask])):
            # one address for every thread: one value for all
            deps = (ref.off.deps - THREAD_DEPS) | {UNIFORM}
            return Val(None, deps, is_float) if is_float else _stand_in(ref.off.v, ref.elem.size, self.n, deps)
        if ref.ptr.space == "shared" or ref.ptr.space == "local":
            return Val(None, ref.off.deps | {DATA}, is_float)
        if ref.off.v is None and ref.off.deps and block_uniform(ref.off):
            # an address not known but the same in every thread (a row a helper we do not see into picked from
            # block-uniform values): one value for all, as above
            return Val(None, ref.off.deps | {UNIFORM}, is_float)
        if not is_float and ref.off.v is not None and _same_per_warp(ref.off.v, mask):
            return _stand_in(ref.off.v, ref.elem.size, self.n, frozenset({DATA}))
        if not is_float and ref.off.v is not None and ref.off.thread_dependent and ref.ptr.base in self.running_counts \
                and not ref.off.deps & {DATA, STAND_IN}:
            # a running count at each thread's own element (a prefix sum a scan filled: running_counts): which
            # items add how much is the data's; the sample followed is every item adding one, element k holding k
            return Val(np.broadcast_to(ref.off.v, (self.n,)) // ref.elem.size, ref.off.deps | {ELECTED})
        return Val(None, frozenset({DATA}), is_float)

    def record(self, ref: _Ref, node: Node, mask: np.ndarray, write: bool, atomic: bool = False) -> None:
        if not mask.any():
            return
        self.order += 1
        self.result.accesses.append(Access(
            node=self.node_for_report(node), space=ref.ptr.space, base=ref.ptr.base, write=write, atomic=atomic,
            # a stand-in's addresses serve only the global coalescing rules (values.STAND_IN)
            addr=None if ref.off.v is None or (STAND_IN in ref.off.deps and ref.ptr.space != "global")
            else np.broadcast_to(ref.off.v, (self.n,)).astype(np.int64),
            size=ref.elem.size, mask=mask.copy(), deps=ref.off.deps, epoch=self.epoch, decl=ref.ptr.decl,
            warp_epoch=self.warp_epoch, collectives=self.collectives,
            field_name=ref.field_name, struct_size=ref.struct_size, assumed_size=ref.ptr.assumed_size,
            order=self.order, alloc=ref.ptr.key, exact_mask=self.inexact == 0, arms=tuple(self.arms),
            floating=ref.elem.name in FLOAT_TYPES, origin=node if self.report_node is not None else None,
            via=self.inlined_via(), volatile=ref.ptr.volatile))

    def store(self, target: Node, value: Val | Ptr, mask: np.ndarray) -> None:
        if target.type == "identifier":
            scalar = self.lookup(ts.text(target))
            if isinstance(scalar, _Alias):
                self.record(scalar.ref(), target, mask, write=True)
            else:
                self.assign(ts.text(target), value, mask, overwrite=self.inexact == 0 and not self.arms)
            return
        ref = self.ref(target, mask)
        if isinstance(ref, _Ref):
            self.record(ref, target, mask, write=True)

    def assignment(self, node: Node, mask: np.ndarray) -> Val | Ptr:
        left = node.child_by_field_name("left")
        op = ts.text(node.child_by_field_name("operator"))
        right_node = node.child_by_field_name("right")
        local = self.tagged and op == "=" and left is not None and left.type == "identifier" \
            and isinstance(self.lookup(ts.text(left)), Val)
        right = self.moved(right_node, mask) if local else self.eval(right_node, mask)
        if op != "=":
            old = self.eval(left, mask)
            if isinstance(old, Ptr) and isinstance(right, Val):
                right = old.moved(binop("*", right, const(old.elem.size if op[0] == "+" else -old.elem.size)))
            elif isinstance(old, Val) and isinstance(right, Val):
                right = binop(op[:-1], old, right)
            else:
                right = unknown()
        self.store(left, right, mask)
        if isinstance(right, Val) and right.loaded is not None and (node.parent is None
                                                                     or node.parent.type != "expression_statement"):
            self.mark(self.used, right.loaded, mask)  # `out[i] = v = s[j]`: the assignment's value is used too
            return Val(right.v, right.deps, right.is_float)
        return right

    # ---- calls -------------------------------------------------------------------------------------------
    def call(self, node: Node, mask: np.ndarray) -> Val | Ptr:
        func = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        arg_nodes = ts.arguments(args_node)
        if func is not None and func.type == "field_expression":  # a method: `block.sync()`, `warp.thread_rank()`
            return self.method_call(func, arg_nodes, node, mask)
        scope, name, targ_nodes = callee(func)
        lam = self.lookup(name) if func is not None and func.type == "identifier" else None
        if isinstance(lam, _Lambda):
            return self.inline_lambda(lam, arg_nodes, mask)
        name = self.template_names.get(name, name)  # `warp_reduction(val)` in `blockReduce<warpReduceMax>`
        if name in ("reinterpret_cast", "static_cast", "const_cast", "dynamic_cast") and arg_nodes:
            return self.cast(ts.text(targ_nodes[0]) if targ_nodes else "", self.eval(arg_nodes[0], mask))
        macro = self.unit.macros.get(name)
        if macro is not None and macro.params is not None:
            body = macro.body
            for param, arg in zip(macro.params, arg_nodes, strict=False):
                body = re.sub(rf"\b{re.escape(param)}\b", f"({ts.text(arg)})", body)
            return self.expand(body, node, mask)
        if cg.is_group_function(name, scope) and self.unit.device_function(name) is None:
            return self.group_function(name, targ_nodes, arg_nodes, node, mask)
        if name in _BARRIERS:
            self.barrier(node, mask, name)
            # `__syncthreads_or(isLastBlock)`: the count, and or and and of a predicate over the whole block,
            # the same in every thread of it (a branch on it splits no warp)
            return Val(None, frozenset({UNIFORM}))
        if name == "__syncwarp":
            self.warp_epoch += 1  # orders the lanes of each warp, not the warps of the block
            return unknown()
        if name == "elect_one_sync" and not arg_nodes:
            # CUTLASS/CuTe's `elect_one_sync()`: true in one lane of each warp (the lowest active one, lane 0 of
            # a whole warp); a branch on it follows the lane, not loaded data. Its definition, where a header
            # holds it, is inline PTX (`elect.sync`) the interpreter cannot follow: the name says what it does
            return Val((np.arange(self.n) % 32 == 0).astype(np.int64), frozenset({TID_X}))
        if len(arg_nodes) == 1 and func is not None and func.type in ("primitive_type", "type_identifier",
                                                                     "sized_type_specifier", "identifier") \
                and self.type_info(name) is not None and self.unit.device_function(name) is None:
            return self.cast(name, self.eval(arg_nodes[0], mask))  # a functional cast: size_t(i), float(x)
        if name in self.unit.shared_accessors:
            return Ptr("extern_shared", "shared", const(0), DEFAULT_ELEM, (), None, True, alloc="extern")
        if name in _LOAD_INTRINSICS and arg_nodes:
            p = self.eval(arg_nodes[0], mask)
            if isinstance(p, Ptr):
                return self.load(_Ref(p, p.off, p.elem), node, mask)
            return unknown()
        if name in _STORE_INTRINSICS and len(arg_nodes) == 2:
            p = self.eval(arg_nodes[0], mask)
            self.eval(arg_nodes[1], mask)
            if isinstance(p, Ptr):
                self.record(_Ref(p, p.off, p.elem), node, mask, write=True)
            return unknown()
        helper = self.unit.device_function(name, len(arg_nodes))
        references = [p.reference for p in helper.params] if helper is not None and \
            self.inline_depth < MAX_INLINE_DEPTH else []
        args = [self.bind(a, mask) if i < len(references) and references[i] else self.eval(a, mask)
                for i, a in enumerate(arg_nodes)]
        self.result.calls.append(CallSite(self.node_for_report(node), name, args, mask.copy()))
        if name.startswith("atomic") and args and isinstance(args[0], Ptr):
            return self.atomic(name, helper, args, node, mask, targ_nodes)
        if _WARP_COLLECTIVE.fullmatch(name):
            self.warp_collective(mask)
        vote = self.warp_vote(name, args, mask)
        if vote is not None:
            return vote
        if name in ("__shfl_sync", "__shfl"):
            broadcast = self.warp_broadcast(args[1:] if name == "__shfl_sync" else args)
            if broadcast is not None:
                return broadcast
        if name in ("min", "max", "umin", "umax", "llmin", "llmax") and len(args) == 2 \
                and all(isinstance(a, Val) and a.v is not None for a in args):
            a, b = args
            fn = np.minimum if "min" in name else np.maximum
            return Val(fn(a.v, b.v), a.deps | b.deps, a.is_float or b.is_float)  # type: ignore[union-attr]
        if name in ("__mul24", "__umul24") and len(args) == 2 and all(isinstance(a, Val) for a in args):
            return binop("*", args[0], args[1])  # type: ignore[arg-type]
        if name in ("abs", "llabs") and len(args) == 1 and isinstance(args[0], Val) and args[0].v is not None:
            return Val(np.abs(args[0].v), args[0].deps, args[0].is_float)
        if helper is not None and self.inline_depth < MAX_INLINE_DEPTH:
            return self.inline(helper, args, mask, node, targ_nodes)
        if helper is not None and syncs_block(self.unit, helper):
            self.barrier(node, mask, "__syncthreads")  # too deep to follow, but its barrier orders our accesses
        return Val(None, _result_deps(args), True)

    def atomic(self, name: str, helper: Function | None, args: list[Val | Ptr], node: Node, mask: np.ndarray,
               targ_nodes: list[Node]) -> Val | Ptr:
        """`atomicAdd(p, v)` and the like: one atomic on `*p` from every lane of `mask`. A helper of this file
        or a header with another `atomic…` name is followed (`atomicAggInc`: one lane of the coalesced group does
        the `atomicAdd`); where it makes no atomic the interpreter sees (a `cuda::atomic_ref`'s load, a pointer
        rebuilt from an integer), its call is taken as that atomic on its first argument."""
        if helper is not None and self.inline_depth < MAX_INLINE_DEPTH and not _CUDA_ATOMIC.match(name):
            before = sum(a.atomic for a in self.result.accesses)
            result = self.inline(helper, args, mask, node, targ_nodes)
            if sum(a.atomic for a in self.result.accesses) > before:
                return result
        ptr = args[0]
        self.record(_Ref(ptr, ptr.off, ptr.elem), node, mask, write=True, atomic=True)  # type: ignore[union-attr]
        return unknown()

    def warp_vote(self, name: str, args: list[Val | Ptr], mask: np.ndarray) -> Val | None:
        """`__activemask()`, `__ballot_sync(m, p)`, `__any_sync`/`__all_sync(m, p)`, `__ffs(m)`, `__popc(m)` and
        their 64-bit forms (warp_vote); None for other calls."""
        exact = self.inexact == 0
        if name == "__activemask" and not args:
            return warp_vote.active_mask(mask, exact, frozenset().union(*self.cond_deps))
        if name == "__ballot_sync" and len(args) == 2 and all(isinstance(a, Val) for a in args):
            return warp_vote.ballot(mask, exact, args[0], args[1])  # type: ignore[arg-type]
        if name in ("__any_sync", "__all_sync") and len(args) == 2 and all(isinstance(a, Val) for a in args):
            return warp_vote.vote(name, mask, exact, args[0], args[1])  # type: ignore[arg-type]
        if name in warp_vote.BIT_FUNCTIONS and len(args) == 1 and isinstance(args[0], Val):
            return warp_vote.bit_function(name, args[0])
        return None

    def shuffle_asm(self, node: Node, mask: np.ndarray) -> bool:
        """Inline PTX that broadcasts one lane's register to its warp, `asm("shfl.sync.idx.b32 %0, %1, 0, 0x1f,
        0xffffffff;" : "=r"(out) : "r"(x))` (a `make_warp_uniform(tid / 32)` helper): `out` gets what
        `__shfl_sync(0xffffffff, x, 0)` would. Whether it was one (other asm is any expression)."""
        template = next((c for c in node.named_children if c.type in ("string_literal", "concatenated_string")),
                        None)
        match = _SHFL_IDX.match(ts.text(template).strip('"')) if template is not None else None
        outputs = [c for c in node.named_children if c.type == "gnu_asm_output_operand_list"]
        inputs = [c for c in node.named_children if c.type == "gnu_asm_input_operand_list"]
        if match is None or len(outputs) != 1 or len(inputs) != 1:
            return False
        out_ops = [c for c in outputs[0].named_children if c.type == "gnu_asm_output_operand"]
        in_ops = [c for c in inputs[0].named_children if c.type == "gnu_asm_input_operand"]
        if len(out_ops) != 1 or len(in_ops) != 1:
            return False
        target = out_ops[0].child_by_field_name("value") or out_ops[0].named_children[-1]
        value = self.eval(in_ops[0].child_by_field_name("value") or in_ops[0].named_children[-1], mask)
        if target.type != "identifier" or not isinstance(value, Val):
            return False
        broadcast = self.warp_broadcast([value, const(int(match.group(1), 0))])
        if broadcast is None:
            return False
        self.assign(ts.text(target), broadcast, mask)
        return True

    def bind(self, arg: Node, mask: np.ndarray) -> Val | Ptr:
        """The argument of a reference parameter: the memory element it names (an _Alias, loaded and stored
        where the helper uses the name), or its value when it names none (a local variable)."""
        r = self.ref(arg, mask)
        return _Alias(r) if isinstance(r, _Ref) else r  # type: ignore[return-value]

    def warp_broadcast(self, args: list[Val | Ptr]) -> Val | None:
        """`__shfl_sync(mask, v, src)` with one source lane for the whole warp: every lane gets lane `src`'s
        value, so a branch on it cannot split the warp. None for other shuffles (a lane-dependent source, a
        width below 32), which the caller treats as any call."""
        if len(args) < 2 or not all(isinstance(a, Val) for a in args[:3]):
            return None
        value, source = args[0], args[1]
        width = args[2].v if len(args) > 2 and args[2].v is not None else 32  # type: ignore[union-attr]
        if source.v is None or np.ndim(source.v) or int(width) != 32:  # type: ignore[union-attr]
            return None
        # loaded data becomes one value per warp (UNIFORM is what a branch on it needs to know)
        deps = (value.deps - THREAD_DEPS - {DATA}) | {UNIFORM} if data_dependent(value.deps) else value.deps  # type: ignore[union-attr]
        if value.v is None:  # type: ignore[union-attr]
            return Val(None, deps - {STAND_IN}, value.is_float)  # type: ignore[union-attr]
        lanes = np.arange(self.n) // 32 * 32 + int(source.v) % 32  # type: ignore[union-attr]
        values = np.broadcast_to(value.v, (self.n,))[np.minimum(lanes, self.n - 1)]  # type: ignore[union-attr]
        return Val(values, deps, value.is_float)  # type: ignore[union-attr]

    def inline(self, callee: Function, args: list[Val | Ptr], mask: np.ndarray, call: Node,
               targ_nodes: list[Node]) -> Val | Ptr:
        scope: dict[str, Val | Ptr] = {}
        for p, a in zip(callee.params, args, strict=False):
            scope[p.name] = a if isinstance(a, cg.Group) else cg.from_type(p.type_text) or _qualified(a, p.type_text)
        names: dict[str, str] = {}
        for param, targ in zip(callee.template_params, targ_nodes, strict=False):
            text = ts.text(targ)
            names[param] = self.template_names.get(text, text)
        scope |= self.template_values_of(callee, targ_nodes, mask)
        saved_instance, saved_names = self.instance, self.template_names
        self.instance, self.template_names = f"{callee.name}<{', '.join(names.values())}>", names
        saved_scopes, saved_loops = self.scopes, self.loops
        self.scopes, self.loops = [saved_scopes[0] | scope], []
        self.frames.append(_Frame(self.n))
        self.inline_depth += 1
        saved_report = self.report_node
        if callee.from_header:  # what happens in a header's helper is shown at the call in this file
            self.report_node = saved_report or call
        try:
            if callee.body is not None:
                self.exec(callee.body, mask)
            ret = self.returned_value(self.frames[-1])
        finally:
            self.inline_depth -= 1
            self.inexact -= self.frames.pop().exit_deps is not None
            self.scopes, self.loops = saved_scopes, saved_loops
            self.report_node = saved_report
            self.instance, self.template_names = saved_instance, saved_names
        return ret

    def template_values_of(self, callee: Function, targ_nodes: list[Node], mask: np.ndarray) -> dict[str, Val]:
        """The values of a helper's non-type template parameters at one call (`calculateMipLevel<CUBE_MODE,
        BIAS_ONLY, FILTER_MODE>(…)`): each argument's, else the parameter's default, else (deduced) a value the
        compiler fixes that is not known here. Each is a compile-time constant of the instantiation (compile_time):
        the same in every thread, never loaded data, whether or not the interpreter can compute it."""
        out: dict[str, Val] = {}
        for i, (param, (kind, default)) in enumerate(zip(callee.template_params, template_parameters(callee.node),
                                                         strict=False)):
            if kind == "type":
                continue
            value = self.template_argument(targ_nodes[i], mask) if i < len(targ_nodes) else \
                self.eval(default, mask) if default is not None else None
            out[param] = compile_time(value) if isinstance(value, Val) else Val(None, frozenset({CONSTANT}))
        return out

    def inline_lambda(self, lam: _Lambda, arg_nodes: list[Node], mask: np.ndarray) -> Val | Ptr:
        """A call of a lambda the kernel defined (`auto idxToElem = [&result](unsigned idx) { switch (idx) ...
        }`): its body runs here, seeing the enclosing scopes (what it captures) and its parameters, as nvcc
        inlines it."""
        params = lambda_params(lam.node)
        args = [self.bind(a, mask) if i < len(params) and params[i].reference else self.eval(a, mask)
                for i, a in enumerate(arg_nodes)]
        body = lam.node.child_by_field_name("body")
        if body is None or self.inline_depth >= MAX_INLINE_DEPTH:
            return Val(None, _result_deps(args), True)
        saved_scopes, saved_loops = self.scopes, self.loops
        self.scopes, self.loops = [*saved_scopes, {p.name: a for p, a in zip(params, args, strict=False)}], []
        self.frames.append(_Frame(self.n))
        self.inline_depth += 1
        try:
            self.exec(body, mask)
            ret = self.returned_value(self.frames[-1])
        finally:
            self.inline_depth -= 1
            self.inexact -= self.frames.pop().exit_deps is not None
            self.scopes, self.loops = saved_scopes, saved_loops
        return ret

    def method_call(self, func: Node, arg_nodes: list[Node], node: Node, mask: np.ndarray) -> Val | Ptr:
        """`obj.name(args)`: a cooperative group's method, a barrier object's wait, or a CUB collective's (a
        barrier); any other method is an unknown value (its arguments are still evaluated for their accesses)."""
        name = ts.text(func.child_by_field_name("field"))
        obj = self.eval(func.child_by_field_name("argument"), mask)
        group = obj if isinstance(obj, cg.Group) else None
        barrier = cg.sync_of(obj, name)
        if barrier is not None:
            self.sync(barrier, node, mask)
            return unknown()
        args = [self.eval(a, mask) for a in arg_nodes]
        made_by = func.child_by_field_name("argument")
        maker = made_by.child_by_field_name("function") if made_by is not None and \
            made_by.type == "call_expression" else None
        collective = cg.collective_sync(ts.text(maker)) if maker is not None else None
        if collective is not None:  # `BlockReduce(temp).Sum(v)`: its barrier, after the inputs are written
            self.sync(collective, node, mask)
            return Val(None, _result_deps(args))
        if group is not None:
            value = cg.method(group, name, self.lanes, self.builtins)
            if value is not None:
                return value  # type: ignore[return-value]
        return Val(None, _result_deps(args))

    def group_function(self, name: str, targ_nodes: list[Node], arg_nodes: list[Node], node: Node,
                       mask: np.ndarray) -> Val | Ptr:
        """`cg::this_thread_block()`, `cg::tiled_partition<32>(block)`, `cg::sync(g)`, `cg::reduce(g, v, op)`."""
        args = [self.eval(a, mask) for a in arg_nodes]
        group = args[0] if args and isinstance(args[0], cg.Group) else None
        if name == "sync":
            self.sync(group.barrier if group is not None else cg.SyncScope.BLOCK, node, mask)
            return unknown()
        if name == "reduce":
            if group is None or len(args) < 2:
                return unknown()
            op_text = ts.text(arg_nodes[2]) if len(arg_nodes) > 2 else ""
            if cg.runs_per_label(group, args[1], op_text):
                self.result.split_collectives.append(SplitCollective(
                    self.node_for_report(node), group.label or "", mask.copy(), group.label_deps,
                    via=self.inlined_via()))
            return cg.reduce(group, args[1], op_text, self.lanes)
        targs = [self.template_argument(t, mask) for t in targ_nodes]
        made = cg.make(name, [t for t in targs if isinstance(t, Val)], args, self.lanes, mask,
                       [ts.text(a) for a in arg_nodes])
        return made if made is not None else unknown()  # type: ignore[return-value]

    def qualified(self, node: Node) -> Val:
        """`x128::size`: a struct's `static constexpr` member; anything else qualified is unknown."""
        scope, name = node.child_by_field_name("scope"), node.child_by_field_name("name")
        info = self.type_info(ts.text(scope)) if scope is not None else None
        value = info.static(ts.text(name)) if info is not None and name is not None else None
        return const(value) if value is not None else unknown(f"name:{ts.text(node)}")

    def type_info(self, type_text: str) -> TypeInfo | None:
        """A type's size and layout, with the template parameters in scope replaced by their arguments."""
        return self.unit.types.lookup(substitute(type_text, self.template_names))

    def template_argument(self, node: Node, mask: np.ndarray) -> Val | Ptr:
        """A template argument's value: `<32>`, `<TILE>` (a macro, constant or template value, which the parser
        reads as a type name)."""
        if node.type == "type_descriptor":
            expr = parse_expression(ts.text(node))
            return self.eval(expr, mask) if expr is not None else unknown()
        return self.eval(node, mask)

    def warp_collective(self, mask: np.ndarray) -> None:
        """A warp collective (`__shfl_xor_sync`): counted for each warp whose every live lane surely runs it (no
        condition the interpreter could not evaluate around it, not behind an unknown `&&`: cuml's
        `(n < N) or __all_sync(…)` is skipped by some lanes)."""
        if self.inexact or self.skippable:
            return
        live = (~self.frames[0].returned).reshape(-1, 32) if self.n % 32 == 0 else None
        if live is None:
            return
        ran = mask.reshape(-1, 32)
        whole = ran.any(axis=1) & (ran == live).all(axis=1)
        if whole.any():
            self.collectives = self.collectives + np.repeat(whole, 32)

    def sync(self, kind: cg.SyncScope, node: Node, mask: np.ndarray) -> None:
        if kind == cg.SyncScope.BLOCK:
            self.barrier(node, mask, "sync")
        else:
            self.warp_epoch += 1

    def barrier(self, node: Node, mask: np.ndarray, name: str) -> None:
        alive = ~self.frames[0].returned
        deps: frozenset[str] = frozenset()
        for d in self.cond_deps:
            deps |= d
        self.result.barriers.append(Barrier(self.node_for_report(node), mask.copy(), alive.copy(), deps, name))
        self.epoch += 1


@dataclass
class _Lambda:
    """A lambda expression held by a variable of the kernel: called, its body is inlined."""

    node: Node


@dataclass
class _Alias:
    """A name for a memory location rather than a value: a `__shared__ int flag;` (every thread's one word) or
    a reference parameter bound to an element (`Comparator(s_key[pos], ...)` for `uint &keyA`). Reading the
    name loads the location where it is read, assigning it stores there: nvcc issues the loads and stores
    where the (inlined) helper uses the reference, and ncu counts them on those lines."""

    target: _Ref

    def ref(self) -> _Ref:
        return self.target


def _qualified(value: Val | Ptr, declared: str) -> Val | Ptr:
    """A pointer bound to a name declared `volatile` (`volatile float *vs = sdata;`, a helper's
    `volatile uint *s_Data`) is volatile from there on (Ptr.volatile)."""
    if isinstance(value, Ptr) and not value.volatile and "volatile" in declared.split():
        return replace(value, volatile=True)
    return value


@dataclass
class _Ref:
    ptr: Ptr
    off: Val
    elem: TypeInfo
    field_name: str | None = None
    struct_size: int | None = None

    def as_ptr(self) -> Ptr:
        return replace(self.ptr, off=self.off, elem=self.elem, dims=())


# a declaration the compiler evaluates (`constexpr bool kCube = MODE == 2;`, `static const int W = 4;`)
_CONSTEXPR = re.compile(r"\bconstexpr\b|\bstatic\s+const\b|\bconst\s+static\b")
_BLOCK_SYNC = re.compile(r"\b__syncthreads\w*\s*\(|\.arrive_and_wait\s*\(")
_GROUP_SYNC = re.compile(r"\.sync\s*\(\s*\)|\bsync\s*\(")
_BLOCK_GROUP = re.compile(r"\bthread_block\b(?!_tile)|\bgrid_group\b|\bthis_grid\b")
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;{}()]*>)?\s*\(")


def _use_key(a: Access) -> tuple[int, ...]:
    """A load site as the use analysis counts it: its expression and the kernel statement that inlined it."""
    return a.site if a.via is None else (*a.site, a.via.start_byte, a.via.end_byte)


def syncs_block(unit: Unit, function: Function, depth: int = 0) -> bool:
    """Whether a helper reaches a block barrier, itself or through the helpers it calls: a `__syncthreads()`,
    a block or grid group's `sync()`, a barrier's `arrive_and_wait()` (for calls the interpreter does not
    follow, too deep, so that their barrier still orders the caller's accesses)."""
    text = ts.text(function.body) if function.body is not None else ""
    if _BLOCK_SYNC.search(text) or (_GROUP_SYNC.search(text) and _BLOCK_GROUP.search(text)):
        return True
    if depth >= MAX_INLINE_DEPTH:
        return False
    names = {m.group(1) for m in _CALLED.finditer(text)} - {function.name}
    return any(h is not None and syncs_block(unit, h, depth + 1) for h in map(unit.device_function, names))


def _updated(update: Node | None) -> set[str]:
    """The variables a for loop's update expression assigns (`i += s`, `++i`, `i += s, j += s`)."""
    if update is None:
        return set()
    if update.type == "comma_expression":
        return _updated(update.child_by_field_name("left")) | _updated(update.child_by_field_name("right"))
    target = update.child_by_field_name("left") if update.type == "assignment_expression" \
        else update.child_by_field_name("argument") if update.type == "update_expression" else None
    return {ts.text(target)} if target is not None and target.type == "identifier" else set()


_SCALING = {">>=", "<<=", "*=", "/="}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}  # `b > i` is `i < b`
_IMPURE = {"call_expression", "subscript_expression", "pointer_expression", "field_expression",
           "assignment_expression", "update_expression"}


def _scales(update: Node | None) -> bool:
    """Whether a for loop's update multiplies, divides or shifts one variable (`s >>= 1`, `s = s / 2`)."""
    if update is None or update.type != "assignment_expression":
        return False
    left, op, right = (update.child_by_field_name(f) for f in ("left", "operator", "right"))
    if left is None or op is None or right is None or left.type != "identifier":
        return False
    if ts.text(op) in _SCALING:
        return True
    return ts.text(op) == "=" and right.type == "binary_expression" and \
        ts.text(right.child_by_field_name("operator")) in (">>", "<<", "*", "/") and \
        ts.text(right.child_by_field_name("left")) == ts.text(left)


def _pure(node: Node) -> bool:
    """No memory access, call or side effect in an expression (an update's own assignment aside)."""
    roots = node.named_children if node.type == "assignment_expression" else [node]
    return not any(n.type in _IMPURE for root in roots for n in ts.walk(root))


_BUILTIN_DIM = re.compile(r"(?:blockDim|gridDim|threadIdx|blockIdx)\s*\.\s*[xyz]")


def _side_effect_free(node: Node) -> bool:
    """`_pure`, and the built-in dimensions (`blockDim.x`) besides: evaluating it records nothing."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "field_expression" and _BUILTIN_DIM.fullmatch(ts.text(n)):
            continue
        if n.type in _IMPURE:
            return False
        stack.extend(n.named_children)
    return True


def _uniform(value: object, running: np.ndarray) -> bool:
    if not isinstance(value, Val) or value.v is None:
        return False
    v = np.broadcast_to(value.v, (len(running),))[running]
    return v.size == 0 or bool(np.all(v == v[0]))


def _assigned(body: Node) -> set[str]:
    """The variables a statement assigns anywhere inside (`x = ...`, `x += ...`, `++x`)."""
    out: set[str] = set()
    for n in ts.walk(body):
        target = n.child_by_field_name("left") if n.type == "assignment_expression" \
            else n.child_by_field_name("argument") if n.type == "update_expression" else None
        if target is not None and target.type == "identifier":
            out.add(ts.text(target))
    return out


def _declared_type(identifier: Node) -> str | None:
    """The type a local variable is declared with in a block around `identifier`, before it (`x128` of `x128
    packed = load128(p);`); None when it is not a local of a block (a parameter, a global)."""
    name = ts.text(identifier)
    node = identifier
    while node.parent is not None and node.type != "function_definition":
        block = node.parent
        if block.type == "compound_statement":
            for statement in block.named_children:
                if statement.start_byte >= node.start_byte:
                    break
                if statement.type == "declaration" and any(
                        _ident(d) == name for d in statement.children_by_field_name("declarator")):
                    type_node = statement.child_by_field_name("type")
                    return ts.text(type_node) if type_node is not None else None
        node = block
    return None


def _stepped_in_body(cond: Node | None, body: Node | None) -> set[str]:
    """The variables of a while loop's condition that its body's own statements update (`i += blockSize;`)."""
    if cond is None or body is None:
        return set()
    names = ts.identifiers(cond)
    statements = body.named_children if body.type == "compound_statement" else [body]
    out: set[str] = set()
    for statement in statements:
        if statement.type == "expression_statement" and statement.named_children:
            out |= _updated(statement.named_children[0]) & names
    return out


def _same(values: np.ndarray) -> bool:
    return values.size > 0 and bool(np.all(values == values[0]))


def _same_per_warp(offsets: np.ndarray, mask: np.ndarray) -> bool:
    """Whether the active lanes of each warp load one address (warps may differ)."""
    n = mask.shape[0]
    offsets = np.broadcast_to(offsets, (n,))
    for start in range(0, n, 32):
        active = offsets[start:start + 32][mask[start:start + 32]]
        if active.size and not np.all(active == active[0]):
            return False
    return True


def _element(ref: _Ref) -> Val | None:
    """The value an element of a table of values (Ptr.initial) holds, read at a compile-time index: the same
    element in every thread, of the array's own type; None for any other read."""
    table, off = ref.ptr.initial, ref.off
    if table is None or off.v is None or off.deps or ref.field_name is not None or ref.elem != ref.ptr.elem:
        return None
    offsets = np.unique(off.v)
    size = max(1, ref.elem.size)
    if len(offsets) != 1 or int(offsets[0]) % size or not 0 <= int(offsets[0]) // size < len(table):
        return None
    return table[int(offsets[0]) // size]


def _stand_in(offsets: np.ndarray, size: int, n: int, deps: frozenset[str]) -> Val:
    """A value per loaded element (values.STAND_IN): equal addresses give equal values, distinct ones small
    distinct-looking integers."""
    elements = np.broadcast_to(offsets, (n,)).astype(np.int64) // max(1, size)
    return Val((elements * 40503 + 17) % 89 + 3, deps | {STAND_IN})


def _strided(entry: dict, now: dict, mask: np.ndarray, stepped: np.ndarray) -> bool:
    """Whether a loop variable went from its entry value to `now` by one uniform step wider than the spread
    of its entry values over the active lanes of any warp (`stepped`: the lanes that ran the update)."""
    for name, before in entry.items():
        after = now.get(name)
        if not (isinstance(before, Val) and isinstance(after, Val)) or before.v is None or after.v is None \
                or not before.thread_dependent or not stepped.any():
            continue  # a variable that starts alike in every lane cannot split a warp's trip counts
        b = np.broadcast_to(before.v, mask.shape)
        steps = np.broadcast_to(after.v, mask.shape)[stepped] - b[stepped]
        if steps.size == 0 or np.any(steps != steps[0]) or steps[0] == 0:
            continue
        pad = -mask.size % 32
        values = np.concatenate([b, np.zeros(pad, b.dtype)]).reshape(-1, 32)
        active = np.concatenate([mask, np.zeros(pad, bool)]).reshape(-1, 32)
        big = np.iinfo(np.int64).max
        highs = np.where(active, values, -big).max(axis=1)
        lows = np.where(active, values, big).min(axis=1)
        spread = int((highs - lows)[active.any(axis=1)].max(initial=0))
        if spread and abs(int(steps[0])) > spread:
            return True
    return False


def _sample_marks(uniform: bool) -> frozenset[str]:
    """How a value known for one outcome of the data is marked: the same in every thread where every thread of
    the block sees the same outcome (values.OUTCOME), else per-thread data."""
    return frozenset({UNIFORM, OUTCOME}) if uniform else frozenset({DATA})


def _exit_marks(deps: frozenset[str] | None) -> frozenset[str]:
    """How a value that rests on an exit under conditions depending on `deps` is marked (_sample_marks)."""
    return _sample_marks(deps is not None and block_uniform(Val(None, deps)))


def _result_deps(args: list) -> frozenset[str]:
    """What the result of a call we do not see into depends on: its arguments; where none of them varies
    between threads or follows per-thread data, the result is the same in every thread."""
    deps = frozenset().union(*(_deps(a) for a in args)) if args else frozenset()
    if args and not deps & (THREAD_DEPS | {DATA}):
        return deps | {UNIFORM}
    return deps | {DATA}


def _deps(value: object) -> frozenset[str]:
    if isinstance(value, Ptr):
        return value.off.deps
    return value.deps if isinstance(value, Val | Dim3) else frozenset()


def _ident(node: Node | None) -> str:
    while node is not None and node.type not in ("identifier", "field_identifier"):
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in node.named_children if c.type == "identifier"), None)
        node = nxt
    return ts.text(node) if node is not None else ""


def _number(text: str) -> Val:
    t = text.replace("'", "")
    m = _NUMBER.match(t)
    if m:
        try:
            return const(int(m.group(1), 0) if not (m.group(1).startswith("0") and m.group(1).isdigit()
                                                     and len(m.group(1)) > 1) else int(m.group(1), 8))
        except ValueError:
            return unknown()
    try:
        return const(float(t.rstrip("fFlL")), is_float=True)
    except ValueError:
        return unknown()
