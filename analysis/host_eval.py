"""Constant values of host-side expressions: launch configurations (`dim3 block(32, 8)`, `threads = 256`,
`TILE`), template arguments, array sizes. Anything not constant is None.

A `Binding` gives values to names the text alone does not fix: the parameters of a host function, taken from
one of its call sites (`launch(x, 128)` makes `block_size` 128 inside `launch`), and its template parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.reaching import UNKNOWN, assigned, declaration_of, member, members_written, reaching
from cudalens.analysis.syntax import find
from cudalens.analysis.unit import Unit, parse_expression

Node = ts.Node
# name -> an integer (as a 1-tuple, like eval_host's results) or a type's spelling (a template type argument)
Binding = Mapping[str, "tuple[int, ...] | str"]
PartialDim3 = tuple["int | None", "int | None", "int | None"]
_NO_BINDING: Binding = {}
_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: int(a / b) if b else None, "%": lambda a, b: a - int(a / b) * b if b else None,
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b, "&": lambda a, b: a & b, "|": lambda a, b: a | b,
}


def _write_value(write: Node, name: str, part: int | None, unit: Unit, scope: Node | None, depth: int,
                 binding: Binding) -> tuple[int, ...] | None:
    """The value `write` gives `name` (its member `part`): `= v`, `op= v` or `++`/`--` of the value before it."""
    if write.type == "update_expression":
        op, right = ("+" if "++" in ts.text(write) else "-"), (1,)
    else:
        op = ts.text(write.child_by_field_name("operator"))
        if op == "=":
            value = write.child_by_field_name("right")
            if part is None:
                return eval_host(value, unit, scope, depth + 1, binding)
            if member(write, name) is None:  # `t = dim3(…)`: the member of the whole
                parts = dim3_parts(value, unit, scope, binding, depth + 1)
                return (parts[part],) if parts is not None and parts[part] is not None else None
            return eval_host(value, unit, scope, depth + 1, binding)
        op, right = op[:-1], eval_host(write.child_by_field_name("right"), unit, scope, depth + 1, binding)
    before = _member_value(name, part, write, unit, scope, depth + 1, binding) if part is not None else \
        _name_value(name, write, unit, scope, depth + 1, binding)
    if before is None or right is None or len(before) != 1 or len(right) != 1 or op not in _OPS:
        return None
    result = _OPS[op](before[0], right[0])
    return None if result is None else (result,)


def _member_value(name: str, part: int, use: Node, unit: Unit, scope: Node | None, depth: int,
                  binding: Binding) -> tuple[int] | None:
    """The value of `name.x` (part 0), `.y`, `.z` that `use` sees, as a 1-tuple."""
    if depth > 12:
        return None
    seen = reaching(name, part, use, scope, unit.declarations)
    if seen == UNKNOWN:
        return None
    if seen is not None:
        return _write_value(seen, name, part, unit, scope, depth, binding)  # type: ignore[arg-type,return-value]
    found = declaration_of(name, scope, use.start_byte, unit.declarations)
    if found is None:
        return None
    if found[1] is None:  # `dim3 t;` is 1×1×1
        return (1,) if _declared_type(found[0]) == "dim3" else None
    parts = dim3_parts(found[1], unit, scope, binding, depth + 1)
    return (parts[part],) if parts is not None and parts[part] is not None else None


def _members(name: str, use: Node, unit: Unit, scope: Node | None, depth: int, binding: Binding) -> PartialDim3:
    x, y, z = (_member_value(name, m, use, unit, scope, depth, binding) for m in range(3))
    return (x[0] if x else None, y[0] if y else None, z[0] if z else None)


def assigned_value(node: Node, unit: Unit, scope: Node | None) -> Node | None:
    """The expression whose value the use of a variable `node` sees (reaching.assigned)."""
    return assigned(node, scope, unit.declarations)


def _declared_value(name: str, scope: Node | None, before: int, unit: Unit) -> Node | None:
    """The initializer of a scalar or `dim3` `name` (an array's braces are its elements, not a value)."""
    found = declaration_of(name, scope, before, unit.declarations)
    if found is None or found[0].type != "init_declarator":
        return found[1] if found is not None else None
    declarator = found[0].child_by_field_name("declarator")
    return None if declarator is not None and declarator.type == "array_declarator" else found[1]


def _name_value(name: str, node: Node, unit: Unit, scope: Node | None, depth: int,
                binding: Binding) -> tuple[int, ...] | None:
    if depth > 12:
        return None
    if members_written(name, scope, unit.declarations):  # `dim3 t; t.x = 16; …`: whole only when every member is
        parts = _members(name, node, unit, scope, depth + 1, binding)
        return None if None in parts else parts  # type: ignore[return-value]
    seen = reaching(name, None, node, scope, unit.declarations)
    if seen == UNKNOWN:
        return None
    if seen is not None:  # a write before the use: a parameter's caller's value, or an initializer, is gone
        return _write_value(seen, name, None, unit, scope, depth, binding)  # type: ignore[arg-type]
    value = _declared_value(name, scope, node.start_byte, unit)
    if value is not None:
        return eval_host(value, unit, scope, depth + 1, binding)
    bound = binding.get(name)
    if bound is not None:
        return bound if isinstance(bound, tuple) else None
    macro = unit.macros.get(name)
    if macro is not None and macro.params is None:
        return eval_host(parse_expression(macro.body), unit, None, depth + 1) if macro.body else None
    if name in unit.constants:
        return eval_host(unit.constants[name], unit, None, depth + 1)
    return None


_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def _local_types(scope: Node, tables: dict) -> dict[str, list[tuple[int, str]]]:
    """The `using T = …;` declarations in `scope` by name, in source order (made once per scope and unit)."""
    key = ("types", scope)
    table = tables.get(key)
    if table is None:
        table = tables[key] = {}
        if b"using" in (scope.text or b""):
            for node in find(scope, "alias_declaration"):
                name, target = node.child_by_field_name("name"), node.child_by_field_name("type")
                if name is not None and target is not None:
                    table.setdefault(ts.text(name), []).append((node.start_byte, ts.text(target)))
            for entries in table.values():
                entries.sort()
    return table


def host_type(text: str, unit: Unit, scope: Node | None, before: int, binding: Binding = _NO_BINDING,
              depth: int = 0) -> str:
    """A type as the host function spells it at byte `before`: its local `using` names followed (`Ktraits` →
    `Traits<kNThreads, 8, input_t>`) and the binding's values put in for its template parameters (→
    `Traits<128, 8, float>`); names neither gives are left as written."""
    table = _local_types(scope, unit.declarations) if scope is not None else {}

    def name(m: re.Match) -> str:
        word = m.group(0)
        local = [t for start, t in table.get(word, ()) if start < before]
        if local and depth < 4:
            return host_type(local[-1], unit, scope, before, binding, depth + 1)
        bound = binding.get(word)
        if isinstance(bound, tuple) and len(bound) == 1:
            return str(bound[0])
        if isinstance(bound, str):
            return bound
        value = _declared_value(word, scope, before, unit)  # `constexpr int kNRows = 1;`
        number = eval_host(value, unit, scope, depth + 1, binding) if value is not None and depth < 4 else None
        return str(number[0]) if number is not None and len(number) == 1 else word

    return _NAME.sub(name, " ".join(text.split()))


def eval_host(node: Node | None, unit: Unit, scope: Node | None, depth: int = 0,
              binding: Binding = _NO_BINDING) -> tuple[int, ...] | None:
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
    if t in ("true", "false"):  # a bool template argument: `reduce<256, true>`
        return (1 if t == "true" else 0,)
    if t in ("parenthesized_expression", "condition_clause") and node.named_children:
        return eval_host(node.named_children[-1], unit, scope, depth + 1, binding)
    if t in ("identifier", "type_identifier"):
        return _name_value(ts.text(node), node, unit, scope, depth, binding)
    if t == "type_descriptor":  # a template argument that may name a constant: `k<BLOCK, T>`
        inner = node.named_children
        return eval_host(inner[0], unit, scope, depth + 1, binding) if len(inner) == 1 else None
    if t in ("argument_list", "initializer_list", "parameter_list"):
        parts = [eval_host(_argument(c), unit, scope, depth + 1, binding) for c in node.named_children]
        if not parts or any(p is None or len(p) != 1 for p in parts) or len(parts) > 3:
            return None
        return tuple(p[0] for p in parts) + (1,) * (3 - len(parts))  # type: ignore[index]
    if t == "call_expression":
        func = ts.text(node.child_by_field_name("function"))
        args = node.child_by_field_name("arguments")
        if func == "dim3":
            return eval_host(args, unit, scope, depth + 1, binding)
        values = [eval_host(a, unit, scope, depth + 1, binding) for a in ts.arguments(args)]
        if func in ("min", "max", "std::min", "std::max") and len(values) == 2 and all(values):
            return ((min if "min" in func else max)(values[0][0], values[1][0]),)  # type: ignore[index]
        return None
    if t == "binary_expression":
        op = ts.text(node.child_by_field_name("operator"))
        a = eval_host(node.child_by_field_name("left"), unit, scope, depth + 1, binding)
        b = eval_host(node.child_by_field_name("right"), unit, scope, depth + 1, binding)
        if a is None or b is None or len(a) != 1 or len(b) != 1 or op not in _OPS:
            return None
        r = _OPS[op](a[0], b[0])
        return None if r is None else (r,)
    if t == "cast_expression":
        return eval_host(node.child_by_field_name("value"), unit, scope, depth + 1, binding)
    if t == "qualified_identifier":  # `Ktraits::kNThreads`: a static constant of a struct the host names
        owner, member = node.child_by_field_name("scope"), node.child_by_field_name("name")
        if owner is None or member is None or member.type != "identifier":
            return None
        info = unit.types.lookup(host_type(ts.text(owner), unit, scope, node.start_byte, binding))
        value = info.static(ts.text(member)) if info is not None else None
        return (value,) if value is not None else None
    if t == "sizeof_expression":  # `TILE * TILE * sizeof(float)`: shared memory sizes at launch sites
        # `sizeof(MyStruct)` parses as a parenthesised value; a name the type table knows is that type
        type_node = node.child_by_field_name("type") or node.child_by_field_name("value")
        name = ts.text(type_node).strip("() ") if type_node is not None else ""
        bound = binding.get(name)
        info = unit.types.lookup(bound if isinstance(bound, str) else name) if type_node is not None else None
        return (info.size,) if info is not None else None
    return None


def _argument(node: Node) -> Node:
    """An element of an argument list; in a vexing-parse `dim3 b(Bc, Br)` each is a parameter declaration
    whose only child names the value."""
    if node.type == "parameter_declaration" and node.child_by_field_name("declarator") is None:
        type_node = node.child_by_field_name("type")
        return type_node if type_node is not None else node
    return node


def dim3(node: Node | None, unit: Unit, scope: Node | None,
         binding: Binding = _NO_BINDING) -> tuple[int, int, int] | None:
    v = eval_host(node, unit, scope, binding=binding)
    if v is None:
        return None
    return (*v, 1, 1)[:3] if len(v) == 1 else v  # type: ignore[return-value]


_DIM3_TYPES = ("dim3", "uint3")


def dim3_parts(node: Node | None, unit: Unit, scope: Node | None,
               binding: Binding = _NO_BINDING, depth: int = 0) -> PartialDim3 | None:
    """Each dimension of a launch's grid or block that is constant, None for the others: `dim3 block(32, z)`
    is (32, None, 1); a run-time scalar `threads` is (None, 1, 1). None when nothing is known (a `dim3`
    parameter, a value computed by a call)."""
    if node is None or depth > 6:
        return None
    whole = dim3(node, unit, scope, binding)
    if whole is not None:
        return whole
    t = node.type
    if t == "parenthesized_expression" and node.named_children:
        return dim3_parts(node.named_children[-1], unit, scope, binding, depth + 1)
    if t == "call_expression" and ts.text(node.child_by_field_name("function")) == "dim3":
        return dim3_parts(node.child_by_field_name("arguments"), unit, scope, binding, depth + 1)
    if t == "compound_literal_expression" and ts.text(node.child_by_field_name("type")) == "dim3":
        return dim3_parts(node.child_by_field_name("value"), unit, scope, binding, depth + 1)  # dim3{x, 1, 1}
    if t in ("argument_list", "initializer_list", "parameter_list"):
        parts = [eval_host(_argument(c), unit, scope, binding=binding) for c in node.named_children]
        if not 0 < len(parts) <= 3 or any(p is not None and len(p) != 1 for p in parts):
            return None
        values = [p[0] if p is not None else None for p in parts] + [1] * (3 - len(parts))
        return values[0], values[1], values[2]
    if t == "identifier":
        name = ts.text(node)
        found = declaration_of(name, scope, node.start_byte, unit.declarations)
        if members_written(name, scope, unit.declarations) or (found is not None and _declared_type(found[0]) in _DIM3_TYPES):
            parts = _members(name, node, unit, scope, depth + 1, binding)  # each member as the launch sees it
            return None if found is None and parts == (None, None, None) else parts  # (a `dim3` parameter)
        if found is None and _is_dim3_name(name, scope):
            return None
        value = assigned_value(node, unit, scope)  # a scalar: a 1-D shape
        return dim3_parts(value, unit, scope, binding, depth + 1) if value is not None else (None, 1, 1)
    if t in ("binary_expression", "conditional_expression", "cast_expression", "call_expression"):
        return (None, 1, 1)  # arithmetic on scalars: a one-dimensional block of unknown size
    return None


def dim3_arguments(node: Node | None, unit: Unit, scope: Node | None, depth: int = 0) -> tuple[Node, ...] | None:
    """The expressions a `dim3` is written with, through a variable's initializer: `CTA_SIZE`, `1`, `1` of
    `const dim3 threads = dim3{CTA_SIZE, 1, 1};` … `<<<grid, threads>>>`; None when it is not spelled out."""
    if node is None or depth > 6:
        return None
    t = node.type
    if t == "parenthesized_expression" and node.named_children:
        return dim3_arguments(node.named_children[-1], unit, scope, depth + 1)
    if t == "call_expression" and ts.text(node.child_by_field_name("function")) == "dim3":
        return dim3_arguments(node.child_by_field_name("arguments"), unit, scope, depth + 1)
    if t == "compound_literal_expression" and ts.text(node.child_by_field_name("type")) == "dim3":
        return dim3_arguments(node.child_by_field_name("value"), unit, scope, depth + 1)
    if t in ("argument_list", "initializer_list", "parameter_list"):
        items = ts.arguments(node)
        return tuple(_argument(c) for c in items) if 0 < len(items) <= 3 else None
    if t == "identifier":
        return dim3_arguments(assigned_value(node, unit, scope), unit, scope, depth + 1)
    return None


def _declared_type(declarator: Node) -> str:
    parent = declarator.parent
    type_node = parent.child_by_field_name("type") if parent is not None else None
    return ts.text(type_node) if type_node is not None else ""


def _is_dim3_name(name: str, scope: Node | None) -> bool:
    """Whether `name` is a `dim3` parameter of the host function (its value comes from the caller)."""
    declarator = scope.child_by_field_name("declarator") if scope is not None else None
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    for p in params.named_children if params is not None else []:
        type_node = p.child_by_field_name("type")
        if type_node is not None and ts.text(type_node) in _DIM3_TYPES and ts.text(p).split()[-1].lstrip("*&") == name:
            return True
    return False
