"""Fixtures for the VS Code extension's tests: the extension built and packaged by `make vscode`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "vscode-client"


@pytest.fixture(scope="session")
def extension_dir() -> Path:
    """vscode-client/ with its npm dependencies installed and dist/cudalens.vsix packaged (lint and type-check
    pass on the way, or the build fails)."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("node/npm not found: the VS Code extension cannot be built here")
    build = subprocess.run(["make", "--no-print-directory", "vscode"], cwd=REPO, capture_output=True, text=True)
    assert build.returncode == 0, f"make vscode failed:\n{build.stdout[-4000:]}\n{build.stderr[-4000:]}"
    assert (EXTENSION / "dist" / "cudalens.vsix").is_file()
    return EXTENSION


@pytest.fixture(scope="session")
def compiled_tests(extension_dir: Path) -> Path:
    """The unit tests and the end-to-end driver compiled to vscode-client/out/."""
    build = subprocess.run(["npm", "run", "-s", "compile-tests"], cwd=extension_dir, capture_output=True, text=True)
    assert build.returncode == 0, f"tsc failed:\n{build.stdout[-4000:]}\n{build.stderr[-4000:]}"
    return extension_dir / "out"
