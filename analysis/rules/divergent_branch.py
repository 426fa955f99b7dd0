"""CL201: a branch whose condition splits the lanes of a warp, around enough work to matter."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import ALL_FACTS
from cudalens.analysis.coop_groups import is_group_function
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.memory import warps
from cudalens.analysis.model import KernelModel, describe_deps, inlined_from, sites, statement_cost
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.syntax import enclosing_function
from cudalens.analysis.unit import callee
from cudalens.analysis.values import follows_sample

HEAVY_BODY = 3  # statements; shorter bodies are predicated by the compiler at little cost
HEAVY_PART_WARP = 5  # a loop or five statements: a part-warp branch that costs more than its boundary warp


_NOT_SELECTS = {"call_expression", "subscript_expression", "for_statement", "while_statement", "do_statement",
                "return_statement", "break_statement", "continue_statement", "goto_statement"}


_CASTS = frozenset({"static_cast", "reinterpret_cast", "const_cast"})  # conversions, not calls
# Register arithmetic nvcc lowers without a branch (SASS, sm_90): no call, no memory.
_ARITHMETIC_CALLS = frozenset({
    "min", "max", "fminf", "fmaxf", "fabsf", "fabs", "abs", "expf", "__expf", "exp2f", "__exp2f", "fmaf",
    "__fmaf_rn", "__fmul_rn", "__fadd_rn", "__float2half", "__half2float", "__float2bfloat16", "__bfloat162float",
    "__popc", "__popcll", "__clz", "__ffs"}) | _CASTS


def _arithmetic(call) -> bool:
    name = callee(call.child_by_field_name("function"))[1]
    return name in _ARITHMETIC_CALLS or name.startswith("make_")


def _stored(n) -> bool:
    """Whether `n` is the target of a plain `=` (a store, not a read-modify-write)."""
    parent = n.parent
    return parent is not None and parent.type == "assignment_expression" and \
        parent.child_by_field_name("left") == n and ts.text(parent.child_by_field_name("operator")) == "="


def register_only(node, stores: bool = False) -> bool:
    """Whether an if's branches only compute in registers (`t = a; a = b; b = t;`, a sorting network's
    compare-and-swap): no memory access, call, loop or jump in them, a cast being no call. nvcc turns a swap
    into selects; flashinfer's software fp16 rounding (`if (exp == 0xFF) bits = …; else if (exp > 142) bits =
    0x7C00u; … else { … bits = static_cast<uint16_t>(…); }`) it branches over (SASS, sm_90: BRA around one to
    three ALU instructions per arm): either way no lane waits for more than a few register operations.
    With `stores`, plain stores (`out[i] = v;`), returns of what they compute (a decision tree's leaves:
    `if (x > 0.6f) return 0b0110; else return 0b0111;`) and register arithmetic (`fminf`, `__popc`, `make_float3`)
    are allowed too: arms that only compute and write or return, which cost their instructions whether branched or
    predicated (CL203 counts them: data_dependent_branch.operations)."""
    stack = [c for c in (node.child_by_field_name("consequence"), node.child_by_field_name("alternative"))
             if c is not None]
    while stack:
        n = stack.pop()
        if n.type == "call_expression" and (_arithmetic(n) if stores else
                                            callee(n.child_by_field_name("function"))[1] in _CASTS):
            arguments = n.child_by_field_name("arguments")
            stack.extend(arguments.named_children if arguments is not None else ())
            continue
        if stores and n.type in ("subscript_expression", "pointer_expression", "field_expression") and _stored(n):
            stack.extend(c for c in n.named_children if c.type != "field_identifier")
            continue  # the store itself; what its address reads is checked
        if stores and n.type == "return_statement":
            stack.extend(n.named_children)
            continue  # the value is checked as any other
        if n.type in _NOT_SELECTS or (n.type == "pointer_expression" and ts.text(n).startswith("*")) or (
                n.type == "field_expression" and "->" in ts.text(n)):
            return False
        stack.extend(n.named_children)
    return True


_CONTROL_FLOW = {"for_statement", "while_statement", "do_statement", "if_statement", "switch_statement",
                 "return_statement", "break_statement", "continue_statement", "goto_statement"}
# Calls nvcc lowers to code without a branch (checked in SASS, sm_90), so a body of them may be predicated.
# sqrtf and `/` by a variable are not here: IEEE sqrtf and float division keep a slow path behind a branch.
_STRAIGHT_CALLS = frozenset({
    "atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicInc", "atomicDec", "atomicCAS",
    "atomicAnd", "atomicOr", "atomicXor", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__ldg", "aligned_size_t"}) | (_ARITHMETIC_CALLS - {"__popc", "__popcll", "__clz", "__ffs"})


def straight_line(kernel: KernelModel, roots: list, depth: int = 0) -> bool:
    """Whether code is straight-line once helpers are inlined: no loop, nested branch, jump, division by a
    variable, or call that lowers to a branch. nvcc may predicate such an if body instead of branching:
    cuda-samples' globalToShmemAsyncCopy `if (t4x < BLOCK_SIZE) { ...; *A4s = *A4; *B4s = *B4; }` runs
    predicated on an H200 (32 active lanes, 8 predicated on), while HSOpticalFlow's `if (threadIdx.x < by)`
    around four copies into shared memory is branched over (SASS `@P0 BRA`): ptxas's choice. Not straight:
    `cuda::memcpy_async` with a barrier (an elect loop in SASS), `pipe.consumer_wait()` (a switch on the stage
    count), a method or unknown call."""
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n.type in _CONTROL_FLOW or _divides_by_variable(n):
            return False
        if n.type == "call_expression" and not _straight_call(kernel, n, depth):
            return False
        stack.extend(n.named_children)
    return True


def _divides_by_variable(node) -> bool:
    if node.type not in ("binary_expression", "assignment_expression"):
        return False
    operator, right = node.child_by_field_name("operator"), node.child_by_field_name("right")
    return operator is not None and ts.text(operator) in ("/", "/=") and right is not None and \
        right.type != "number_literal"


def ends_kernel(kernel: KernelModel, node) -> bool:
    """Whether the if is the kernel's last statement: nvcc then retires the lanes that skip the body (`@P0 EXIT`
    in SASS for every straight-line body tried, sm_90), and the body runs on the taken lanes alone."""
    body = kernel.function.body
    statements = [c for c in body.named_children if c.type != "comment"] if body is not None else []
    return node.parent == body and bool(statements) and statements[-1] == node


def _straight_call(kernel: KernelModel, call, depth: int) -> bool:
    scope, name, _ = callee(call.child_by_field_name("function"))
    args = call.child_by_field_name("arguments")
    arg_nodes = args.named_children if args is not None else []
    if name in _STRAIGHT_CALLS or name.startswith("make_"):
        return True
    if name == "memcpy_async" and arg_nodes:  # a pipeline's copy is one cp.async; a barrier's an elect loop
        return "pipeline" in _declaration(kernel, ts.text(arg_nodes[-1]))
    helper = kernel.unit.device_function(name, len(arg_nodes)) if scope is None and "." not in name else None
    if helper is None or depth >= 3:
        return False
    statements = [c for c in helper.body.named_children if c.type != "comment"]
    if statements and statements[-1].type == "return_statement":  # the helper's own exit, not a branch
        statements = statements[:-1] + statements[-1].named_children
    return straight_line(kernel, statements, depth + 1)


def _declaration(kernel: KernelModel, name: str) -> str:
    """The type of the kernel's parameter `name`, or the text of its local declaration ("" if none): enough to
    tell a `cuda::pipeline` (`auto pipe = cuda::make_pipeline();` names it too) from a `cuda::barrier`."""
    for p in kernel.function.params:
        if p.name == name:
            return p.type_text
    stack = [kernel.function.body] if kernel.function.body is not None else []
    while stack:
        n = stack.pop()
        if n.type == "declaration" and any(_declares(d, name) for d in n.children_by_field_name("declarator")):
            return ts.text(n)
        stack.extend(n.named_children)
    return ""


def _declares(declarator, name: str) -> bool:
    while declarator is not None and declarator.type != "identifier":
        declarator = declarator.child_by_field_name("declarator")
    return declarator is not None and ts.text(declarator) == name


def warp_lanes(branches: list) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(lanes taking the branch, lanes at it) of each simulated warp, for every recorded pass with a known
    condition."""
    for b in branches:
        if b.cond is None:
            continue
        for w in warps(len(b.mask)):
            active = b.mask[w]
            yield (b.cond[w] != 0) & active, active


def whole_warp_takes(branches: list) -> bool:
    """Whether some warp takes the branch with all its active lanes (then the split warps are the boundary)."""
    return any(active.any() and taken.sum() == active.sum() for taken, active in warp_lanes(branches))


def warp_split(branches: list) -> tuple[int, int, bool] | None:
    """(lanes taking the branch, active lanes, taken lanes not contiguous) of the first divergent warp."""
    for taken, active in warp_lanes(branches):
        n_taken, n_active = int(taken.sum()), int(active.sum())
        if 0 < n_taken < n_active:
            lanes = np.flatnonzero(taken)
            return n_taken, n_active, bool(lanes[-1] - lanes[0] + 1 != lanes.size)
    return None


def block_takers(branches: list) -> int:
    """The most lanes of the block that take the branch in one pass: under a warp's 32 (`lane < warps`,
    `tid < 3`), there is no more work than the lanes already doing it."""
    return max((int(((b.cond != 0) & b.mask).sum()) for b in branches if b.cond is not None), default=0)


def every_warp_alike(branches: list) -> bool:
    """Whether every warp with lanes at the branch has as many of them taking it (`tid % 4 == 0`), rather than
    a split that differs from warp to warp (a triangular matmul's `row <= col`)."""
    return len({int(taken.sum()) for taken, active in warp_lanes(branches) if active.any()}) <= 1


_FOLDS = frozenset({"__shfl_down_sync", "__shfl_xor_sync", "__shfl_up_sync"})


def _shuffle(node, names: frozenset[str]) -> str | None:
    """The variable a call of one of `names` exchanges (`__shfl_xor_sync(m, x, 8)` → "x"), or None."""
    if node.type != "call_expression":
        return None
    args = node.child_by_field_name("arguments")
    arg_nodes = args.named_children if args is not None else []
    if callee(node.child_by_field_name("function"))[1] in names and len(arg_nodes) >= 2 and \
            arg_nodes[1].type == "identifier":
        return ts.text(arg_nodes[1])
    return None


_LIBRARY_FOLDS = frozenset({"Reduce", "Sum"})  # cub/hipcub WarpReduce and BlockReduce: the result in each group's lane 0


def _library_fold(node) -> str | None:
    """The variable a library reduction folds (`WarpReduce(tmp).Reduce(x, op)` → "x", `cg::reduce(g, x, op)`
    → "x"), or None."""
    if node.type != "call_expression":
        return None
    function, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
    arg_nodes = args.named_children if args is not None else []
    if function.type == "field_expression":
        field, target = function.child_by_field_name("field"), function.child_by_field_name("argument")
        folds = field is not None and ts.text(field) in _LIBRARY_FOLDS and "Reduce" in ts.text(target)
        first = arg_nodes[0] if folds and arg_nodes else None
    else:
        scope, name, _ = callee(function)
        folds = name == "reduce" and is_group_function(name, scope)
        first = arg_nodes[1] if folds and len(arg_nodes) >= 2 else None
    return ts.text(first) if first is not None and first.type == "identifier" else None


def exchange_tail(kernel: KernelModel, node) -> bool:
    """Whether an `if` without `else` is each lane's share of a warp exchange, with no work for the lanes that
    skip it: a loop-free body that either finishes a shuffle reduction's result (`partial +=
    __shfl_down_sync(…, partial, 16); if (member == 0) out[i] = f(partial);` — the skipping lanes' values were
    folded into the taking lanes', one result per taking lane; a library's reduction alike: `x =
    WarpReduce(tmp).Reduce(x, op)` over groups of 8, `cg::reduce(tile, x, op)`) or makes, without storing to memory, a value
    that a `__shfl_sync` afterwards hands to the other lanes (one lane per group loads what its group shares).
    A loop in the body (a leader that writes many outputs) is work the idle lanes could share: not a tail."""
    body = node.child_by_field_name("consequence")
    function = enclosing_function(node)
    scope = function.child_by_field_name("body") if function is not None else None
    if body is None or node.child_by_field_name("alternative") is not None or scope is None:
        return False
    loops = [n for n in ts.walk(body) if n.type in ("for_statement", "while_statement", "do_statement")]
    runs_once = {(b.node.start_byte, b.node.end_byte) for b in kernel.runs[0].branches
                 if b.kind == "loop" and b.trips == 1}
    if any((n.start_byte, n.end_byte) not in runs_once for n in loops):
        return False
    temps: dict[str, str] = {}  # `float t = __shfl_down_sync(m, x, 16);` → t: x
    folded: set[str] = set()
    for n in ts.walk(scope):
        if n.end_byte > node.start_byte:
            continue
        if n.type == "init_declarator" and n.child_by_field_name("value") is not None:
            source = _shuffle(n.child_by_field_name("value"), _FOLDS)
            if source is not None:
                temps[ts.text(n.child_by_field_name("declarator"))] = source
        elif n.type == "assignment_expression":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            if left is None or right is None or left.type != "identifier":
                continue
            target = ts.text(left)
            names = ts.identifiers(right)
            from_shuffle = any(target in (_shuffle(c, _FOLDS), _library_fold(c)) for c in ts.walk(right)) or any(
                temps.get(t) == target for t in names)
            if from_shuffle and (ts.text(n.child_by_field_name("operator")) != "=" or target in names):
                folded.add(target)
    if folded & ts.identifiers(body):
        return True
    stores = any(a.write and a.space in ("global", "shared") and body.start_byte <= a.node.start_byte
                 and a.node.end_byte <= body.end_byte for a in kernel.runs[0].accesses)
    made = {ts.text(n.child_by_field_name("left")) for n in ts.walk(body) if n.type == "assignment_expression"}
    shared_after = {_shuffle(n, frozenset({"__shfl_sync"})) for n in ts.walk(scope) if n.start_byte >= node.end_byte}
    return not stores and bool(made & shared_after)


class DivergentBranch(Rule):
    """## What it does
    Flags an `if`/`switch` whose condition differs between lanes of the same warp and that guards real work
    (several statements or a loop).

    ## Why is this bad?
    A warp executes both sides of a divergent branch one after the other, with the lanes of the other side
    idle: a heavy body under `threadIdx.x % 2` runs at half throughput. Interleaved patterns also keep every
    warp busy where a contiguous split (`threadIdx.x < n/2`) would retire whole warps.

    ## Known problems
    A bare bounds check (`if (i < n)`), a branch on the warp index (`threadIdx.x / 32`) and a single lane
    doing a short epilogue (`if (lane == 0) out[w] = sum;`) are not reported: they cost little or nothing.
    Neither is an `if` without `else` taken by contiguous lanes (`if (tid < k) { ... }`): the other lanes
    have nothing to run, and only the one warp that straddles `k` is split — unless no warp takes it whole
    and the body is heavy (a loop: `if (warp == 0 && lane < nwarps) { for ... }`), where the work itself runs
    on part of a warp; when the whole block has fewer lanes with that work than a warp (the 8 warp sums of a
    block scan), the message says so and advises nothing: there is no work for the idle lanes. A warp id that
    inline PTX broadcasts from lane 0 (`asm("shfl.sync.idx.b32 %0, %1, 0, 0x1f, 0xffffffff;" ...)`, generated
    Hopper kernels' `make_warp_uniform(tid / 32)`) counts as the warp id, as `__shfl_sync(…, x, 0)` does, so
    `warp == 0 && lane < 16` is 16 lanes of one warp (fixture CL2_asm_broadcast.cu). The tail of a warp
    exchange is not reported either: a loop-free body that finishes a shuffle reduction's result (`partial +=
    __shfl_down_sync(…, partial, 16); if (member == 0) { … out[i] = partial …; }` — the skipping lanes' values
    were folded into the taking lanes', one result per taking lane; a library's reduction alike: cub's
    `WarpReduce(tmp).Reduce(x, op)` over groups of 8 leaves each group's result in its lane 0, as `cg::reduce`
    does), or that makes, storing nothing to memory,
    a value a later `__shfl_sync` hands to the other lanes (one load per 16-lane group, shared): the idle lanes
    hold no work to take on. A loop in the body (a leader zero-filling 16 outputs) is work they could share,
    and is still reported (fixture CL2_reduction_tail.cu). Without
    `else`, interleaved lanes are reported (every warp runs the body at part throughput).
    Short bodies are not reported either: nvcc turns them into predicated instructions, and the warp does not
    diverge (the interleaved reduction `if (tid % (2 * s) == 0) s[tid] += s[tid + s];` measures 32 active
    lanes on an H200; its cost is the idle predicated lanes and the bank conflicts, not divergence), nor
    are bodies that only move values between variables (a compare-and-swap: selects). Conditions on loaded
    data are not reported: their divergence depends on the data. A branch taken by a single lane
    (`if (threadIdx.x == 0) { ... }`) is the block's deliberate serial part and is not reported here; a loop
    in it is CL204's (serial-loop-on-one-lane).
    A longer body that is still straight-line code (no loop, nested branch, jump, division by a variable, or
    call that lowers to a branch; `__device__` helpers are looked into) is `info`, not proven: nvcc may
    predicate it too, and whether it does is ptxas's choice, not the source's. cuda-samples'
    globalToShmemAsyncCopy `if (t4x < BLOCK_SIZE) { ...; *A4s = *A4; *B4s = *B4; }` and its two
    `cuda::memcpy_async(..., pipe)` (one cp.async each) run predicated on an H200 (32 active lanes, 8 of them
    predicated on: the lanes idle, but no warp diverges), while the same sample's bodies with
    `pipe.consumer_wait()` (a switch in SASS) or `cuda::memcpy_async(..., barrier)` (an elect loop) are
    branched over, with 8 active lanes, and stay `warning`. So does a straight-line `if` that ends the kernel:
    nvcc retires the lanes that skip it (`@P0 EXIT`). tests/analysis/test_divergent_branch_predication.py
    checks each case against nvcc's SASS. `__device__` helpers and lambdas the kernel defines are inlined
    where they are called, so a branch inside one is judged with the caller's lanes, and the finding names each
    call that reached it as a related place: nvcc's line table may count an inlined copy on the call's line
    (shfl_scan's `idxToElem` lambda, called four times, has its `switch` counted on its own line for three calls
    and on the call's line for the fourth, on an H200; fixture CL2_inlined_calls.cu).

    ## Example
    ```cuda
    for (int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    ```

    ## Use instead
    Map the work to contiguous lanes so whole warps take the same path:
    ```cuda
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    ```

    ## Fix safety
    No automatic fix: remapping work to lanes changes the algorithm.

    ## References
    - CUDA C++ Best Practices Guide, "Branching and Divergence"
    - Mark Harris, "Optimizing Parallel Reduction in CUDA"
    """

    code = "CL201"
    name = "divergent-branch"
    summary = "Branch that splits the lanes of a warp around non-trivial work"
    depends_on = ALL_FACTS  # which lanes of a warp take the branch

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        def keep(b) -> bool:
            return b.kind in ("if", "switch") and not follows_sample(b.deps) and b.cond is not None

        for per_run in sites(kernel, "branches", keep).values():
            splits = [warp_split(run) for run in per_run]
            if splits[0] is None:
                continue
            node = per_run[0][0].node
            body_cost = sum(statement_cost(node.child_by_field_name(f)) for f in ("consequence", "alternative")) \
                if node.type == "if_statement" else statement_cost(node.child_by_field_name("body"))
            taken, active, interleaved = splits[0]
            if taken == 1:
                continue  # one lane doing the block's serial part (`if (threadIdx.x == 0)`) is deliberate
            if body_cost < HEAVY_BODY or (node.type == "if_statement" and register_only(node)):
                continue  # nvcc predicates short bodies and turns swaps into selects: the lanes stay active
            one_path = node.type == "if_statement" and node.child_by_field_name("alternative") is None
            part_warp = one_path and not interleaved
            if part_warp and (body_cost < HEAVY_PART_WARP or any(whole_warp_takes(run) for run in per_run)):
                continue  # `if (tid < k) {...}`: the other lanes have nothing to run; only the warp at k is split
            if one_path and exchange_tail(kernel, node):
                continue  # the tail of a warp exchange: each taking lane holds one result, the others none
            cond = node.child_by_field_name("condition") or node
            arms = [node.child_by_field_name(f) for f in ("consequence", "alternative")]
            predicable = node.type == "if_statement" and not ends_kernel(kernel, node) and straight_line(
                kernel, [a for a in arms if a is not None])
            proven = all(s is not None for s in splits) and not predicable
            severity = Severity.WARNING if proven else Severity.INFO
            deps = describe_deps(per_run[0][0].deps)
            if part_warp:
                items = block_takers(per_run[0])
                advice = (f"the block has only {items} lanes with this work, fewer than a warp: no other lane has "
                          "any of it to take on" if items < 32 else "spread the work over the warp's lanes")
                message = (f"Part of a warp does this work: {taken} of {active} lanes take the branch (the "
                           f"condition depends on {deps}) and no warp takes it whole, so the body runs with "
                           f"{active - taken} lanes idle; {advice}")
            elif one_path:
                alike = every_warp_alike(per_run[0])
                which = "every warp" if alike else "a warp (other warps differ)"
                who = "each warp runs" if alike else "the warps it splits run"
                message = (f"Interleaved branch: {taken} of {active} lanes of {which} take it (the condition "
                           f"depends on {deps}), so {who} the body with the other lanes idle; map the "
                           "work to contiguous lanes so whole warps skip it")
            else:
                pattern = "interleaved " if interleaved else ""
                message = (f"Divergent branch: {taken} of {active} {pattern}lanes of a warp take it (the condition "
                           f"depends on {deps}), so the warp runs both paths one after the other")
            evidence = {"lanes_taken": taken, "lanes_active": active, "body_statements": body_cost}
            if predicable:
                message += (f"; unproven: the body is straight-line code, which nvcc may predicate instead of "
                            f"branching (then no warp diverges, though {active - taken} lanes idle through it)")
                evidence["straight_line"] = True
            yield kernel.finding(type(self), per_run[0][0].at or cond, message, severity,
                                 holds=[s is not None for s in splits], stated=[s and s[:2] for s in splits],
                                 related=inlined_from(*per_run[0]), evidence=evidence)
