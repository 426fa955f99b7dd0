"""The pre-commit hook, for real: a user's repository whose .pre-commit-config.yaml points at a copy of this
repository, `pre-commit run --all-files` installing cudalens into pre-commit's own environment (from PyPI) and
running `cudalens check` on the staged CUDA file."""

from __future__ import annotations

import os
import re
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


README = REPO / "README.md"


def readme_snippets() -> tuple[str, str]:
    """README's pre-commit section, as users copy it: the `.pre-commit-config.yaml` block and the command."""
    section = README.read_text().split("**pre-commit**", 1)[1].split("\n**", 1)[0]
    config = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    command = re.search(r"```sh\n(.*?)```", section, re.S).group(1).strip()
    return config, command


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs the cudalens source repository")
def test_readmes_snippet_verbatim_stops_a_commit_with_a_finding(tmp_path, kernel):
    """README's config with only the repository's URL replaced by a local copy, its `rev` the tag the project's
    own release step (`make release`) makes in that copy, and README's commands (pre-commit is installed here
    already): a commit of a file with a finding is refused."""
    pytest.importorskip("pre_commit", reason="pre-commit (dev extra) runs the hook")
    config, command = readme_snippets()
    assert command.splitlines() == ["pip install pre-commit", "pre-commit install"]
    url = re.search(r"repo: (\S+)", config).group(1)
    rev = re.search(r"rev: (\S+)", config).group(1)
    source, _ = hook_source(tmp_path)
    who = {"GIT_COMMITTER_NAME": "cudalens tests", "GIT_COMMITTER_EMAIL": "tests@cudalens.invalid"}  # a bare CI
    released = subprocess.run(["make", "-s", "release"], cwd=source, env={**os.environ, **who}, capture_output=True,
                              text=True, timeout=60)
    assert released.returncode == 0 and released.stdout.strip() == f"tagged {rev}", released.stdout + released.stderr
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project)
    (project / ".pre-commit-config.yaml").write_text(config.replace(url, source.as_posix()))
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=project, env=env,
                               capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0 and "pre-commit installed" in installed.stdout, installed.stdout + installed.stderr
    bad = kernel("strided_scale.cu")
    (project / "scale.cu").write_text(bad.text)
    git("add", "-A", cwd=project)
    # the hook script runs pre-commit with the interpreter that installed it
    commit = subprocess.run([*GIT, "commit", "-q", "-m", "add a kernel"], cwd=project, env=env,
                            capture_output=True, text=True, timeout=840)
    said = commit.stdout + commit.stderr  # git gives a hook's output on stderr
    assert commit.returncode != 0, said
    ((line, code),) = bad.expected
    assert "cudalens" in said and "Failed" in said and f"scale.cu:{line}:" in said and f" {code} " in said, said
    assert subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=project).returncode != 0  # no commit
