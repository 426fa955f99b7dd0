"""Tickets: what a fetch-and-step atomic (`atomicAdd(&counter, n)` with `n` ≠ 0) returns is a value of the
counter that no other caller gets, so code that runs only where a ticket equals something (`if (slot == 0)`)
runs in one thread of all those that share the counter. CL701 reads it (one atomic in the grid, not one per
lane), CL303 too (the accesses under one such test are one thread's: no race between them)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.model import KernelModel
from cudalens.analysis.syntax import find, lineage

Node = ts.Node
# atomics that hand each caller another value of one counter (a ticket): two callers never get the same one
FETCH_AND_STEP = ("atomicAdd", "atomicSub", "atomicInc", "atomicDec")


def ticket_call(value: Node | None) -> Node | None:
    """The fetch-and-step atomic an initializer is, give or take a constant (`atomicAdd(bottom, -1) - 1`): a
    value no other caller of that atomic gets; None where it is no such atomic."""
    right = value.child_by_field_name("right") if value is not None else None
    if value is not None and value.type == "binary_expression" and \
            ts.text(value.child_by_field_name("operator")) in ("+", "-") and \
            right is not None and right.type == "number_literal":
        value = value.child_by_field_name("left")
    if value is None or value.type != "call_expression":
        return None
    function, args = value.child_by_field_name("function"), value.child_by_field_name("arguments")
    step = args.named_children[1] if args is not None and len(args.named_children) > 1 else None
    ticket = function is not None and ts.text(function).startswith(FETCH_AND_STEP) and step is not None \
        and ts.text(step).strip("()") not in ("0", "0u", "0U")
    return value if ticket else None


def one_counter(call: Node, kernel: KernelModel) -> bool:
    """Whether every lane that makes this atomic, in every run, aims it at one address: a counter the block
    shares (`&s_temp`), not one per thread (`&count[threadIdx.x]`, where every thread gets the same value)."""
    span = (call.start_byte, call.end_byte)
    made = [a for run in kernel.runs for a in run.accesses
            if a.atomic and (a.node.start_byte, a.node.end_byte) == span and a.addr is not None]
    return bool(made) and all(np.unique(a.addr[a.mask]).size <= 1 for a in made)


def ticket_tests(node: Node, kernel: KernelModel) -> set[tuple[int, int]]:
    """The `if` statements (their byte spans) whose consequence holds `node` and whose condition is a ticket
    `==` something (`if (cell == N)` after `cell = atomicAdd(bottom, -1) - 1`): the atomic hands out each value
    once, so one thread of those sharing its counter gets past each, however many lanes the interpreter let
    through. Empty where none."""
    body = kernel.function.body
    tickets: dict[str, int] = {}  # the ticket's name → where its declaration ends
    for decl in find(body, "declaration"):
        for d in decl.children_by_field_name("declarator"):
            call = ticket_call(d.child_by_field_name("value")) if d.type == "init_declarator" else None
            if call is not None and one_counter(call, kernel):
                tickets[ts.text(d.child_by_field_name("declarator"))] = decl.end_byte
    if not tickets:
        return set()
    assigned = [(ts.text(n), n.start_byte) for n in find(body, "assigned")]
    found = set()
    for child, parent in pairwise(lineage(node, body)):
        if parent.type != "if_statement" or parent.child_by_field_name("consequence") != child:
            continue
        clause = parent.child_by_field_name("condition")
        cond = clause.child_by_field_name("value") if clause is not None else None
        if cond is None or cond.type != "binary_expression" or ts.text(cond.child_by_field_name("operator")) != "==":
            continue
        # a ticket the code has not changed since it was taken (`idx += base` after the test is another value)
        if any(name in tickets and not any(n == name and tickets[name] <= at < parent.start_byte for n, at in assigned)
               for name in (ts.text(cond.child_by_field_name(s)) for s in ("left", "right"))):
            found.add((parent.start_byte, parent.end_byte))
    return found


def one_ticket_holder(node: Node, kernel: KernelModel) -> bool:
    """Whether `node` runs only in the one thread that holds some ticket (`ticket_tests`)."""
    return bool(ticket_tests(node, kernel))
