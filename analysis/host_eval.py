"""Constant values of host-side expressions: launch configurations (`dim3 block(32, 8)`, `threads = 256`,
`TILE`), template arguments, array sizes. Anything not constant is None."""

from __future__ import annotations

from functools import lru_cache

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.unit import Unit, parse_expression

Node = ts.Node
_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: int(a / b) if b else None, "%": lambda a, b: a - int(a / b) * b if b else None,
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b, "&": lambda a, b: a & b, "|": lambda a, b: a | b,
}


def _declared_value(name: str, scope: Node | None, before: int) -> Node | None:
    """The initializer of the last declaration of `name` in `scope` before byte `before`."""
    if scope is None:
        return None
    found = None
    for start, value in _declarations(scope).get(name, ()):
        if start >= before:
            break
        found = value
    return found


@lru_cache(maxsize=8)
def _declarations(scope: Node) -> dict[str, list[tuple[int, Node | None]]]:
    """(start byte, initializer) of each `name = value` declaration in `scope`, by name, in source order. One
    walk per host function: a walk per identifier made a host function with n launches cost n² (a minute for
    1,000). The cache holds the scope node, so its tree lives on and no other node can take its id."""
    found: dict[str, list[tuple[int, Node | None]]] = {}
    stack = [scope]
    while stack:
        node = stack.pop()
        if node.type == "init_declarator":
            decl = node.child_by_field_name("declarator")
            if decl is not None:
                found.setdefault(ts.text(decl).lstrip("*& "), []).append(
                    (node.start_byte, node.child_by_field_name("value")))
        stack.extend(node.named_children)
    for entries in found.values():
        entries.sort(key=lambda entry: entry[0])
    return found


def eval_host(node: Node | None, unit: Unit, scope: Node | None, depth: int = 0) -> tuple[int, ...] | None:
    """A constant scalar (1-tuple) or dim3 (3-tuple); None when not constant."""
    if node is None or depth > 12:
        return None
    t = node.type
    if t == "number_literal":
        text = ts.text(node).rstrip("uUlL").replace("'", "")
        try:
            return (int(text, 0),)
        except ValueError:
            return None
    if t in ("parenthesized_expression", "condition_clause") and node.named_children:
        return eval_host(node.named_children[-1], unit, scope, depth + 1)
    if t == "identifier":
        name = ts.text(node)
        value = _declared_value(name, scope, node.start_byte)
        if value is not None:
            return eval_host(value, unit, scope, depth + 1)
        macro = unit.macros.get(name)
        if macro is not None and macro.params is None:
            return eval_host(parse_expression(macro.body), unit, None, depth + 1) if macro.body else None
        if name in unit.constants:
            return eval_host(unit.constants[name], unit, None, depth + 1)
        return None
    if t in ("argument_list", "initializer_list"):
        parts = [eval_host(c, unit, scope, depth + 1) for c in node.named_children]
        if not parts or any(p is None or len(p) != 1 for p in parts) or len(parts) > 3:
            return None
        return tuple(p[0] for p in parts) + (1,) * (3 - len(parts))  # type: ignore[index]
    if t == "call_expression":
        func = ts.text(node.child_by_field_name("function"))
        args = node.child_by_field_name("arguments")
        if func == "dim3":
            return eval_host(args, unit, scope, depth + 1)
        values = [eval_host(a, unit, scope, depth + 1) for a in (args.named_children if args else [])]
        if func in ("min", "max", "std::min", "std::max") and len(values) == 2 and all(values):
            return ((min if "min" in func else max)(values[0][0], values[1][0]),)  # type: ignore[index]
        return None
    if t == "binary_expression":
        op = ts.text(node.child_by_field_name("operator"))
        a = eval_host(node.child_by_field_name("left"), unit, scope, depth + 1)
        b = eval_host(node.child_by_field_name("right"), unit, scope, depth + 1)
        if a is None or b is None or len(a) != 1 or len(b) != 1 or op not in _OPS:
            return None
        r = _OPS[op](a[0], b[0])
        return None if r is None else (r,)
    if t == "cast_expression":
        return eval_host(node.child_by_field_name("value"), unit, scope, depth + 1)
    if t == "sizeof_expression":  # `TILE * TILE * sizeof(float)`: shared memory sizes at launch sites
        # `sizeof(MyStruct)` parses as a parenthesised value; a name the type table knows is that type
        type_node = node.child_by_field_name("type") or node.child_by_field_name("value")
        info = unit.types.lookup(ts.text(type_node).strip("() ")) if type_node is not None else None
        return (info.size,) if info is not None else None
    return None


def dim3(node: Node | None, unit: Unit, scope: Node | None) -> tuple[int, int, int] | None:
    v = eval_host(node, unit, scope)
    if v is None:
        return None
    return (*v, 1, 1)[:3] if len(v) == 1 else v  # type: ignore[return-value]
