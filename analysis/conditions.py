"""Which `#if` branch a declaration sits in, and whether the macros a translation unit defines select it.

llm.c's `common.h` chooses `floatX` by `#if defined(ENABLE_BF16)` … `#else typedef float floatX;`, and the file
that includes it says `#define ENABLE_BF16` first: the element is 2 bytes, not the last branch's 4. The
preprocessor's rules, as far as the text tells them: a name no `#define` gives is 0, `defined(X)` is whether
one does, a macro is what its body evaluates to (`#define MAXIMIZE_KERNEL_SIZE true`). A condition on what only
the compiler or the build defines (`__CUDA_ARCH__`, `-DENABLE_BF16` on the command line: names that start with
`__`, or a macro whose body is not an expression of numbers and macros) cannot be evaluated, and then no branch is chosen: the caller
keeps what it did without this. Declarations inside a kernel body follow the same one choice
(Unit.compiled): mmcv's `#if MAXIMIZE_KERNEL_SIZE __shared__ float m[12288]; #else __shared__ scalar_t
m[6144]; #endif` allocates one of the two, never both.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from cudalens.analysis import ts_binding as ts

Condition = tuple[str, bool]  # the `#if` condition's text, and whether the branch needs it true
_BRANCHES = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef")
_DEFINED = re.compile(r"\bdefined\s*(?:\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*))")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
_NUMBER = re.compile(r"^\(?\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*\)?$")
_LITERALS = {"true": "1", "false": "0"}
_MACRO_DEPTH = 8  # macros expanding into macros, as deep as that (a cycle is not an expression)


def branch_conditions(node: ts.Node) -> tuple[Condition, ...]:
    """What must hold for `node`'s branch to be compiled: each enclosing `#if`/`#ifdef`/`#elif` whose body
    holds it true, each one whose `#else`/`#elif` holds it false (innermost first). Inside a function, only the
    arms within it: the function's own arms are what is analysed of it, as the function is."""
    out: list[Condition] = []
    child, parent = node, node.parent
    while parent is not None and parent.type != "function_definition":
        if parent.type in _BRANCHES and not _include_guard(parent):
            alternative = parent.child_by_field_name("alternative")
            condition = _condition_text(parent)
            if alternative is not None and alternative.start_byte == child.start_byte \
                    and alternative.end_byte == child.end_byte:
                out.append((condition, False))
            elif parent.child_by_field_name("condition") != child:
                out.append((condition, True))
        child, parent = parent, parent.parent
    return tuple(out)


def _include_guard(node: ts.Node) -> bool:
    """`#ifndef GUARD` whose body starts with `#define GUARD`: the file's first inclusion, always taken (the
    macro the file defines is not yet defined where the condition is read)."""
    if node.type != "preproc_ifdef" or not node.children or node.children[0].type != "#ifndef":
        return False
    name = node.child_by_field_name("name")
    first = next((c for c in node.named_children if c != name), None)
    defined = first.child_by_field_name("name") if first is not None and first.type == "preproc_def" else None
    return name is not None and defined is not None and ts.text(defined) == ts.text(name)


def _condition_text(node: ts.Node) -> str:
    if node.type in ("preproc_ifdef", "preproc_elifdef"):
        name = node.child_by_field_name("name")
        negated = node.children[0].type in ("#ifndef", "#elifndef") if node.children else False
        return f"{'!' if negated else ''}defined({ts.text(name) if name is not None else ''})"
    condition = node.child_by_field_name("condition")
    return ts.text(condition) if condition is not None else ""


def holds(conditions: tuple[Condition, ...], macros: Mapping[str, str]) -> bool | None:
    """Whether every condition is as its branch needs it, given the object-like macros defined (name → body);
    None when one cannot be evaluated."""
    for text, wanted in conditions:
        value = evaluate(text, macros)
        if value is None:
            return None
        if bool(value) != wanted:
            return False
    return True


def evaluate(text: str, macros: Mapping[str, str], depth: int = 0) -> int | None:
    """An `#if` condition's value, or None when it rests on what the text does not define. A macro whose body is
    itself an expression (`#define MAXIMIZE_KERNEL_SIZE true`, `#define USE_TC (ARCH >= 80)`) has that
    expression's value; C++'s `true` and `false` are 1 and 0 in an `#if` as anywhere else."""
    unknown = False

    def defined(m: re.Match) -> str:
        nonlocal unknown
        name = m.group(1) or m.group(2)
        unknown |= name.startswith("__") and name not in macros
        return "1" if name in macros else "0"

    def value(m: re.Match) -> str:
        nonlocal unknown
        name = m.group(0)
        if name not in macros:
            # in a macro's body, a name that is neither a macro nor a literal is not a number (`#define MODE
            # fast`): unknown, where the condition's own text takes it as 0
            unknown |= name.startswith("__") or (depth > 0 and name not in _LITERALS)
            return _LITERALS.get(name, "0")
        body = macros[name].strip() or "1"
        number = _NUMBER.match(body)
        if number is not None:
            return str(int(number.group(1), 0))
        inner = evaluate(body, macros, depth + 1) if depth < _MACRO_DEPTH else None
        unknown |= inner is None
        return str(inner or 0)

    expression = _NAME.sub(value, _DEFINED.sub(defined, text))
    if unknown:
        return None
    expression = expression.replace("&&", " and ").replace("||", " or ")
    expression = re.sub(r"!(?!=)", " not ", expression)
    expression = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", expression)
    try:
        return _value(ast.parse(expression.strip(), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


_BINARY = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: int(a / b), ast.Mod: lambda a, b: a % b,
           ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b, ast.BitAnd: lambda a, b: a & b,
           ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b}
_COMPARE = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
            ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}


def _value(node: ast.AST) -> int:
    """The integer an expression of numbers, arithmetic, comparisons and logic has (nothing else is read)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return int(node.value)
    if isinstance(node, ast.BoolOp):
        values = [_value(v) for v in node.values]
        return int(all(values) if isinstance(node.op, ast.And) else any(values))
    if isinstance(node, ast.UnaryOp):
        operand = _value(node.operand)
        if isinstance(node.op, ast.Not):
            return int(not operand)
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.Invert):
            return ~operand
        return operand
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return int(_BINARY[type(node.op)](_value(node.left), _value(node.right)))
    if isinstance(node, ast.Compare):
        left = _value(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _value(right_node)
            if type(op) not in _COMPARE or not _COMPARE[type(op)](left, right):
                return 0
            left = right
        return 1
    raise ValueError("not a preprocessor expression")


def chosen(branches: list[tuple[tuple[Condition, ...], str]], macros: Mapping[str, str]) -> str | None:
    """Of a name's definitions in `#if` branches (in order), the one the macros select; None when a branch
    before it cannot be evaluated or none is selected."""
    for conditions, target in branches:
        selected = holds(conditions, macros)
        if selected is None:
            return None
        if selected:
            return target
    return None
