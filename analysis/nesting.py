"""How deep a declaration's tree goes, and the limit past which the analyzer leaves it out.

The lane interpreter and the rules follow the tree recursively (Python's limit: 1,000 frames), tree-sitter's
query cursor keeps one pending match per open ancestor, and `Node.parent` walks down from the root: each costs
more with depth, so a 20,000-term sum (`a[0] + a[1] + ...`, a left-deep tree of 20,000 levels) took 50 s and
then passed as if clean. A declaration deeper than MAX_NESTING is measured here, in one walk of a tree cursor
(no recursion, linear in its nodes), and left out of the unit (unit.py) with what made it deep, which the
CL002 finding says (rules/code_not_analysed.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.bounded_cache import remember

Node = ts.Node

# Levels of the syntax tree below a file-scope declaration. Clang's own limit on nested brackets is 256
# (-fbracket-depth); real kernels reach about 20. The interpreter takes at most 2 Python frames a level
# (eval → binary → eval), so 256 levels and the callers' frames stay well under Python's 1,000.
MAX_NESTING = 256

# What made a tree deep, by the node kind that repeats most on its deepest path (ties: the first listed):
# kind → how the message says it, given how many of that kind the path holds.
_CONSTRUCTS: dict[str, str] = {
    "binary_expression": "an expression of {terms:,} terms",
    "parenthesized_expression": "parentheses nested {count:,} deep",
    "if_statement": "`if` statements nested {count:,} deep",
    "for_statement": "`for` loops nested {count:,} deep",
    "while_statement": "`while` loops nested {count:,} deep",
    "do_statement": "`do` loops nested {count:,} deep",
    "switch_statement": "`switch` statements nested {count:,} deep",
    "call_expression": "calls nested {count:,} deep",
    "subscript_expression": "subscripts nested {count:,} deep",
    "conditional_expression": "conditional expressions nested {count:,} deep",
    "assignment_expression": "{count:,} chained assignments",
    "comma_expression": "an expression of {terms:,} comma-separated parts",
    "field_expression": "a chain of {count:,} member accesses",
    "unary_expression": "{count:,} unary operators in a row",
    "pointer_expression": "{count:,} `*` or `&` operators in a row",
    "cast_expression": "{count:,} casts in a row",
    "initializer_list": "initializer lists nested {count:,} deep",
    "compound_statement": "blocks nested {count:,} deep",  # a block right inside a block (an `if`'s is not)
}


# the repeated kind names what made a tree deep when it makes at least 1/_SHARE of its levels (a `switch`
# takes 3: the statement, its body and a case; a lambda called in place 4)
_SHARE = 5


@dataclass(frozen=True)
class Deep:
    """A declaration deeper than MAX_NESTING: how deep, what made it so, and where that starts."""

    depth: int
    what: str  # "an expression of 20,000 terms"
    outermost: Node  # the outermost node of the repeated kind on the deepest path (the whole sum)


_CACHE_LIMIT = 4096
# the texts of declarations measured and found within the limit: the editor re-measures only what changed
_shallow: dict[bytes, bool] = {}


def too_deep(node: Node) -> Deep | None:
    """What makes `node`'s tree deeper than MAX_NESTING levels, or None."""
    if node.descendant_count <= MAX_NESTING:
        return None  # too few nodes to be that deep: most declarations, without reading their text
    key = hashlib.blake2b(node.text or b"", digest_size=16).digest()
    if key in _shallow:
        return None
    depth, index = _deepest(node)
    if depth <= MAX_NESTING:
        remember(_shallow, key, True, _CACHE_LIMIT)
        return None
    return _describe(node, depth, index)


def _deepest(node: Node) -> tuple[int, int]:
    """(the depth of the deepest node under `node`, its pre-order index), in one walk of a cursor."""
    cursor = node.walk()
    depth = best = best_index = 0
    while True:
        if cursor.goto_first_child():
            depth += 1
            if depth > best:
                best, best_index = depth, cursor.descendant_index
            continue
        while depth > 0 and not cursor.goto_next_sibling():
            cursor.goto_parent()
            depth -= 1
        if depth == 0:
            return best, best_index


def _describe(node: Node, depth: int, index: int) -> Deep:
    """The kind that repeats most on the path down to the deepest node, named as _CONSTRUCTS says."""
    cursor = node.walk()
    cursor.goto_descendant(index)
    counts: dict[str, int] = {}
    outermost: dict[str, Node] = {}
    below = ""
    while cursor.goto_parent():  # a cursor keeps its path: each step up is O(1), unlike Node.parent
        here = cursor.node
        kind = here.type
        if kind in _CONSTRUCTS and (kind != "compound_statement" or below == kind):
            counts[kind] = counts.get(kind, 0) + 1
            outermost[kind] = here
        below = kind
    kind = max(_CONSTRUCTS, key=lambda k: counts.get(k, 0))  # max keeps the first of equal counts
    count = counts.get(kind, 0)
    if count * _SHARE < depth:  # no one construct makes it deep (`a + b` at the bottom of something else)
        return Deep(depth, f"nesting {depth:,} levels deep", node)
    return Deep(depth, _CONSTRUCTS[kind].format(count=count, terms=count + 1), outermost[kind])
