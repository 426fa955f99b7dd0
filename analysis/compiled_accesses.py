"""What the compiler does to memory accesses before the hardware sees them, so that bank conflicts and
coalescing are judged on the instructions that run: neighbouring shared accesses the compiler can prove
adjacent are merged into one wide access (`buf[2*t]` and `buf[2*t+1]` become one 8-byte access), and a read
of the element the same thread has just written (or, in global memory, read or written earlier, with no store
through another pointer in between) is served from a register. All were seen on an H200 (sm_90, nvcc -O3): without them the
analyzer reported conflicts and uncoalesced lines that ncu did not measure (llm.c's softmax_forward_kernel1:
`maxval = inp_row[j]` after `inp_row[j] > maxval` issues no load). Accesses through a `volatile` array or
pointer (cuda-samples scan's `volatile uint *s_Data`) are issued as written."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import numpy as np

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.simulate import Access, SimResult
from cudalens.analysis.syntax import enclosing_loop, find, loop_invariant

SiteKey = tuple[int, ...]
MAX_WIDTH = 16  # bytes: the widest shared load/store (LDS.128)
MAX_READS_KEPT = 16  # the loads a re-read is compared with


def _site(a: Access) -> SiteKey:
    return a.site


def _volatile(a: Access) -> bool:
    return a.volatile or (a.decl is not None and "volatile" in ts.text(a.decl))  # type: ignore[arg-type]


def _same_lanes(a: Access, b: Access) -> bool:
    return a.epoch == b.epoch and a.warp_epoch == b.warp_epoch and np.array_equal(a.mask, b.mask)


def _adjacent(a: Access, b: Access) -> bool:
    if a.write != b.write or a.size != b.size or a.size * 2 > MAX_WIDTH or not _same_lanes(a, b):
        return False
    m = a.mask
    return bool(np.all(b.addr[m] == a.addr[m] + a.size) and np.all(a.addr[m] % (2 * a.size) == 0))  # type: ignore[index]


def _unforwarded(accesses: list[Access]) -> list[Access]:
    """The accesses of one array less the reads of exactly what the same threads wrote or read before them
    with no barrier between, whether one store wrote it or several under a branch (`if (c) S[k] = 0; else
    S[k] = f(S[k]); row_l += S[k];`: llm.c's attention_forward_kernel2, no load on the H200), or a read
    before in the same loop body (a compare-and-swap's `t = keyA` after `if (keyA > keyB)`: cuda-samples'
    sortingNetworks, no load on that line on the H200)."""
    kept: list[Access] = []
    written: np.ndarray | None = None  # lanes whose latest store to the array is known, and at which address
    where: np.ndarray | None = None
    read: list[Access] = []  # the loads since the barrier: their values stay in registers
    loops: dict = {}
    epoch = warp_epoch = -1
    for a in accesses:
        if (a.epoch, a.warp_epoch) != (epoch, warp_epoch):
            written, where, (epoch, warp_epoch) = None, None, (a.epoch, a.warp_epoch)
            read = []
        if a.write:
            if written is None:
                written, where = np.zeros(len(a.mask), bool), np.zeros(len(a.mask), np.int64)
            written = written | a.mask
            where = np.where(a.mask, a.addr, where)  # type: ignore[arg-type]
            kept.append(a)
            continue
        m = a.mask
        if written is not None and bool(np.all(written[m])) and bool(np.array_equal(where[m], a.addr[m])):  # type: ignore[index]
            continue
        if any(_same_elements(b, a) and _loop_of(_written_at(b), loops) == _loop_of(_written_at(a), loops)
               for b in read[-MAX_READS_KEPT:]):
            continue  # not across loops: a row of run-time length read again in the next loop is reloaded
        read.append(a)
        kept.append(a)
    return kept


def _merge_pass(accesses: list[Access]) -> list[Access]:
    """Merge site pairs that are adjacent in every instance (a pair adjacent only for some loop sample, like
    `s[i]` and `s[i + stride]` at stride 1, is not adjacent to the compiler)."""
    pair_counts: dict[tuple[SiteKey, SiteKey], int] = {}
    site_counts: dict[SiteKey, int] = {}
    for a in accesses:
        site_counts[_site(a)] = site_counts.get(_site(a), 0) + 1
    for a, b in pairwise(accesses):
        if _adjacent(a, b):
            key = (_site(a), _site(b))
            pair_counts[key] = pair_counts.get(key, 0) + 1
    merged = {k for k, n in pair_counts.items()
              if n == site_counts[k[0]] == site_counts[k[1]] and k[0] != k[1]}
    if not merged:
        return accesses
    firsts = {k[0]: k[1] for k in merged}
    out: list[Access] = []
    skip_next = False
    for a, b in zip(accesses, [*accesses[1:], None], strict=False):
        if skip_next:
            skip_next = False
            continue
        if b is not None and firsts.get(_site(a)) == _site(b) and _adjacent(a, b):
            out.append(replace(a, size=a.size * 2))
            skip_next = True
        else:
            out.append(a)
    return out


def shared_instructions(run: SimResult) -> list[Access]:
    """The run's shared-memory accesses as the compiler would issue them (see the module docstring)."""
    by_base: dict[tuple[str, str], list[Access]] = {}
    for a in run.accesses:
        if a.space == "shared" and a.addr is not None and not a.atomic:
            by_base.setdefault((a.alloc, a.base), []).append(a)
    out: list[Access] = []
    for accesses in by_base.values():
        out.extend(a for a in accesses if _volatile(a))  # issued as written (a volatile array or pointer)
        kept = _unforwarded([a for a in accesses if not _volatile(a)])
        for _ in range(2):  # 4-byte pairs, then 8-byte pairs into 16-byte accesses
            kept = _merge_pass(kept)
        out.extend(kept)
    return sorted(out, key=lambda a: a.order)


def _written_at(a: Access):
    """The expression that makes the access: in a header's helper, the helper's own, not the call's."""
    return a.origin if a.origin is not None else a.node


def _same_elements(previous: Access, read: Access) -> bool:
    m = read.mask
    return (previous.size == read.size and previous.epoch == read.epoch and bool(np.all(previous.mask[m]))
            and bool(np.array_equal(previous.addr[m], read.addr[m])))  # type: ignore[index]


_LOOP_OR_FUNCTION = ("for_statement", "while_statement", "do_statement", "function_definition")


def _loop_of(node, known: dict) -> tuple[int, int] | None:
    """The loop (or else the function) around `node`. Every node climbed through is remembered in `known`:
    `Node.parent` walks down from the tree's root, so climbing d levels costs d², and 120 nested `if`s
    reading one element twice took 1.5 s of climbing, now shared by the accesses of one run."""
    climbed = []
    while node is not None and node.type not in _LOOP_OR_FUNCTION:
        if node in known:
            found = known[node]
            break
        climbed.append(node)
        node = node.parent
    else:
        found = (node.start_byte, node.end_byte) if node is not None else None
    for n in climbed:
        known[n] = found
    return found


def global_instructions(run: SimResult) -> list[Access]:
    """The run's global accesses as the compiler would issue them: a read of the elements the same threads read
    or wrote by an earlier access through that pointer, in the same loop body, is dropped — unless a store
    through another pointer (which may alias it), an atomic or a barrier came between, or a store through the
    same pointer that may overlap it. A store through the same pointer at a fixed distance (`c[0] = …; c[1] =
    …;` then `x = c[0]`: kaolin's gs_to_spc, no load in the PTX) leaves the others known, and so does a load
    (`make_vec3(p[3*j], p[3*j+1], p[3*j+2])` read twice: three loads for six reads)."""
    out: list[Access] = []
    recent: dict[str, list[Access]] = {}  # per pointer: its accesses whose values are in registers, newest last
    loops: dict = {}
    for a in run.accesses:
        if a.space != "global":
            continue
        if a.atomic or a.addr is None:
            if a.write or a.atomic:
                recent = {}  # a store may alias any other pointer
            out.append(a)
            continue
        if a.write:
            kept = [b for b in recent.get(a.alloc, []) if _apart(b, a)]
            recent = {a.alloc: [*kept[-MAX_READS_KEPT:], a]}
            out.append(a)
            continue
        known = recent.setdefault(a.alloc, [])
        if not _volatile(a) and any(_same_elements(b, a) and _loop_of(b.node, loops) == _loop_of(a.node, loops)
                                    for b in reversed(known)):
            continue  # not across loops: the compiler keeps a value in a register within one loop body
        known.append(a)
        del known[:-MAX_READS_KEPT]
        out.append(a)
    return out


def _apart(earlier: Access, store: Access) -> bool:
    """Whether a store through the same pointer provably misses what an earlier access touched: in every lane
    of the store the earlier one ran too, at the same distance, at least the wider of the two apart (constant
    offsets of one index: the compiler sees the distance, whatever the index is)."""
    m = store.mask
    if earlier.epoch != store.epoch or not bool(np.all(earlier.mask[m])) or not m.any():
        return False
    distance = store.addr[m] - earlier.addr[m]  # type: ignore[index]
    return bool(np.all(distance == distance[0])) and abs(int(distance[0])) >= max(earlier.size, store.size)


_MEMORY_TARGETS = ("subscript_expression", "pointer_expression", "field_expression")


def hoisted_before_loop(access: Access, body: ts.Node) -> ts.Node | None:
    """The header of the loop a global load is hoisted out of, or None. A load whose pointer and index keep
    their value in every iteration, in a loop that stores to no memory and calls nothing that could (no
    atomic, barrier or helper), is computed once before the loop by nvcc, and the line table puts it on the
    loop's line: llm.c's `att_bth[t3]` in `for (t2 = 0; t2 <= t; t2++) { ... att_bth[t2] * (... -
    att_bth[t3]) ... }` measures its sectors on the `for` line on an H200."""
    node = access.node
    if access.space != "global" or access.write or access.atomic or access.origin is not None or \
            access.via is not None or node.type != "subscript_expression":
        return None
    loop = enclosing_loop(node, body)
    if loop is None:
        return None
    pointer, indices = node.child_by_field_name("argument"), node.child_by_field_name("indices")
    index = indices.named_children[0] if indices is not None and indices.named_children else None
    if pointer is None or index is None or not loop_invariant(pointer, loop) or not loop_invariant(index, loop):
        return None
    if any(n.type in _MEMORY_TARGETS for n in find(loop, "assigned")) or find(loop, "call"):
        return None
    return loop.child_by_field_name("condition") or loop
