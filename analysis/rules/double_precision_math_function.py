"""CL502: a math function call that resolves to its double overload in a float kernel."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.expr_types import (
    DOUBLE,
    FLOAT,
    INT,
    MATH_OVERLOADED,
    ExprTyper,
    literal_kind,
)
from cudalens.analysis.file_context import FileContext
from cudalens.analysis.findings import Finding, Fix, Severity, TextEdit
from cudalens.analysis.function_rule import FunctionRule
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.syntax import find
from cudalens.analysis.unit import Function

_DOUBLE_WORD = re.compile(r"\bdouble\b")
Node = ts.Node


def _bare(arg: Node) -> Node:
    """The expression under parentheses and signs: `-(2.0)` -> `2.0`."""
    while arg.type in ("parenthesized_expression", "unary_expression") and arg.named_children:
        arg = arg.child_by_field_name("argument") or arg.named_children[-1]
    return arg


def _float_data(function: Function) -> bool:
    """The function's data is float: no `double` among its parameters, and some float one."""
    params = " ".join(p.type_text for p in function.params)
    return not _DOUBLE_WORD.search(params) and bool(re.search(r"\bfloat\b", params))


class DoublePrecisionMathFunction(FunctionRule):
    """## What it does
    Flags a call to a math function (`pow`, `exp`, `sqrt`, `fmax`, `max`, ...) that resolves to its double
    overload in a kernel or `__device__` helper whose data is float: because an argument is a double literal (`pow(x, 2.0)`,
    `max(v, 0.0)`), because of `pow(float, int)` (which CUDA has no float overload for), or because an argument
    is a local `double` variable (`info`: that may be deliberate).

    `sqrt(x)`, `exp(x)`, `max(a, b)` with float arguments are *not* reported: CUDA C++ resolves them to the
    float overloads.

    ## Why is this bad?
    The double overload converts the float arguments to double and runs the double-precision implementation:
    tens of FP64 instructions for `pow` or `exp`, at 1/64 of the FP32 rate on consumer GPUs and 1/2 on
    H100/H200, plus the conversions back to float.

    ## Known problems
    Arguments that are double because of a literal inside them (`exp(x * 0.1)`) are reported once, as CL501 on
    the literal. Template-typed arguments are not judged.

    ## Example
    ```cuda
    out[i] = pow(in[i], 2.0) + max(in[i], 0.0);
    ```

    ## Use instead
    ```cuda
    out[i] = in[i] * in[i] + fmaxf(in[i], 0.0f);
    ```

    ## Fix safety
    The fix (appending `f` to the literal argument, or `pow` → `powf` for an integer exponent) is unsafe: it
    changes the precision of the result, which is what a float kernel means, but a person should decide.

    ## References
    - CUDA C++ Programming Guide, "Mathematical Functions" (single and double precision)
    - CUDA C++ Best Practices Guide, "Promotions to Doubles and Truncations to Floats"
    """

    code = "CL502"
    name = "double-precision-math-function"
    summary = "Math function call resolves to its double overload in a float kernel"
    depends_on = NO_FACTS  # the calls and types as written
    fixable = True

    def check_function(self, context: FileContext, function: Function, kernel: str | None) -> Iterator[Finding]:
        body = function.body
        if body is None or not _float_data(function):
            return
        typer = None
        for call in find(body, "call"):
            func = call.child_by_field_name("function")
            args_node = call.child_by_field_name("arguments")
            if func is None or args_node is None or func.type not in ("identifier", "qualified_identifier"):
                continue
            name = ts.text(func).split("::")[-1]
            if name not in MATH_OVERLOADED:
                continue
            typer = typer or ExprTyper(context.unit, function)
            args = list(args_node.named_children)
            types = [typer.type_of(a) for a in args]
            relaxed = [typer.type_of(a, literals_as_float=True) for a in args]
            site = _Site(self, context, call, name, kernel)
            finding = site.literal_argument(args, relaxed) or site.integer_exponent(func, types) \
                or site.double_variable(args, types)
            if finding is not None:
                yield finding


@dataclass
class _Site:
    """One math call being judged, and how to report on it."""

    rule: Rule
    context: FileContext
    call: Node
    name: str
    kernel: str | None

    def report(self, message: str, severity: Severity | None = None, fix: Fix | None = None) -> Finding:
        return self.context.finding(type(self.rule), self.call, message, severity, kernel=self.kernel, fix=fix,
                                    evidence={"function": self.name})

    def literal_argument(self, args: list[Node], relaxed: list) -> Finding | None:
        literals = [a for a in args if _bare(a).type == "number_literal" and literal_kind(ts.text(_bare(a))) == DOUBLE]
        floats = [t for a, t in zip(args, relaxed, strict=True)
                  if a not in literals and t is not None and t.kind == FLOAT and not t.constant]
        if not literals or not floats:
            return None
        texts = [ts.text(_bare(a)) for a in literals]
        edits = tuple(TextEdit(self.context.span(_bare(a)), t + "f") for a, t in zip(literals, texts, strict=True))
        return self.report(
            f"`{self.name}` with the double literal {', '.join(f'`{t}`' for t in texts)} and float arguments calls "
            f"the double overload: the float values are converted and `{self.name}` runs in FP64; write "
            + ", ".join(f"`{t}f`" for t in texts),
            fix=Fix("Make the literal float", edits, "unsafe"))

    def integer_exponent(self, func: Node, types: list) -> Finding | None:
        if self.name != "pow" or len(types) != 2 or types[0] is None or types[1] is None \
                or types[0].kind != FLOAT or types[1].kind != INT:
            return None
        return self.report(
            "`pow(float, int)` has no float overload in CUDA: it promotes to `pow(double, double)` and runs in "
            "FP64; use `powf` (or multiply out a small constant exponent)",
            fix=self.context.replace_fix(func, "powf", "Call `powf`", safe=False))

    def double_variable(self, args: list[Node], types: list) -> Finding | None:
        for arg, t in zip(args, types, strict=True):
            bare = _bare(arg)
            if t is not None and t.kind == DOUBLE and bare.type == "identifier":
                return self.report(
                    f"`{self.name}` runs in double precision because `{ts.text(bare)}` is declared `double`, in "
                    "code whose data is float; if float precision is enough, make it `float` (FP64 runs at 1/64 of "
                    "the FP32 rate on consumer GPUs, 1/2 on H100)",
                    Severity.INFO)
        return None
