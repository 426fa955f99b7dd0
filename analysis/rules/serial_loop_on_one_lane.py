"""CL204: a loop that one lane of a warp runs while the others wait (`if (tid == 0) { for (...) ... }`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import ALL_FACTS, Fact, shape_text
from cudalens.analysis.bounded_cache import remember
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.memory import warps
from cudalens.analysis.model import KernelModel, inlined_from, sites
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.rules.divergent_branch import warp_split
from cudalens.analysis.values import DATA, STAND_IN, UNIFORM, follows_sample

# Fewer trips than this cost no more in series than the log2(32) = 5 shuffle steps that would replace them.
MIN_TRIPS = 6
# ... and a loop of fewer trips than a quarter of the longest loop the whole warp runs is a small part of the
# kernel's time (llm.c's softmax: 7 serial trips against 197 per lane over a 50257-column row, 0.1 % of the
# issued instructions on an H200; the same code over 1024 columns, 16 trips per lane, is 2.5 % and flagged).
SHARE = 4
_LOOPS = ("for_statement",)
_FOLLOWS_DATA = frozenset({DATA, UNIFORM, STAND_IN})


def outer_loops(node) -> list:
    """The `for` loops under `node` that no other loop under it encloses (a lambda's body aside)."""
    found, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type in _LOOPS and n is not node:
            found.append(n)
            continue
        if n.type != "lambda_expression":
            stack.extend(n.named_children)
    return sorted(found, key=lambda n: n.start_byte)


def picks_one(branch) -> bool:
    """Whether the condition names its lane (`tid == 0`, `!lane`, `rank() == 0 && flag`): one lane by design,
    not a comparison that the simulated sizes happen to let one lane pass (`t2 <= t` after a strided loop)."""
    stack = [branch.child_by_field_name("condition")]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if n.type in ("parenthesized_expression", "condition_clause"):
            stack.extend(n.named_children)
        elif n.type == "binary_expression" and ts.text(n.child_by_field_name("operator")) == "&&":
            stack.extend((n.child_by_field_name("left"), n.child_by_field_name("right")))
        elif (n.type == "binary_expression" and ts.text(n.child_by_field_name("operator")) == "==") or (
                n.type == "unary_expression" and ts.text(n).startswith("!")):
            return True
    return False


def names_assumed_template(kernel: KernelModel, branch) -> bool:
    """Whether the condition, or a local it reads (one assignment back), names a template argument no
    instantiation fixes (`threadIdx.x % N == 0` with N assumed 32): which lanes take it is then a guess."""
    premises = kernel.context.premises
    assumed = {a.name for a in premises.assumptions if a.fact is Fact.TEMPLATE} if premises is not None else set()
    if not assumed:
        return False
    body = ts.text(kernel.function.body) if kernel.function.body is not None else ""
    names = set(_IDENT.findall(ts.text(branch.child_by_field_name("condition") or branch)))
    set_to = first_assignments(body)
    for name in list(names):
        names |= set(_IDENT.findall(set_to[name])) if name in set_to else set()
    return bool(names & assumed)


_IDENT = re.compile(r"[A-Za-z_]\w*")
# `name = value;` at every position (a lookahead: `a = b = 1;` holds `b = 1;` too)
_ASSIGNMENT = re.compile(r"(?=\b([A-Za-z_]\w*)\s*=(?!=)\s*([^;]+);)")
_first_assignments: dict[str, dict[str, str]] = {}


def first_assignments(body: str) -> dict[str, str]:
    """Each name's first `name = value;` in a body's text, with the value's text: once per text (a pattern
    compiled per name of each condition cost a scan of the body each)."""
    found = _first_assignments.get(body)
    if found is None:
        found = {}
        for m in _ASSIGNMENT.finditer(body):
            found.setdefault(m.group(1), m.group(2))
        remember(_first_assignments, body, found, 256)
    return found


def reads_memory(run, loop) -> bool:
    """Whether the loop's body loads from shared or global memory (a serial sum over the warps' partial results
    in shared memory, a row read by one thread): work on data the lane does not hold, which the warp's lanes
    can share. A loop that only writes out values the lane already holds in registers (the K results of a
    block reduction, each `atomicAdd`ed to its own address) has nothing to share out but the stores."""
    lo, hi = loop.start_byte, loop.end_byte
    for a in run.accesses:
        if a.write or a.atomic or a.space not in ("shared", "global"):
            continue
        if any(n is not None and lo <= n.start_byte < hi for n in (a.node, a.via)):
            return True
    return False


def _key(node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def header(loop) -> str:
    """`for (int i = 1; i < warpsPerBlock; i++)`: the loop's text up to its body, on one line."""
    body = loop.child_by_field_name("body")
    text = ts.text(loop)[: body.start_byte - loop.start_byte] if body is not None else ts.text(loop)
    return " ".join(text.split())


class SerialLoopOnOneLane(Rule):
    """## What it does
    Flags a `for` loop under a branch that one lane of a warp takes (`if (threadIdx.x == 0)`,
    `if (lane == 0)`, `if (block.thread_rank() == 0)`): that lane runs every iteration in series while the
    other lanes of its warp wait, often with the whole block behind it at the next barrier. The message gives the
    trip count where the code fixes it (a constant, a launch's block, a template's instantiation); otherwise the
    loop's own header, and the finding is `info`.

    ## Why is this bad?
    A warp issues the loop's instructions for one lane: 1/32 of its throughput, for as many iterations as the
    loop runs, and the other warps of the block wait at the barrier that follows. A serial sum or maximum of the
    per-warp partial results by thread 0, or a serial scan, is a common pattern in both hand-written and
    LLM-written kernels; spread over the warp, the same work takes one iteration per 32 items and five shuffle
    steps. ncu counts such lines as divergent (few active threads per instruction issued).

    ## Known problems
    A single lane doing straight-line work (`if (tid == 0) out[blockIdx.x] = sum;`, a warp leader's one
    `atomicAdd` for the warp, a `printf`) is not reported: it costs what it costs on any number of lanes, and
    there is nothing to spread. Neither is a loop whose body loads nothing from shared or global memory (thread 0
    `atomicAdd`ing the 29 sums a block reduction left in its registers, Open3D's odometry: only the stores to
    share out), a loop of fewer than six trips (no longer than the shuffle tree that would replace it), one of
    fewer than a quarter of the trips of the longest loop every lane runs (llm.c's softmax over a 50257-column
    row: 7 serial trips against 197, 0.1 % of the instructions an H200 issues), a `while` or `do` loop (a
    spin-wait, a search), or a loop inside a helper the branch calls. The one lane must be named by the condition
    (`== 0`, `!lane`), not a comparison the sampled sizes let one lane pass, and not through a template argument
    no instantiation fixes. Branches that a few lanes take (`if (tid < 4)`) are CL201's. A trip count that
    follows loaded data or a sampled size, an assumed block or template argument, quotes the loop instead of a
    number and is `info`; so is a fixed trip count whose weight against the rest of the kernel rests on a size no
    launch fixes (the message names it).

    ## Example
    ```cuda
    if (laneId == 0) maxvals[warpId] = maxval;
    __syncthreads();
    if (tid == 0) {
        float val = maxvals[0];
        for (int i = 1; i < warpsPerBlock; i++) val = fmaxf(val, maxvals[i]);
        maxvals[0] = val;
    }
    __syncthreads();
    ```

    ## Use instead
    Let one warp share the loop: each lane takes every 32nd item, and shuffles combine the lanes:
    ```cuda
    if (warpId == 0) {
        float val = laneId < warpsPerBlock ? maxvals[laneId] : -INFINITY;
        for (int o = 16; o > 0; o /= 2) val = fmaxf(val, __shfl_xor_sync(0xffffffff, val, o));
        if (laneId == 0) maxvals[0] = val;
    }
    __syncthreads();
    ```

    ## Fix safety
    No automatic fix: splitting a loop over lanes changes the order of its operations (floating-point sums
    round differently) and needs a combining step.

    ## References
    - CUDA C++ Best Practices Guide, "Branching and Divergence"
    - NVIDIA Developer Blog, "Using CUDA Warp-Level Primitives"
    """

    code = "CL204"
    name = "serial-loop-on-one-lane"
    summary = "Loop that one lane of a warp runs while the other lanes wait"
    depends_on = ALL_FACTS  # which lanes take the branch, and the loop's trip count

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        def keep(b) -> bool:
            return b.kind == "if" and not follows_sample(b.deps) and b.cond is not None

        firsts = [[b for b in run.branches if b.kind == "loop" and b.iteration == 0] for run in kernel.runs]
        for per_run in sites(kernel, "branches", keep).values():
            splits = [warp_split(run) for run in per_run]
            if splits[0] is None or splits[0][0] != 1:
                continue  # (a site the first run never reached has no records there)
            node = per_run[0][0].node
            arm = node.child_by_field_name("consequence")
            if arm is None or not picks_one(node) or names_assumed_template(kernel, node):
                continue
            for loop in outer_loops(arm):
                if not reads_memory(kernel.runs[0], loop):
                    continue  # writing out what the lane holds (`atomicAdd(&sum[i], result[i])` after a reduce)
                finding = self._judge(kernel, node, loop, splits, [
                    [b for b in run if _key(b.node) == _key(loop)] for run in firsts])
                if finding is not None:
                    yield finding
                    break  # one finding a branch: the loop with the work comes first

    def _judge(self, kernel: KernelModel, branch, loop, splits: list, records: list[list]) -> Finding | None:
        if not records[0]:
            return None
        trips = [max((b.trips for b in run), default=None) if run and all(b.trips is not None for b in run)
                 else None for run in records]
        deps = frozenset().union(*(b.trip_deps | b.deps for b in records[0]))
        follows_data = bool(deps & _FOLLOWS_DATA)
        if trips[0] is not None and not follows_data and trips[0] < MIN_TRIPS:
            return None
        if trips[0] is None and not follows_data:
            return None  # not a counted loop (a scaled step, a bound the interpreter cannot evaluate)
        active = splits[0][1]
        waiting = f"the other {active - 1} lanes of its warp wait"
        where = branch.child_by_field_name("condition") or branch
        at = records[0][0].at or where
        related = ((loop, f"the loop: `{header(loop)}`"), *inlined_from(*records[0]))
        sampled = {a.name for a in kernel.context.premises.assumptions if a.fact is Fact.SIZES} \
            if kernel.context.premises is not None else set()
        shares = [parallel_work(run, len(warps(run.block[0] * run.block[1] * run.block[2])), sampled)
                  for run in kernel.runs]
        evidence = {"lanes_taken": 1, "lanes_active": active}
        advice = ("spread the iterations over the warp's lanes (each takes every 32nd; shuffles combine the lanes: "
                  "`__shfl_xor_sync` for a sum or maximum, `__shfl_up_sync` for a scan)")
        free = {d.split(":", 1)[1] for d in deps if d.startswith("param:")} & sampled
        if not follows_data and not free and all(t == trips[0] for t in trips):
            work = [w for w, _ in shares]
            if work[0] is not None and trips[0] * SHARE < work[0]:
                return None  # a small part of what every lane runs anyway (a softmax over 50257 columns)
            holds = [s is not None and s[0] == 1 and t == trips[0] and w is not None and t * SHARE >= w
                     for s, t, w in zip(splits, trips, work, strict=False)]
            block = "" if kernel.block_assumed() else f" with block {shape_text(kernel.configs[0].block)}"
            message = f"One lane runs this loop, {trips[0]} iterations in series{block}, while {waiting}"
            unknown = shares[0][1]
            finding = kernel.finding(type(self), at, f"{message}; {advice}", Severity.WARNING, holds=holds,
                                     stated=trips,
                                     related=related, evidence={**evidence, "trips": trips[0]})
            if finding.severity is not Severity.INFO and unknown:  # the number is the code's; its weight is not
                return kernel.finding(
                    type(self), at, f"{message}; how much of the kernel's time that is depends on {unknown}; "
                    f"{advice}", Severity.INFO, related=related, evidence={**evidence, "trips": trips[0]})
            if finding.severity is not Severity.INFO:
                return finding
        cause = " (its trip count follows loaded data)" if follows_data else \
            f" (its trip count depends on {' and '.join(f'`{n}`' for n in sorted(free))})" if free else ""
        holds = [s is not None and s[0] == 1 and t == trips[0] for s, t in zip(splits, trips, strict=False)]
        return kernel.finding(  # what else it rests on (an assumed block or template argument), judge names
            type(self), at, f"One lane runs this loop, `{header(loop)}`, in series while {waiting}{cause}; "
            f"{advice}", Severity.INFO, holds=holds, stated=(), related=related, evidence=evidence)


def parallel_work(run, warps_in_block: int, sampled: set[str]) -> tuple[int | None, str]:
    """The most iterations of any loop that lanes of a warp run together (not one lane a warp), times those of
    the loops around it, and what that depends on that the code does not fix ("" when nothing): a loop counted
    over a sampled size, or one the interpreter cannot count (a `while`, a bound on loaded data), whose header
    is then named."""
    counted: dict[tuple[int, int], int] = {}
    unknown = ""
    for b in run.branches:
        if b.kind != "loop" or b.iteration != 0 or int(b.mask.sum()) <= warps_in_block:
            continue
        free = sorted(d.split(":", 1)[1] for d in b.trip_deps if d.startswith("param:")
                      and d.split(":", 1)[1] in sampled)
        if b.trips is None or b.trip_deps & _FOLLOWS_DATA or free:
            unknown = unknown or (" and ".join(f"`{n}`" for n in free) if free
                                  else f"the trip count of `{header(b.node)}`")
        else:
            counted[_key(b.node)] = max(counted.get(_key(b.node), 0), b.trips)
    if unknown:
        return None, unknown
    most = 1
    for b in run.branches:
        if b.kind == "loop" and _key(b.node) in counted:
            work, n = counted[_key(b.node)], b.node.parent
            while n is not None:
                work *= counted.get(_key(n), 1) if n.type in _LOOPS else 1
                n = n.parent
            most = max(most, work)
    return most, ""
