"""CL303: a shared element written by one thread and accessed by another with no barrier between them."""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import combinations

import numpy as np

from cudalens.analysis.assumptions import ALL_FACTS, Fact
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.model import KernelModel
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.simulate import Access, SimResult
from cudalens.analysis.tickets import ticket_tests

_KEY = 1 << 20  # thread ids stay below this in the packed (unit, thread) keys


def _units(a: Access, unit: int, by_warp: bool) -> tuple[np.ndarray, np.ndarray]:
    """The `unit`-byte pieces an access touches and who touches them: threads, or (after a `__syncwarp()`
    between the two accesses) warps — lanes of one warp are then ordered and cannot race with each other. A load
    only of the threads that use its value (Access.threads)."""
    threads = np.flatnonzero(a.threads)
    addr = a.addr[threads]  # type: ignore[index]
    per = max(1, a.size // unit)
    units = (addr // unit)[:, None] + np.arange(per)[None, :]
    actors = threads // 32 * 32 if by_warp else threads
    return units.ravel(), np.repeat(actors, per)


def conflict(first: Access, second: Access) -> tuple[int, int, int] | None:
    """(byte offset, thread of first, thread of second) where a thread of the second access touches bytes a
    different thread of the first one touched, or None. Bytes, not words: two threads storing the two halves
    of one 4-byte word (`short`, `half` tiles) do not race (stores are byte-granular; racecheck agrees)."""
    # a `__syncwarp()` between them orders the lanes of a warp; a warp collective between a read and a write
    # orders that pair (every lane did its read before the shuffle that every lane left before its write)
    by_warp = first.warp_epoch != second.warp_epoch or (
        not first.write and second.write and collective_between(first, second))
    unit = max(1, min(first.size, second.size))  # both aligned to their sizes: overlap is in whole units
    w1, t1 = _units(first, unit, by_warp)
    w2, t2 = _units(second, unit, by_warp)
    common = np.intersect1d(w1, w2)
    if common.size == 0:
        return None
    k1 = np.unique(w1[np.isin(w1, common)] * _KEY + t1[np.isin(w1, common)])
    k2 = np.unique(w2[np.isin(w2, common)] * _KEY + t2[np.isin(w2, common)])
    both = np.unique(np.concatenate([k1, k2]))
    units, counts = np.unique(both // _KEY, return_counts=True)
    racy = units[counts > 1]
    if racy.size == 0:
        return None
    found = None
    for piece in racy.tolist()[:64]:
        first_threads = k1[k1 // _KEY == piece] % _KEY
        second_threads = k2[k2 // _KEY == piece] % _KEY
        pair = _pair(first_threads, second_threads, cross_warp=True)
        if pair is not None:
            return int(piece) * unit, pair[0], pair[1]
        pair = _pair(first_threads, second_threads, cross_warp=False)
        if pair is not None and found is None:
            found = (int(piece) * unit, *pair)
    return found


def collective_between(first: Access, second: Access) -> bool:
    """Whether every warp that makes both accesses ran a warp collective, all its live lanes together, after
    its lanes made the first and before they make the second (Access.collectives)."""
    if first.collectives is None or second.collectives is None or first.mask.size % 32:
        return False
    both = first.mask.reshape(-1, 32).any(axis=1) & second.mask.reshape(-1, 32).any(axis=1)
    before = np.where(first.mask, first.collectives, -1).reshape(-1, 32).max(axis=1)
    after = np.where(second.mask, second.collectives, np.iinfo(np.int64).max).reshape(-1, 32).min(axis=1)
    return bool(both.any()) and bool((after[both] > before[both]).all())


def _pair(first: np.ndarray, second: np.ndarray, cross_warp: bool) -> tuple[int, int] | None:
    """A thread of the first access and a different one of the second (each keeps its role: the message says
    who writes and who reads), with `cross_warp` from different warps."""
    for b in second[:8].tolist():
        others = first[(first // 32 != b // 32) if cross_warp else (first != b)]
        if others.size:
            return int(others[0]), b
    if cross_warp:  # beyond the first eight: one writer read by the whole block (thread 0 and warp 1's lanes)
        warps = np.unique(first // 32)
        later = second if warps.size > 1 else second[second // 32 != warps[0]]
        if later.size:
            b = int(later[0])
            return int(first[first // 32 != b // 32][0]), b
    return None


def races(run: SimResult) -> dict[tuple[int, int], tuple[Access, Access, tuple[int, int, int]]]:
    """Racing pairs keyed by the later access's site. An atomic is a write that races with a plain access of
    another thread (thread 0 reading a counter the block is still `atomicAdd`ing into), never with another
    atomic."""
    found: dict[tuple[int, int], tuple[Access, Access, tuple[int, int, int]]] = {}
    groups: dict[tuple[str, int], list[Access]] = {}  # per allocation, not per name: see Ptr.alloc
    for a in run.accesses:
        if a.space == "shared" and a.addr is not None:
            groups.setdefault((a.alloc, a.epoch), []).append(a)
    for accesses in groups.values():
        for first, second in combinations(sorted(accesses, key=lambda a: a.order), 2):
            if not (first.write or second.write) or (first.atomic and second.atomic) or _apart(first, second):
                continue
            key = (second.node.start_byte, second.node.end_byte)
            if key in found:
                continue
            hit = conflict(first, second)
            if hit is not None:
                found[key] = (first, second, hit)
    return found


def _apart(first: Access, second: Access) -> bool:
    """In the two arms of one block-uniform condition: no block runs both."""
    arms = dict(first.arms)
    return any(arms.get(node, side) != side for node, side in second.arms)


def _verb(a: Access, past: bool) -> str:
    if a.atomic:
        return "atomically updated" if past else "atomically updates"
    if a.write:
        return "wrote" if past else "writes"
    return "read" if past else "reads"


def _block_and_sizes(kernel: KernelModel, first: Access, second: Access) -> bool:
    """Whether the block is assumed and the racing addresses depend on sampled integer parameters."""
    premises = kernel.context.premises
    if premises is None or not any(a.fact is Fact.BLOCK for a in premises.assumptions):
        return False
    sampled = {a.name for a in premises.assumptions if a.fact is Fact.SIZES}
    return any(d.startswith("param:") and d[6:] in sampled for d in first.deps | second.deps)


class SharedMemoryRace(Rule):
    """## What it does
    Flags a shared-memory access that touches an element another thread of the block wrote (or will write)
    with no `__syncthreads()` between the two accesses: a read-after-write, write-after-read or
    write-after-write hazard, the ones `compute-sanitizer --tool racecheck` reports.

    ## Why is this bad?
    Threads of different warps run in any order, and since Volta even the lanes of one warp are not in
    lockstep: without a barrier the reader may see the old value. The result changes from run to run.

    ## Known problems
    An atomic (`atomicAdd(&count, …)`) races with a plain read or write of the same element by another thread
    (thread 0 reading the total while the block still adds to it), not with other atomics. A plain read
    against atomics is `info`: code also reads a running total on purpose; a plain write (a reset) is not.
    A condition it cannot evaluate but that every thread of a block evaluates alike (`if (v < g.nodes)` with
    `v = blockIdx.x`) leaves the race proven for a block that gets there; accesses in its two arms never race.
    Loops are sampled for two iterations; hazards that need more iterations to appear are missed.
    Accesses whose index depends on loaded data are not judged. Warp-synchronous code that relies on
    `volatile` without `__syncwarp()` is reported: it is a race on current GPUs. When every racing pair is
    inside one warp the message says so, and that a `__syncwarp()` between the accesses orders them. A warp
    collective (`__shfl_xor_sync`, `__ballot_sync`, or the same in inline PTX, `shfl.sync.bfly`) between a read
    and a later write orders those two in a warp: every lane reaches it before any leaves it (a block
    reduction's `partial[0] = v` after the shuffles that combined the lanes' reads of `partial[lane]`). It
    fences no memory, so a write before it and another lane's read after it still race (fixture
    CL3_warp_collectives.cu). Accesses that only the holder of one ticket makes are one thread's and never
    race with each other: behind `if (mine == 0)` where `mine = atomicAdd(&counter, n)` on a counter the block
    shares, unchanged since (fixture CL3_tickets.cu; the definition is analysis/tickets.py, which CL701 reads).
    A race whose addresses mix an assumed block with sampled sizes is `info` and names both: the runs vary
    the two apart, and a launch that sets the block from those sizes (`dim3(hidden / heads, heads)`) can make
    the indices a bijection. A kernel no launch is seen for (a library header) whose template value parameter is
    named as the block's thread count (`BLOCK_THREADS`, `kBlockSize`, `block_size`, `NUM_THREADS`, `CTA_SIZE`)
    is simulated with that many threads in a one-dimensional block, not with a block assumed apart from it: a
    block-strided loop `i += BLOCK_THREADS` then has no two threads on one element (fixture
    CL3_template_block.cu; the findings name the parameter's assumed value).
    A shared load is an access only of the threads whose code uses the value it read: nvcc drops a load whose
    value no code uses, or sinks it under the only condition that uses it (a block reduction that returns
    `buf[0]` to every thread, called twice on one buffer, where only `if (threadIdx.x == 0)` reads the first
    total: the second call's writes race with no one, and racecheck agrees). The value is followed through local
    variables (`v = buf[0]; w = v;`): it is used where the code reads a variable holding it or passes it on to
    anything but a local variable, and unused where every variable holding it was overwritten under conditions
    the analysis evaluated, or went out of scope, first (fixture CL3_unused_loads.cu). A `volatile` load always
    counts. A race that the source has only through such a load (every thread calls `reduce(x, buf)` in a loop
    with no barrier between the calls, and one thread uses the total) is not reported: the program the compiler
    makes has no hazard.

    ## Example
    ```cuda
    smem[threadIdx.x] = in[i];
    out[i] = smem[(threadIdx.x + 1) % blockDim.x];   // reads a neighbour's element: no barrier
    ```

    ## Use instead
    ```cuda
    smem[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = smem[(threadIdx.x + 1) % blockDim.x];
    ```

    ## Fix safety
    No automatic fix: where the barrier goes must keep every thread reaching it (see CL302).

    ## References
    - CUDA C++ Programming Guide, "Synchronization Functions"
    - compute-sanitizer, racecheck tool
    """

    code = "CL303"
    name = "shared-memory-race"
    summary = "Shared element accessed by two threads with no barrier between"
    depends_on = ALL_FACTS  # which threads touch which bytes
    default_severity = Severity.ERROR

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        per_run = [races(run) for run in kernel.runs]
        for key, (first, second, (offset, t1, t2)) in per_run[0].items():
            if ticket_tests(first.node, kernel) & ticket_tests(second.node, kernel):
                continue  # both behind one ticket test: one thread makes both accesses
            guessed = not (first.exact_mask and second.exact_mask)  # under a condition it could not evaluate
            proven = all(key in r for r in per_run) and not (first.sampled or second.sampled or guessed)
            # runs vary an assumed block and sampled sizes one at a time, never the relation between them: a
            # launch that sets the block from the sizes it passes (`dim3(hidden / heads, heads)`) can make
            # indices a bijection that the sampled pair makes collide, so such a race rests on both
            joint = _block_and_sizes(kernel, first, second)
            hazard = ("read-after-write" if first.write and not second.write
                      else "write-after-read" if second.write and not first.write else "write-after-write")
            unproven = "; unproven: a condition on the way to it could not be evaluated, so which threads get " \
                "there is a guess" if guessed else ""
            # a plain read against an atomic: code reads a running total on purpose too (a convergence test
            # that adds every thread's view of the block's partial sum): the race is real, the bug is a reading.
            # A plain write against an atomic (a reset the adds may come before) has no such reading.
            atomic = (first.atomic and not second.write) or (second.atomic and not first.write)
            if atomic:
                unproven += ("; one side is an atomic, and a plain access may be meant to see a partial total: "
                             "a __syncthreads() between them if it must see the whole")
            # every racing pair inside one warp (`_pair` reports a cross-warp one whenever there is one), in every
            # run it was seen in, and with blocks wider than a warp (in a block of one warp every pair is, and a
            # launch the analysis did not see can race across warps): warp-synchronous code, whose fix is a
            # __syncwarp() — a __syncthreads() inside `if (tid < 32)` would hang the block
            seen = [(run, r[key]) for run, r in zip(kernel.runs, per_run, strict=True) if key in r]
            in_a_warp = any(math.prod(run.block) > 32 for run, _ in seen) and all(
                hit[2][1] // 32 == hit[2][2] // 32 for _, hit in seen)
            barrier = (f"no barrier between them (threads {t1} and {t2} are lanes of one warp, which since Volta do "
                       f"not run in lockstep: a __syncwarp() between the two accesses orders them)"
                       if in_a_warp else "no __syncthreads() between them")
            yield kernel.finding(
                type(self), second.node,
                f"Shared-memory race on `{second.base}` ({hazard}): thread {t2} {_verb(second, past=False)}"
                f" the element that thread {t1} {_verb(first, past=True)} through "
                f"`{kernel.text(first.node)}` with {barrier}{unproven}",
                Severity.ERROR if proven and not atomic else Severity.INFO,
                holds=None if joint else [key in r for r in per_run],
                stated=(),  # the two thread ids are an example of the pair, not a count the runs must agree on
                related=((first.node, f"thread {t1} {_verb(first, past=False)} it here"),),
                evidence={"byte_offset": offset, "thread_a": t1, "thread_b": t2},
            )
