"""The pre-commit hook, for real: a user's repository whose .pre-commit-config.yaml points at a copy of this
repository, `pre-commit run --all-files` installing cudalens into pre-commit's own environment (from PyPI) and
running `cudalens check` on the staged CUDA file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GIT = [
    "git",
    "-c",
    "user.name=cudalens tests",
    "-c",
    "user.email=tests@cudalens.invalid",
    "-c",
    "commit.gpgsign=false",
]


def git(*args: str, cwd: Path) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def hook_source(tmp: Path) -> tuple[Path, str]:
    """A git repository holding this working tree as it is now (committed or not), at one commit."""
    files = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO).split("\0")
    source = tmp / "cudalens-src"
    for name in filter(None, files):
        origin = REPO / name
        if origin.is_file() and not origin.is_symlink():
            target = source / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target)
    git("init", "-q", cwd=source)
    git("add", "-A", cwd=source)
    git("commit", "-q", "-m", "cudalens under test", cwd=source)
    return source, git("rev-parse", "HEAD", cwd=source)


def pre_commit(project: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
    )


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs the cudalens source repository")
def test_the_hook_fails_on_a_finding_and_passes_once_it_is_suppressed(tmp_path, kernel):
    pytest.importorskip("pre_commit", reason="pre-commit (dev extra) runs the hook")
    source, rev = hook_source(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project)
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {source.as_posix()}\n    rev: {rev}\n    hooks:\n      - id: cudalens\n"
    )
    bad = kernel("strided_scale.cu")
    suppressed = bad.suppressed_text
    (project / "scale.cu").write_text(suppressed)
    git("add", "-A", cwd=project)
    home = tmp_path / "pre-commit-home"

    passing = pre_commit(project, home)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "cudalens" in passing.stdout and "Passed" in passing.stdout

    (project / "scale.cu").write_text(bad.text)
    git("add", "-A", cwd=project)
    failing = pre_commit(project, home)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "Failed" in failing.stdout
    ((line, code),) = bad.expected
    assert f"scale.cu:{line}:" in failing.stdout and f" {code} " in failing.stdout

    (project / "scale.cu").write_text(suppressed)
    git("add", "-A", cwd=project)
    assert pre_commit(project, home).returncode == 0


def test_the_hook_manifest_is_valid():
    pytest.importorskip("pre_commit", reason="pre-commit (dev extra) validates the manifest")
    check = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
