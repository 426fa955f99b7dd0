"""Helpers for the command-line tests: run `cudalens` in-process or as the installed console script, and real
kernels whose findings come from the real analyzer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from cudalens.cli.main import main

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys, monkeypatch):
    """Runs `cudalens ARGS...` in-process in a folder; returns exit code, stdout and stderr."""

    def run(*args: str, cwd: Path | None = None) -> Result:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def _run_console(*args: str, cwd: Path, stdin: str = "") -> Result:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    env.pop("CUDALENS_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "cudalens", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        env=env,
        timeout=120,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def console():
    """The real entry point in a child process, as a shell or pre-commit would start it."""
    return _run_console


FIXTURES = Path(__file__).parent / "fixtures"
_EXPECT = re.compile(r"expect:\s*(CL\d{3})")


@dataclass(frozen=True)
class Kernel:
    """A real kernel under tests/cli/fixtures; `// expect: CL101` marks each line a finding belongs on."""

    path: Path

    @property
    def text(self) -> str:
        return self.path.read_text()

    @property
    def expected(self) -> list[tuple[int, str]]:
        return [
            (n, m[1]) for n, line in enumerate(self.text.split("\n"), start=1) for m in _EXPECT.finditer(line)
        ]

    @property
    def codes(self) -> list[str]:
        return sorted({code for _, code in self.expected})

    @property
    def suppressed_text(self) -> str:
        """The text with each expectation turned into a suppression comment for its code."""
        return _EXPECT.sub(r"cudalens: ignore[\1]", self.text)

    def copy_to(self, folder: Path, name: str | None = None) -> Path:
        target = folder / (name or self.path.name)
        target.write_text(self.text)
        return target


@pytest.fixture
def kernel():
    return lambda name: Kernel(FIXTURES / name)
