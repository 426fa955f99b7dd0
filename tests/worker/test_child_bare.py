"""The child's rule, checked: every file under worker/child/ imports in an interpreter with the standard library
alone (no cudalens, no third-party package), and a real `test` job runs end to end in one that has torch and
nothing else — the setup the `worker.python` setting exists for (issue 33: an import of cudalens in
anti_cheat.py failed every test job there)."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cudalens.worker.child.protocol import JobRequest
from cudalens.worker.jobs import CHILD_DIR
from cudalens.worker.pool import WorkerPool


def _venv(folder: Path, paths: list[Path] = ()) -> Path:
    """A venv without pip or any package; `paths` put on its sys.path by a .pth file."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "torch_only.pth").write_text("".join(f"{p}\n" for p in paths))
    return python


def _top_level(dist: importlib.metadata.Distribution) -> set[str]:
    """The entries a distribution put at the top of its site-packages (packages, modules, its metadata)."""
    names = set()
    for f in dist.files or ():
        head = f.parts[0] if f.parts else ""
        if head and head not in ("..", "__pycache__", "bin") and not head.endswith(".pth"):
            names.add(head)
    return names


def _torch_alone(folder: Path) -> Path:
    """A folder of links to torch and the distributions it requires, transitively, and nothing else."""
    from packaging.requirements import Requirement

    folder.mkdir()
    todo, seen = ["torch"], set()
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # an optional requirement that is not installed
        for entry in _top_level(dist):
            source = Path(dist.locate_file(entry))
            if source.exists() and not (folder / entry).exists():
                (folder / entry).symlink_to(source)
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return folder


def test_every_file_of_the_child_imports_with_the_standard_library_alone(tmp_path):
    python = _venv(tmp_path / "bare")
    script = textwrap.dedent(f"""
        import importlib, pathlib, sys
        sys.path.insert(0, {str(CHILD_DIR)!r})
        import boot
        del sys.path[0]
        root = pathlib.Path(boot.HERE)
        names = sorted(".".join(p.relative_to(root).with_suffix("").parts) for p in root.rglob("*.py"))
        failed = []
        for name in names:
            name = name.removesuffix(".__init__").removesuffix("__init__")
            try:
                boot.module(name) if name else importlib.import_module(boot.package())
            except Exception as exc:
                failed.append(f"{{name}}: {{type(exc).__name__}}: {{exc}}")
        assert "cudalens" not in sys.modules and "torch" not in sys.modules, sorted(sys.modules)
        print(len(names), "files")
        print("\\n".join(failed))
    """)
    out = subprocess.run([python, "-I", "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    count, *failed = out.stdout.strip().split("\n")
    assert [f for f in failed if f] == []
    assert int(count.split()[0]) == len(list(CHILD_DIR.rglob("*.py")))


PROBLEM = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clamp(min=0) + x.clamp(min=0)


def get_inputs():
    return [torch.randn(64, 32)]


def get_init_inputs():
    return []
'''


def test_a_test_job_runs_end_to_end_in_an_interpreter_with_torch_and_nothing_else(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("packaging")
    python = _venv(tmp_path / "env", [_torch_alone(tmp_path / "torch-alone")])
    probe = subprocess.run([python, "-c", "import torch, importlib.util as u; print(u.find_spec('cudalens'))"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert probe.stdout.strip() == "None", probe.stderr  # torch imports, cudalens is not there
    problem = tmp_path / "relu_new.py"
    problem.write_text(PROBLEM)
    pool = WorkerPool(python=str(python), warmup={}, cwd=str(tmp_path))
    try:
        result = pool.run(JobRequest("t", "test", {"path": str(problem), "device": "cpu", "time": True,
                                                   "budget_ms": 5}, 300))
    finally:
        pool.close()
    assert result.status == "ok", result.error
    assert result.payload["test"]["status"] == "passed", result.payload["test"]
    assert result.payload["timing"]["candidate"]["samples_ms"]
