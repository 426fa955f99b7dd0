"""The only module that calls the py-tree-sitter binding (pinned: tree-sitter 0.26, tree-sitter-cuda 0.21,
tree-sitter-python 0.25), so an API change of the binding touches this file alone."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path

import tree_sitter
import tree_sitter_cuda
import tree_sitter_python

Node = tree_sitter.Node
Tree = tree_sitter.Tree
Point = tree_sitter.Point

QUERY_DIR = Path(__file__).parent / "queries"


@cache
def cuda_language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_cuda.language())


@cache
def python_language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_python.language())


def parse_cuda(source: bytes, old_tree: Tree | None = None) -> Tree:
    parser = tree_sitter.Parser(cuda_language())
    return parser.parse(source, old_tree) if old_tree is not None else parser.parse(source)


def parse_python(source: bytes) -> Tree:
    return tree_sitter.Parser(python_language()).parse(source)


@cache
def query(language: str, name: str) -> tree_sitter.Query:
    """A query from `queries/<name>.scm`; capture names are the contract with the Python that reads them."""
    lang = cuda_language() if language == "cuda" else python_language()
    return tree_sitter.Query(lang, (QUERY_DIR / f"{name}.scm").read_text(encoding="utf-8"))


def captures(language: str, name: str, node: Node) -> dict[str, list[Node]]:
    return tree_sitter.QueryCursor(query(language, name)).captures(node)


def matches(language: str, name: str, node: Node) -> list[tuple[int, dict[str, list[Node]]]]:
    return tree_sitter.QueryCursor(query(language, name)).matches(node)


def text(node: Node) -> str:
    raw = node.text  # each access copies the bytes out of the tree: once
    return raw.decode("utf-8", errors="replace") if raw is not None else ""


def arguments(node: Node | None) -> list[Node]:
    """The items of an argument list (a call's, a launch's, a template's, a `dim3`'s): its named children less
    the comments between them (`f(// CTA scratch\n tid, ...)`: a comment is a named node, not an argument, and
    counting it bound every later argument to the wrong parameter)."""
    return [c for c in node.named_children if c.type != "comment"] if node is not None else []


def walk(node: Node) -> Iterator[Node]:
    """The named nodes under `node`, itself first, in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.named_children))


def identifiers(node: Node) -> set[str]:
    """The names of the identifiers under `node`."""
    return {text(n) for n in walk(node) if n.type == "identifier"}


def error_count(tree: Tree) -> int:
    """The ERROR and MISSING nodes of a tree. Descends only into subtrees that have one (`has_error`): on a
    3,500-line file that takes well under a millisecond, where a query over the whole tree takes ~100 ms."""
    count = 0
    stack = [tree.root_node] if tree.root_node.has_error else []
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            count += 1
            continue
        stack.extend(child for child in node.children if child.has_error)
    return count
