"""CL501: a double literal (`0.1`, `1e-3`, no `f`) that turns float arithmetic into FP64 arithmetic."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.expr_types import (
    DOUBLE,
    FLOAT,
    ExprTyper,
    exact_in_float,
    literal_kind,
)
from cudalens.analysis.file_context import FileContext
from cudalens.analysis.findings import Finding
from cudalens.analysis.function_rule import FunctionRule
from cudalens.analysis.syntax import find, in_compile_time_context, operand_of
from cudalens.analysis.unit import Function, Unit

_ARITHMETIC = {"+", "-", "*", "/"}
_COMPARISON = {"<", "<=", ">", ">=", "==", "!="}
_DOUBLE_WORD = re.compile(r"\bdouble\b")
Node = ts.Node


def works_in_float(function: Function) -> bool:
    """A function that works in float: no `double` anywhere in it (parameters, locals, casts)."""
    return not _DOUBLE_WORD.search(ts.text(function.node))


def promoting_literal(literal: Node, text: str, typer: ExprTyper) -> tuple[Node, str] | None:
    """The operation a double literal promotes to FP64, and a word on how; None when it promotes nothing."""
    operand, parent = operand_of(literal)
    if parent is None:
        return None
    if parent.type == "binary_expression":
        op = ts.text(parent.child_by_field_name("operator"))
        left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
        other = right if left == operand else left
        relaxed = typer.type_of(other, literals_as_float=True)
        if relaxed is None or relaxed.kind != FLOAT or relaxed.constant:
            return None
        exact = exact_in_float(text)
        if op in _COMPARISON:
            return None if exact else (parent, "the comparison")
        if op not in _ARITHMETIC:
            return None
        strict = typer.type_of(other)
        if exact and strict is not None and strict.kind == FLOAT and typer.converted_to_float(parent):
            return None
        return parent, "the arithmetic"
    if parent.type == "assignment_expression" and parent.child_by_field_name("right") == operand:
        op = ts.text(parent.child_by_field_name("operator"))
        target = typer.type_of(parent.child_by_field_name("left"))
        if op[:-1] in _ARITHMETIC and target is not None and target.kind == FLOAT \
                and not exact_in_float(text):
            return parent, "the update"
    return None


class DoublePrecisionLiteral(FunctionRule):
    """## What it does
    Flags a floating-point literal without the `f` suffix (`0.1`, `1e-3`, `2.5`) used in arithmetic or a
    comparison with float values, in a kernel or `__device__` helper that otherwise works in float (it declares
    no `double`).

    ## Why is this bad?
    In C++ an unsuffixed floating literal is a `double`, so `x * 0.1` converts `x` to double, multiplies in
    double precision and converts back. FP64 runs at 1/64 of the FP32 rate on consumer GPUs (GeForce, most
    workstation parts) and 1/2 on H100/H200, and each conversion costs extra instructions. The result is also
    not what a float kernel means to compute.

    ## Known problems
    Only literals whose other operand is known to be float (declared `float` values, float pointers' elements,
    float intrinsics such as `expf`) are reported; template-typed operands are not, since the literal's effect
    depends on the instantiation. When a literal is exactly a float (`0.5`, `2.0`) and one operation's result
    is converted to float at once — a float variable, a cast, a float function's `return`, a `float` parameter
    (`make_float3(1.0 / d.x, …)`, a helper's, helper_math's `operator*=(float3 &, float)` under `v *= 1. / s`)
    — the compiler narrows it back to float itself, so that case is not reported. `f *= 1. / s` on a float
    scalar is: the division's double result is multiplied in double.
    Kernels and `__device__` helpers that declare `double` anywhere are taken to want FP64 and are skipped.

    ## Example
    ```cuda
    float v = in[i];
    out[i] = v * 0.1 + 1.0;                  // FP64 multiply-add, two conversions
    ```

    ## Use instead
    ```cuda
    float v = in[i];
    out[i] = v * 0.1f + 1.0f;
    ```

    ## Fix safety
    Appending `f` is unsafe: the value of a literal like `0.1` changes (it is rounded to float), and so can the
    result's last bits. That is usually what a float kernel wants, but a person should decide.

    ## References
    - CUDA C++ Best Practices Guide, "Promotions to Doubles and Truncations to Floats"
    - CUDA C++ Programming Guide, "Arithmetic Instructions" (throughput by compute capability)
    """

    code = "CL501"
    name = "double-precision-literal"
    summary = "Double literal (no `f`) promotes float arithmetic to FP64"
    depends_on = NO_FACTS  # the literals and types as written
    fixable = True

    def check_function(self, context: FileContext, function: Function, kernel: str | None) -> Iterator[Finding]:
        body = function.body
        if body is None or not works_in_float(function):
            return
        unit = context.unit
        literal_macros = {name for name, m in unit.macros.items()
                          if m.params is None and m.body and _literal_text_of(m.body) is not None}
        candidates = find(body, "number") + [n for n in find(body, "identifier") if ts.text(n) in literal_macros] \
            if literal_macros else find(body, "number")
        literals = [(node, *_literal_text(node, unit)) for node in candidates]
        literals = [(node, text, macro) for node, text, macro in literals if text is not None]
        typer = ExprTyper(unit, function) if literals else None
        for node, text, macro in literals:
            if typer is None or in_compile_time_context(node, body):
                continue
            hit = promoting_literal(node, text, typer)
            if hit is None:
                continue
            operation, what = hit
            written = f"`{text}`" if macro is None else f"`{macro}` (`#define {macro} {text}`)"
            where = "kernel" if kernel is not None else "function"
            yield context.finding(
                type(self), node,
                f"Double literal {written} makes {what} `{_short(ts.text(operation))}` run in double precision "
                f"(FP64) in a float {where}: the float operand is converted and "
                + ("compared" if what == "the comparison" else "the math runs at the FP64 rate, then back")
                + f"; write `{text}f`",
                kernel=kernel,
                fix=None if macro is not None else context.replace_fix(
                    node, text + "f", f"Make it a float literal: `{text}f`", safe=False),
                evidence={"literal": text})


def _literal_text(node: Node, unit: Unit) -> tuple[str | None, str | None]:
    """The double literal a node writes, directly or through an object-like macro (then also its name)."""
    text = ts.text(node)
    if node.type == "number_literal":
        return (text, None) if literal_kind(text) == DOUBLE else (None, None)
    macro = unit.macros.get(text)
    if macro is None or macro.params is not None or not macro.body:
        return None, None
    body = _literal_text_of(macro.body)
    return (body, text) if body is not None else (None, None)


def _literal_text_of(macro_body: str) -> str | None:
    """`0.1` for `#define SCALE 0.1` or `(0.1)`; None when the body is not one double literal."""
    body = macro_body.strip()
    while body.startswith("(") and body.endswith(")"):
        body = body[1:-1].strip()
    return body if literal_kind(body) == DOUBLE else None


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
