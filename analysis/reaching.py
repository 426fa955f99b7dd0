"""Which declaration and which write a use of a variable sees in a function's text: the declarator whose block
holds the use, and the last write before it in source order along every path to it (`dim3 t; t.x = a;
t.x = b; k<<<g, t>>>` launches b). A write the use may or may not see — in a branch or loop that does not hold
the use, after it in a loop around both, through `&` — leaves the value open (UNKNOWN): what rests on it is
assumed, never guessed. Host values (host_eval) and launches through a variable (unit) read variables here.

Tables are made once per scope and kept in the `tables` dict the caller passes (Unit.declarations).
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import pairwise

from cudalens.analysis import ts_binding as ts

Node = ts.Node

# The nodes a declaration is visible to the end of: its block, or the statement whose header declares it
# (`for (int i = 0; …)`, `if (auto n = …)`).
_DECLARATION_SCOPES = frozenset(("compound_statement", "for_statement", "for_range_loop", "if_statement",
                                 "while_statement", "switch_statement", "catch_clause", "lambda_expression"))
Declarations = dict[str, list[tuple[int, int, Node, "Node | None"]]]


def declarations(scope: Node, tables: dict) -> Declarations:
    """Every declarator in `scope` by name, in source order, each as (start, the end of what it is visible
    to, the declarator, its initializer or None); made once per scope and table (a host function with 70
    launches asks for hundreds of names)."""
    table = tables.get(scope)
    if table is not None:
        return table
    table = {}
    for node in ts.walk(scope):
        if node.type == "init_declarator":
            decl = node.child_by_field_name("declarator")
            if decl is not None:
                name = ts.text(decl).lstrip("*& ").split("[")[0].rstrip()
                table.setdefault(name, []).append(
                    (node.start_byte, _visible_to(node, scope), node, node.child_by_field_name("value")))
        elif node.type == "function_declarator" and node.parent is not None and node.parent.type == "declaration":
            decl = node.child_by_field_name("declarator")
            if decl is not None:
                table.setdefault(ts.text(decl), []).append(
                    (node.start_byte, _visible_to(node, scope), node, node.child_by_field_name("parameters")))
        elif node.type == "declaration":  # `dim3 threads;`: declared, without a value
            for decl in node.children_by_field_name("declarator"):
                if decl.type == "identifier":
                    table.setdefault(ts.text(decl), []).append((decl.start_byte, _visible_to(node, scope), decl, None))
    tables[scope] = table
    return table


def _visible_to(node: Node, scope: Node) -> int:
    at = node.parent
    while at is not None and at != scope and at.type not in _DECLARATION_SCOPES:
        at = at.parent
    return at.end_byte if at is not None else scope.end_byte


def declaration_of(name: str, scope: Node | None, before: int, tables: dict) -> tuple[Node, Node | None] | None:
    """The declarator of `name` in `scope` that byte `before` sees (the last before it whose block holds it),
    with its initializer: the value of `int n = 4`, the braces of `dim3 b{4, 8}`, or the parentheses of
    `dim3 b(Bc, Br)` — which C++ parses as a function declaration when the arguments are names (the most vexing
    parse); None as the value of `dim3 b;`. None when not declared there. `tables`: where the scope's table is
    kept (Unit.declarations)."""
    if scope is None:
        return None
    found = None
    for start, end, node, value in declarations(scope, tables).get(name, ()):
        if start >= before:
            break
        if before < end:
            found = (node, value)
    return found


def writes(scope: Node) -> list[tuple[str, Node]]:
    """Every expression in `scope` that writes a variable or a member of it, or takes its address, with the
    variable's name, in source order."""
    out = []
    for node in ts.walk(scope):
        target = _written(node)
        while target is not None and target.type in ("field_expression", "parenthesized_expression"):
            target = target.child_by_field_name("argument") if target.type == "field_expression" else \
                (target.named_children[0] if target.named_children else None)
        if target is not None and target.type == "identifier":
            out.append((ts.text(target), node))
    return out


def _written(node: Node) -> Node | None:
    """What an assignment, `++`/`--` or `&` writes (or may write), as written; None for other nodes."""
    if node.type == "assignment_expression":
        return node.child_by_field_name("left")
    if node.type == "update_expression":
        return node.child_by_field_name("argument")
    if node.type == "pointer_expression" and ts.text(node.child_by_field_name("operator")) == "&":
        return node.child_by_field_name("argument")
    return None


UNKNOWN = "unknown"  # what `reaching` gives when the text does not fix which value a use sees
_MEMBERS = {"x": 0, "y": 1, "z": 2}
ANY = -1  # a write that may change every member (`&t`, `t.w = …`)
_LOOPS = frozenset(("for_statement", "for_range_loop", "while_statement", "do_statement"))
_BRANCHES = {"if_statement": ("consequence", "alternative"), "conditional_expression": ("consequence", "alternative")}
_UNCONDITIONAL = {  # the parts of a statement that run whenever it does; the others may run or not, or again
    "if_statement": ("condition",), "for_statement": ("initializer", "condition"), "for_range_loop": ("right",),
    "while_statement": ("condition",), "switch_statement": ("condition",), "conditional_expression": ("condition",),
    "binary_expression": ("left", "operator"), "do_statement": (), "case_statement": ("value",),
    "catch_clause": (),
}


def _write_table(scope: Node, tables: dict) -> dict[str, list[tuple[Node, int | None]]]:
    """The writes in `scope` by variable, in source order, each with its member: 0, 1, 2 for `.x`, `.y`, `.z`,
    None for the whole variable, ANY for anything else (made once per scope and table)."""
    key = ("writes", scope)
    table = tables.get(key)
    if table is None:
        table = tables[key] = {}
        for name, node in writes(scope):
            table.setdefault(name, []).append((node, member(node, name)))
    return table


def member(write: Node, name: str) -> int | None:
    """What of `name` a write changes: 0, 1, 2 for `name.x`, `.y`, `.z`; None for the whole variable (`name =
    …`, `name += …`, `++name`); ANY where it may change anything (`&name`, `name.w = …`, `name->x = …`)."""
    target = _unparenthesised(_written(write))
    if target is not None and target.type == "identifier" and write.type != "pointer_expression":
        return None
    if target is not None and target.type == "field_expression" and write.type != "pointer_expression" and \
            ts.text(target.child_by_field_name("operator")) == "." and \
            ts.text(_unparenthesised(target.child_by_field_name("argument"))) == name:
        return _MEMBERS.get(ts.text(target.child_by_field_name("field")), ANY)
    return ANY


def _unparenthesised(node: Node | None) -> Node | None:
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def members_written(name: str, scope: Node | None, tables: dict) -> bool:
    """Whether `scope` writes `name.x`, `.y` or `.z` (a `dim3` given its members one by one)."""
    return scope is not None and any(m is not None and m != ANY for _, m in _write_table(scope, tables).get(name, ()))


def reaching(name: str, part: int | None, use: Node, scope: Node | None, tables: dict) -> Node | str | None:
    """The write of `name` (of its member `part` 0, 1, 2, or of the whole variable: None) whose value `use` sees:
    the last one before it along every path to it. None when no write reaches it (its declaration's value,
    or its caller's, does); UNKNOWN when which value reaches it is not fixed by the text: a write in a branch or
    loop that does not hold the use, one after it in a loop around both, `&name`, `+=` of an open value."""
    table = _write_table(scope, tables).get(name) if scope is not None else None
    if not table:
        return None
    found = declaration_of(name, scope, use.start_byte, tables)
    declared = found[0] if found is not None else None
    after = declared.end_byte if declared is not None else -1  # writes before it are another variable's
    touching = [w for w, m in table if w.start_byte >= after and not w.start_byte <= use.start_byte < w.end_byte
                and (part is None or m is None or m == ANY or m == part) and
                _declarator(name, w, scope, tables) == declared]  # (not a variable an inner block declares)
    use_path = _ancestors(use, scope)
    seen: Node | str | None = None
    skipped = []
    for write in reversed([w for w in touching if w.end_byte <= use.start_byte]):
        reach = _reach(write, use, use_path)
        if reach == "never":
            skipped.append(write)
            continue
        seen = write if reach == "always" and member(write, name) != ANY else UNKNOWN
        break
    if seen == UNKNOWN:
        return UNKNOWN
    # a loop around the use that the variable lives across: a write in it reaches the use on a later trip
    loops = [n for n in use_path if n.type in _LOOPS and (declared is None or not _repeats(n, declared)) and
             (seen is None or not _repeats(n, seen))]  # (a write every trip makes before the use kills them)
    later = [w for w in touching if w.end_byte > use.start_byte] + skipped
    if any(_repeats(loop, w) for loop in loops for w in later):
        return UNKNOWN
    return seen


def _declarator(name: str, node: Node, scope: Node, tables: dict) -> Node | None:
    found = declaration_of(name, scope, node.start_byte, tables)
    return found[0] if found is not None else None


def _ancestors(node: Node, scope: Node) -> list[Node]:
    out = []
    at = node.parent
    while at is not None:
        out.append(at)
        if at == scope:
            break
        at = at.parent
    return out


def _holds(outer: Node, inner: Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _repeats(loop: Node, node: Node) -> bool:
    """Whether `node` is in the part of `loop` that runs on every trip (not a `for`'s initializer)."""
    first = loop.child_by_field_name("initializer") if loop.type == "for_statement" else None
    return _holds(loop, node) and not (first is not None and _holds(first, node))


def _reach(write: Node, use: Node, use_path: list[Node]) -> str:
    """Whether a write before a use is on every path to it ("always"), on none ("never": the other branch of
    an `if` around both, or a branch that returns first) or on some ("maybe")."""
    path = [write]  # the write and its ancestors below the first that holds the use
    while path[-1].parent is not None and path[-1].parent not in use_path:
        path.append(path[-1].parent)
    if any(n.type == "lambda_expression" for n in path):
        return "maybe"  # it runs when called, and its `return` leaves the lambda only
    conditional = False
    for child, at in pairwise(path):
        if at.type == "compound_statement" and any(
                c.type in ("return_statement", "throw_statement") and c.start_byte >= child.end_byte
                for c in at.named_children):
            return "never"  # the write's branch leaves the function before the use
        conditional |= _conditional(child, at)
    child, at = path[-1], path[-1].parent
    if at is None or (at.type == "for_statement" and _field_of(child, at) == "update"):
        return "maybe"  # (a `for`'s update runs after its body)
    branches = _BRANCHES.get(at.type)
    if branches is not None:
        mine = _field_of(child, at)
        theirs = next((_field_of(c, at) for c in at.children if _holds(c, use)), None)
        if mine in branches and theirs in branches and mine != theirs:
            return "never"
    return "maybe" if conditional else "always"


def _field_of(child: Node, parent: Node) -> str | None:
    for i, c in enumerate(parent.children):
        if c == child:
            return parent.field_name_for_child(i)
    return None


def _conditional(child: Node, parent: Node) -> bool:
    """Whether `child` may not run, or may run more than once, each time `parent` runs."""
    kind = parent.type
    if kind == "binary_expression" and ts.text(parent.child_by_field_name("operator")) not in ("&&", "||"):
        return False
    if kind not in _UNCONDITIONAL:
        return False
    return _field_of(child, parent) not in _UNCONDITIONAL[kind]


def assigned(use: Node, scope: Node | None, tables: dict) -> Node | None:
    """The expression whose value the use of a variable sees: the right side of the plain assignment that
    reaches it, else its declaration's initializer; None when no one expression is (a write in a branch,
    `+=`, a member written, never given a value)."""
    name = ts.text(use)
    seen = reaching(name, None, use, scope, tables)
    if seen is not None:
        plain = seen != UNKNOWN and seen.type == "assignment_expression" and member(seen, name) is None and \
            ts.text(seen.child_by_field_name("operator")) == "="  # type: ignore[union-attr]
        return seen.child_by_field_name("right") if plain else None  # type: ignore[union-attr]
    found = declaration_of(name, scope, use.start_byte, tables)
    return found[1] if found is not None else None


# The forms whose value is their operands' (a memory read, a call, a write, `->` may differ each time they run)
_COMPUTED = frozenset(("binary_expression", "unary_expression", "cast_expression", "conditional_expression",
                       "field_expression", "parenthesized_expression"))
_CONSTANT = frozenset(("number_literal", "char_literal", "true", "false", "sizeof_expression",
                       "qualified_identifier"))


def value_key(node: Node | None, scope: Node, tables: dict) -> tuple | None:
    """What an expression computes, as a key: two expressions met in one pass through a loop body (neither in
    a loop inside it) with equal keys hold the same value, however they are written (`(p / w)` and `p / w`).
    A name is keyed by how many writes and declarations of it end before the use in source order: in one pass
    the code runs in that order, so two uses with no write between them see one value (`i / n` before and
    after `i += 1` differ). None for what may differ each time it runs: a memory read, a call, a write."""
    if node is None:
        return None
    kind = node.type
    if kind in _CONSTANT:
        return ("constant", ts.text(node))
    if kind == "identifier":
        name = ts.text(node)
        return ("name", name, bisect_right(_write_ends(scope, tables).get(name, ()), node.start_byte))
    cast = _cast(node)
    if cast is not None:
        operand = value_key(cast[1], scope, tables)
        return None if operand is None else ("cast", cast[0], operand)
    if kind not in _COMPUTED or (kind == "field_expression" and ts.text(node.child_by_field_name("operator")) != "."):
        return None
    if kind == "field_expression":
        operand = value_key(node.child_by_field_name("argument"), scope, tables)
        return None if operand is None else (".", operand, ts.text(node.child_by_field_name("field")))
    operator = node.child_by_field_name("operator")
    if kind == "unary_expression" and ts.text(operator) not in ("-", "+", "~", "!"):
        return None
    operands = tuple(value_key(n, scope, tables) for n in node.named_children if n.type != "comment")
    if kind == "parenthesized_expression" and len(operands) == 1:
        return operands[0]
    return None if not operands or None in operands else (kind, ts.text(operator) if operator else "", operands)


def _cast(node: Node) -> tuple[str, Node | None] | None:
    """The type and operand of `(T)x` or `static_cast<T>(x)`; None for any other node."""
    if node.type == "cast_expression":
        return ts.text(node.child_by_field_name("type")), node.child_by_field_name("value")
    function = node.child_by_field_name("function") if node.type == "call_expression" else None
    if function is None or function.type != "template_function" or \
            ts.text(function.child_by_field_name("name")) != "static_cast":
        return None
    types, operands = (ts.arguments(n.child_by_field_name("arguments")) for n in (function, node))
    return (ts.text(types[0]), operands[0]) if len(types) == 1 and len(operands) == 1 else None


def _write_ends(scope: Node, tables: dict) -> dict[str, list[int]]:
    """Per variable of `scope`, where each write and declaration of it ends, in order (made once per scope)."""
    key = ("write ends", scope)
    table = tables.get(key)
    if table is None:
        ends: dict[str, list[int]] = {}
        for name, writes_of in _write_table(scope, tables).items():
            ends.setdefault(name, []).extend(w.end_byte for w, _ in writes_of)
        for name, declared in declarations(scope, tables).items():
            ends.setdefault(name, []).extend(node.end_byte for _, _, node, _ in declared)
        table = tables[key] = {name: sorted(e) for name, e in ends.items()}
    return table
