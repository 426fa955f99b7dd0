"""Constant values of host-side expressions: launch configurations (`dim3 block(32, 8)`, `threads = 256`,
`TILE`), template arguments, array sizes. Anything not constant is None.

A `Binding` gives values to names the text alone does not fix: the parameters of a host function, taken from
one of its call sites (`launch(x, 128)` makes `block_size` 128 inside `launch`), and its template parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from cudalens.analysis import ts_binding as ts
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


def _declarations(scope: Node, tables: dict) -> dict[str, list[tuple[int, Node, Node | None]]]:
    """Every declarator in `scope` by name, in source order, made once per scope and unit (a host function
    with 70 launches asks for hundreds of names)."""
    table = tables.get(scope)
    if table is not None:
        return table
    table = {}
    stack = [scope]
    while stack:
        node = stack.pop()
        if node.type == "init_declarator":
            decl = node.child_by_field_name("declarator")
            if decl is not None:
                name = ts.text(decl).lstrip("*& ").split("[")[0].rstrip()
                table.setdefault(name, []).append((node.start_byte, node, node.child_by_field_name("value")))
        elif node.type == "function_declarator" and node.parent is not None and node.parent.type == "declaration":
            decl = node.child_by_field_name("declarator")
            if decl is not None:
                table.setdefault(ts.text(decl), []).append(
                    (node.start_byte, node, node.child_by_field_name("parameters")))
        stack.extend(node.named_children)
    for entries in table.values():
        entries.sort(key=lambda e: e[0])
    tables[scope] = table
    return table


def declaration_of(name: str, scope: Node | None, before: int, unit: Unit | None = None
                   ) -> tuple[Node, Node | None] | None:
    """The last declarator of `name` in `scope` before byte `before`, with its initializer: the value of
    `int n = 4`, the braces of `dim3 b{4, 8}`, or the parentheses of `dim3 b(Bc, Br)` — which C++ parses as a
    function declaration when the arguments are names (the most vexing parse); None when not declared."""
    if scope is None:
        return None
    found = None
    for start, node, value in _declarations(scope, unit.declarations if unit is not None else {}).get(name, ()):
        if start >= before:
            break
        found = (node, value)
    return found


def writes(scope: Node) -> list[tuple[str, Node]]:
    """Every expression in `scope` that writes a variable or a member of it, or takes its address, with the
    variable's name."""
    out = []
    stack = [scope]
    while stack:
        node = stack.pop()
        target = None
        if node.type == "assignment_expression":
            target = node.child_by_field_name("left")
        elif node.type == "update_expression":
            target = node.child_by_field_name("argument")
        elif node.type == "pointer_expression" and ts.text(node.child_by_field_name("operator")) == "&":
            target = node.child_by_field_name("argument")
        while target is not None and target.type in ("field_expression", "parenthesized_expression"):
            target = target.child_by_field_name("argument") if target.type == "field_expression" else \
                (target.named_children[0] if target.named_children else None)
        if target is not None and target.type == "identifier":
            out.append((ts.text(target), node))
        stack.extend(node.named_children)
    return out


def _last_write(name: str, scope: Node | None, before: int, unit: Unit) -> tuple[int, Node | None] | None:
    """(where, value) of the last write of `name` in `scope` before byte `before`: the value of a plain `name =
    value;` among the function body's own statements (`sqrt_block_size = 16;` before the launch: the caller's
    value is gone), else None as the value (a write in a branch or loop, `+=`, `++`, `&name`: the text does not
    fix it). None when nothing writes it there."""
    if scope is None:
        return None
    key = ("writes", scope)
    table = unit.declarations.get(key)
    if table is None:
        table = unit.declarations[key] = sorted(writes(scope), key=lambda w: w[1].start_byte)
    last = None
    for written, node in table:
        if node.start_byte >= before:
            break
        if written == name:
            last = node
    if last is None:
        return None
    statement, body = last.parent, scope.child_by_field_name("body")
    plain = last.type == "assignment_expression" and ts.text(last.child_by_field_name("operator")) == "=" and \
        last.child_by_field_name("left").type == "identifier" and statement is not None and \
        statement.type == "expression_statement" and body is not None and statement.parent == body
    return last.start_byte, last.child_by_field_name("right") if plain else None


def _declared_value(name: str, scope: Node | None, before: int, unit: Unit) -> Node | None:
    """The initializer of a scalar or `dim3` `name` (an array's braces are its elements, not a value)."""
    found = declaration_of(name, scope, before, unit)
    if found is None or found[0].type != "init_declarator":
        return found[1] if found is not None else None
    declarator = found[0].child_by_field_name("declarator")
    return None if declarator is not None and declarator.type == "array_declarator" else found[1]


def _name_value(name: str, node: Node, unit: Unit, scope: Node | None, depth: int,
                binding: Binding) -> tuple[int, ...] | None:
    if name in binding:  # a parameter: the caller's value, unless the function wrote it before this use
        written = _last_write(name, scope, node.start_byte, unit)
        if written is not None:
            return eval_host(written[1], unit, scope, depth + 1, binding) if written[1] is not None else None
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
        values = [eval_host(a, unit, scope, depth + 1, binding) for a in (args.named_children if args else [])]
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
        found = declaration_of(ts.text(node), scope, node.start_byte, unit)
        if found is None:
            return None if _is_dim3_name(ts.text(node), scope) else (None, 1, 1)
        declarator, value = found
        if value is not None:
            return dim3_parts(value, unit, scope, binding, depth + 1)
        return None if _declared_type(declarator) in _DIM3_TYPES else (None, 1, 1)
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
        return tuple(_argument(c) for c in node.named_children) if 0 < node.named_child_count <= 3 else None
    if t == "identifier":
        found = declaration_of(ts.text(node), scope, node.start_byte, unit)
        return dim3_arguments(found[1], unit, scope, depth + 1) if found is not None else None
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
