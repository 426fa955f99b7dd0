"""Small syntactic questions the rules ask of tree-sitter nodes: where an operand sits, whether a node is in
a loop or in a compile-time context, the nodes of some types under a root."""

from __future__ import annotations

from itertools import pairwise

from cudalens.analysis import ts_binding as ts

Node = ts.Node
_LOOPS = ("for_statement", "while_statement", "do_statement")


def lineage(node: Node, stop: Node | None) -> list[Node]:
    """`node` and its ancestors below `stop`, innermost first (up to the root when `node` is not under `stop`).
    Found in one descent from `stop`: tree-sitter keeps no parent pointers and each `Node.parent` walks down
    from the root, so climbing d levels by it costs d² (a kernel's 250 divisions 250 levels deep: 0.2 s)."""
    if stop is not None and node != stop and stop.start_byte <= node.start_byte and node.end_byte <= stop.end_byte:
        path, at = [], stop
        while at != node:
            below = at.child_with_descendant(node)
            if below is None or below == at:
                break
            path.append(below)
            at = below
        else:
            return path[::-1]
    chain, parent = [node], node.parent
    while parent is not None and parent != stop:
        chain.append(parent)
        parent = parent.parent
    return chain


def enclosing_function(node: Node | None, lambdas: bool = True) -> Node | None:
    """The function definition `node` is in (itself included), or with `lambdas` the innermost lambda or
    definition; None at file level."""
    kinds = ("function_definition", "lambda_expression") if lambdas else ("function_definition",)
    while node is not None and node.type not in kinds:
        node = node.parent
    return node


def enclosing_loop(node: Node, stop: Node) -> Node | None:
    """The loop whose every iteration runs `node` (not a `for` initializer, which runs once)."""
    chain = lineage(node, stop)
    for child, parent in pairwise(chain):
        if parent.type in _LOOPS and parent.child_by_field_name("initializer") != child:
            return parent
    return None


def operand_of(node: Node) -> tuple[Node, Node | None]:
    """The operand a literal forms with the signs and parentheses around it (`-(0.5)`), and its parent."""
    operand = node
    parent = node.parent
    while parent is not None and (parent.type == "parenthesized_expression" or (
            parent.type == "unary_expression" and ts.text(parent.child_by_field_name("operator")) in "+-")):
        operand, parent = parent, parent.parent
    return operand, parent


def in_compile_time_context(node: Node, stop: Node) -> bool:
    """Inside a template argument list, a `constexpr`/`static_assert`, an array size: folded by the compiler."""
    if node == stop:
        return False
    chain = lineage(node, stop)
    for node, parent in pairwise([*chain, None]):
        if node.type in ("template_argument_list", "static_assert_declaration") or (
                node.type == "declaration" and "constexpr" in ts.text(node).split("=")[0]):
            return True
        if parent is not None and parent.type == "array_declarator" and parent.child_by_field_name("size") == node:
            return True
    return False


def find(root: Node | None, capture: str, query: str | None = None) -> list[Node]:
    """The nodes under `root` that `capture` names in `queries/<query>.scm` (by default the one-pattern query
    `syntax_<capture>.scm`), in source order."""
    if root is None:
        return []
    found = ts.captures("cuda", query or f"syntax_{capture}", root).get(capture, [])
    return sorted(found, key=lambda n: n.start_byte)


def assigned_names(root: Node | None) -> set[str]:
    """The variables a statement assigns or declares (`x` of `x = …`, `x.y += …`, `a[i]++`, `int x = …`)."""
    out = set()
    for node in find(root, "assigned"):
        while node.type in ("field_expression", "subscript_expression", "parenthesized_expression",
                            "pointer_declarator", "array_declarator", "reference_declarator"):
            inner = node.child_by_field_name("argument") or node.child_by_field_name("declarator") or (
                node.named_children[0] if node.named_children else None)
            if inner is None:
                break
            node = inner
        if node.type == "identifier":
            out.add(ts.text(node))
    return out


def read_only_array(name: str, scope: Node, after: int) -> bool:
    """Whether every use of the array `name` in `scope` from byte `after` on reads an element (`a[i]`): none
    writes one (`a[i] = …`, `a[i].x += …`, `a[i]++`), takes an address (`&a[i]`) or lets the array go anywhere
    (`f(a)`, `p = a`, `sizeof a`)."""
    for use in find(scope, "identifier"):
        if use.start_byte < after or ts.text(use) != name:
            continue
        read = use.parent
        if read is None or read.type != "subscript_expression" or read.child_by_field_name("argument") != use:
            return False
        place, outer = read, read.parent
        while outer is not None and (outer.type == "parenthesized_expression" or (
                outer.type in ("field_expression", "subscript_expression")
                and outer.child_by_field_name("argument") == place)):
            place, outer = outer, outer.parent  # (`a[i].x`, `a[i][j]`: still the array's element)
        if outer is None:
            continue
        if outer.type == "update_expression" or (outer.type == "pointer_expression" and ts.text(
                outer.child_by_field_name("operator")) == "&") or (
                outer.type == "assignment_expression" and outer.child_by_field_name("left") == place):
            return False
    return True


def loop_invariant(expression: Node, loop: Node) -> bool:
    """Whether an expression has one value in every iteration of `loop`: no variable of it is assigned or
    declared in the loop (its header included), and it reads no memory and calls nothing (`n / d`,
    `blockIdx.x / k`). The compiler computes such an expression once, before the loop."""
    if find(expression, "memory_read"):
        return False
    names = {ts.text(n) for n in find(expression, "identifier")}
    return not names & assigned_names(loop)


_DIVIDING = ("binary_expression", "assignment_expression")


def divisions(root: Node | None) -> list[Node]:
    """The `/`, `%`, `/=` and `%=` expressions under `root`, in source order (an enclosing one before the one
    it starts with: `a / b / c` before its `a / b`), found by their operator token (queries/syntax_division.scm)."""
    found = (op.parent for op in find(root, "division"))
    return sorted((n for n in found if n is not None and n.type in _DIVIDING), key=lambda n: (n.start_byte, -n.end_byte))
