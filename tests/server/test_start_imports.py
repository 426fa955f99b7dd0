"""Starting the server imports only what answering a keystroke needs: the Coder (the optimize loop and the
`openai` package, ≈ 0.9 s) and the report's charts (matplotlib, ≈ 0.7 s) wait for the first command that uses
them (tests/server/test_optimize.py drives those commands through the server); the on-save steps, the Judge, the
profiler's findings and the GPU commands (≈ 0.2–0.3 s, a quarter of a new window's wait for its first
diagnostics: benchmarks/first_diagnostics.py) for the first save, hover, lens or command. Run in a fresh
interpreter: this one has imported everything by now."""

from __future__ import annotations

import subprocess
import sys

LATER = (
    "openai",
    "matplotlib",
    "cudalens.agents.coder.client",
    "cudalens.agents.optimize_loop",
    "cudalens.agents.optimize_run",
    "cudalens.agents.search.policies",
    "cudalens.agents.judge",
    "cudalens.profiler.compile_findings",
    "cudalens.profiler.ncu.profile",
    "cudalens.profiler.run_findings",
    "cudalens.server.gpu_commands",
    "cudalens.server.verdicts",
    "cudalens.server.last_run",
    "cudalens.server.lens",
)

START = f"""
import sys
import cudalens.server.main
from cudalens.server.app import create_server
create_server()
early = [name for name in {LATER!r} if name in sys.modules]
assert not early, "imported at server start: " + ", ".join(early)
"""


def test_starting_the_server_imports_neither_the_coder_nor_the_gpu_side() -> None:
    done = subprocess.run([sys.executable, "-c", START], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]

