"""`ast.parse` for code that runs in threads (a wide search parses several Coder replies at once, the server's
threads parse what a save changed).

CPython 3.11 keeps the AST constructor's recursion depth in state shared by all threads, so two `ast.parse` at
once can fail with `SystemError: AST constructor recursion depth mismatch` (python/cpython#106905; seen here in a
beam search's expansion). One lock makes the parses take turns: a parse is milliseconds, a search's reply seconds.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """`ast.parse(source, filename, mode)`, one at a time in this process; raises what it raises."""
    with _LOCK:
        return ast.parse(source, filename, mode)
