"""CL503: integer division or modulo by a run-time value inside a kernel loop."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.expr_types import INT, ExprTyper
from cudalens.analysis.file_context import FileContext
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.function_rule import FunctionRule
from cudalens.analysis.host_eval import eval_host
from cudalens.analysis.reaching import value_key
from cudalens.analysis.syntax import divisions, enclosing_loop, find, loop_invariant
from cudalens.analysis.unit import Function, Unit

Node = ts.Node


def _operands(node: Node) -> tuple[str, Node | None, Node | None]:
    if node.type == "binary_expression":
        return (ts.text(node.child_by_field_name("operator")), node.child_by_field_name("left"),
                node.child_by_field_name("right"))
    op = ts.text(node.child_by_field_name("operator"))
    return op[:-1], node.child_by_field_name("left"), node.child_by_field_name("right")


def _has_inner_loop(loop: Node, node: Node, inner_loops: dict[int, list[Node]]) -> bool:
    """Whether the loop's body holds another loop that does not contain `node`: the division then runs once
    per iteration of a loop whose work is elsewhere (llm.c's `b = idx / T` per row of C elements).
    `inner_loops`: each loop's, found once (a query per division made 1,000 divisions in one loop cost 2.6 s)."""
    inner = inner_loops.get(loop.start_byte)
    if inner is None:
        inner = inner_loops[loop.start_byte] = find(loop.child_by_field_name("body"), "loop")
    return any(not (i.start_byte <= node.start_byte and node.end_byte <= i.end_byte) for i in inner)


def unrolled_to_constants(divisor: Node, node: Node, body: Node, unit: Unit) -> bool:
    """Whether every name of the divisor is the variable of a loop around `node` that `#pragma unroll` unrolls
    fully, from a constant start to a constant bound by a constant step: each copy of the body then divides
    by a constant (flashinfer's scans: `for (offset = 1; offset < 32; offset *= 2) … % (offset * 2)`)."""
    names = {ts.text(n) for n in find(divisor, "identifier")}
    if not names or find(divisor, "memory_read"):
        return False
    unrolled = set()
    at = node.parent
    while at is not None and at != body:
        if at.type == "for_statement":
            variable = _constant_trip_variable(at, body, unit)
            if variable is not None and _fully_unrolled(at):
                unrolled.add(variable)
        at = at.parent
    return names <= unrolled


def _fully_unrolled(loop: Node) -> bool:
    before = loop.prev_named_sibling
    return before is not None and before.type == "preproc_call" and ts.text(before).split() == ["#pragma", "unroll"]


def _constant_trip_variable(loop: Node, body: Node, unit: Unit) -> str | None:
    """The variable of `for (v = C0; v < C1; v op= C2)` (any comparison, `++`/`--` too) with constant C0, C1,
    C2; None for any other loop."""
    init, cond, update = (loop.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    declarator = init.child_by_field_name("declarator") if init is not None and init.type == "declaration" else None
    if declarator is None or declarator.type != "init_declarator" or cond is None or update is None:
        return None
    name, start = ts.text(declarator.child_by_field_name("declarator")), declarator.child_by_field_name("value")
    if cond.type != "binary_expression" or ts.text(cond.child_by_field_name("left")) != name or \
            eval_host(start, unit, body) is None or eval_host(cond.child_by_field_name("right"), unit, body) is None:
        return None
    if update.type == "update_expression":
        return name if ts.text(update.child_by_field_name("argument")) == name else None
    if update.type == "assignment_expression" and ts.text(update.child_by_field_name("left")) == name and \
            ts.text(update.child_by_field_name("operator")) != "=" and \
            eval_host(update.child_by_field_name("right"), unit, body) is not None:
        return name
    return None


class IntegerDivisionInLoop(FunctionRule):
    """## What it does
    Flags an integer `/` or `%` (also `/=`, `%=`) inside a loop of a kernel or `__device__` helper whose
    divisor is not a compile-time constant — a kernel parameter, `blockDim.x`, a value computed at run time.

    ## Why is this bad?
    GPUs have no integer divide instruction: a 32-bit `/` or `%` by a run-time value compiles to a sequence of
    about 20 or more instructions (a reciprocal, multiplies and corrections), twice that for 64-bit operands.
    In a loop that runs for every element this can dominate index arithmetic. Division by a constant is
    strength-reduced by the compiler to a multiply and shift, and by a power of two to a shift or mask, so
    neither is reported.

    ## Known problems
    `info`: the divisor may well be a power of two at run time, and the loop may be short; the cost matters only
    in hot loops. Only operands whose types are known to be integers are checked. Only innermost loops are
    checked (a division per row of an inner loop over the row is amortised). A division is counted once per
    value it computes in a pass through the loop, the operands compared as values, not as text: `p / w / h`
    written on two lines with no write of `p`, `w` or `h` between is one quotient each (nvcc computes it once),
    and a `%` whose operands a `/` of the same pass divides too is none (nvcc derives the remainder from the
    quotient: `(p / w) % h` beside `p / w / h`); after `p += 1` it is another value. Neither is a
    division whose operands the loop never changes (no variable of them assigned or declared in it, no memory
    read, no call: `row / D`), which the compiler computes once before the loop. A `constexpr` local divisor
    is a compile-time constant whatever it is written with (`constexpr unsigned ROWS = KTraits::NUM_MMA_D / 2;`
    of a traits type parameter): C++ requires one there. Nor is a divisor made only of the variables of loops
    that `#pragma unroll` unrolls fully over constant bounds (`for (offset = 1; offset < 32; offset *= 2)`):
    each copy of the body divides by a constant.

    ## Example
    ```cuda
    for (int i = tid; i < rows * cols; i += stride) {
        int r = i / cols, c = i % cols;        // two run-time divisions per element
        out[c * rows + r] = in[i];
    }
    ```

    ## Use instead
    Iterate over rows and columns with two loops, or compute the quotient once and derive the remainder
    (`int r = i / cols; int c = i - r * cols;`), or precompute a fast-division multiplier on the host (the
    "magic number" method), or make the divisor a template parameter when it takes few values.

    ## Fix safety
    No automatic fix: each alternative changes the code's structure.

    ## References
    - CUDA C++ Programming Guide, "Arithmetic Instructions" (integer division and modulo)
    - CUDA C++ Best Practices Guide, "Division Modulo Operations"
    """

    code = "CL503"
    name = "integer-division-in-loop"
    summary = "Integer division or modulo by a run-time value inside a kernel loop"
    depends_on = NO_FACTS  # the divisions as written
    default_severity = Severity.INFO

    def check_function(self, context: FileContext, function: Function, kernel: str | None) -> Iterator[Finding]:
        body = function.body
        if body is None:
            return
        typer = None
        seen: set[tuple[int, str, str]] = set()
        inner_loops: dict[int, list[Node]] = {}
        tables = context.unit.declarations
        # each division in a loop with its key (loop, operator, the dividend's value, the divisor's value): in a
        # pass through the loop nvcc computes a value once, at its first division, and a `%` whose operands a `/`
        # divides too comes from that quotient (`r = i / n; c = i % n;`: i - r * n), before or after it
        found = []
        for node in divisions(body):
            op, left, right = _operands(node)
            loop = enclosing_loop(node, body)
            if op in ("/", "%") and left is not None and right is not None and loop is not None:
                dividend, divisor = value_key(left, body, tables), value_key(right, body, tables)
                key = (loop.start_byte, op, dividend, divisor) if None not in (dividend, divisor) else node
                found.append((node, op, left, right, loop, key))
        quotients = {(k[0], k[2], k[3]) for *_, k in found if isinstance(k, tuple) and k[1] == "/"}
        computed: set = set()
        for node, op, left, right, loop, key in found:
            if _has_inner_loop(loop, node, inner_loops):
                continue  # once per iteration of an outer loop: amortised over the inner loop's work
            if key in computed:
                continue  # the value a division before it in the pass computed (`p / w / h` on two lines)
            computed.add(key)
            if op == "%" and isinstance(key, tuple) and (key[0], key[2], key[3]) in quotients:
                continue  # derived from the quotient
            if node.type == "binary_expression" and loop_invariant(node, loop):
                continue  # `row / D` of values the loop never changes: computed once, before the loop
            typer = typer or ExprTyper(context.unit, function)
            lt, rt = typer.type_of(left), typer.type_of(right)
            if lt is None or rt is None or lt.kind != INT or rt.kind != INT or rt.constant:
                continue
            if eval_host(right, context.unit, body) is not None or ts.text(right) in function.template_params:
                continue
            if unrolled_to_constants(right, node, body, context.unit):
                continue  # `#pragma unroll` of `for (s = 1; s < 32; s *= 2)`: `% (2 * s)` by 2, 4, … in its copies
            line = (node.start_point[0], op, ts.text(right))
            if line in seen:
                continue  # `a[i % n] + b[j % n]`: one finding per line and divisor
            seen.add(line)
            what = "division" if op == "/" else "modulo"
            yield context.finding(
                type(self), node,
                f"Integer {what} by `{ts.text(right)}`, a run-time value, inside a loop: about 20+ instructions "
                "each time (no hardware divide); hoist it, derive the remainder from the quotient, or use a "
                "precomputed fast-division multiplier (unknown here: whether the divisor is a power of two)",
                kernel=kernel, evidence={"operator": op, "divisor": ts.text(right)})
