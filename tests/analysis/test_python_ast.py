"""Parses from many threads at once (a wide search's Coder replies): on CPython 3.11 two `ast.parse` at once
could fail with "AST constructor recursion depth mismatch" (seen in CI in a beam search's expansion)."""

import gc
import sys
import threading
import time
from pathlib import Path

from cudalens.analysis import python_ast

SOURCE = (Path(__file__).resolve().parents[2] / "benchmarks" / "search_standin.py").read_text() * 2


def test_parses_in_eight_threads_under_gc_pressure_all_succeed():
    # thread switches inside the AST constructor: a tiny switch interval, and a collection (with a Python
    # callback, which may switch) every few allocations; without the lock this failed about once in 240 parses
    errors: list[BaseException] = []

    def work() -> None:
        for _ in range(15):
            try:
                python_ast.parse(SOURCE)
            except BaseException as exc:  # the test counts anything a parse raised
                errors.append(exc)

    def callback(phase: str, info: dict) -> None:
        time.sleep(0)

    interval, threshold = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.callbacks.append(callback)
    gc.set_threshold(50)
    try:
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        gc.callbacks.remove(callback)
        gc.set_threshold(*threshold)
        sys.setswitchinterval(interval)
    assert errors == []


def test_a_syntax_error_is_raised_as_it_is():
    try:
        python_ast.parse("def (:\n", "x.py")
    except SyntaxError as exc:
        assert exc.filename == "x.py"
    else:
        raise AssertionError("no SyntaxError")
