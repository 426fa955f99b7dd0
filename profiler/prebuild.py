"""Builds the extensions of several files at once, each in its own process (the profile target with zero
calls), so that the slow cold `load_inline` builds overlap and later tests, timings and profiles find them
in torch's extension cache."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cudalens.profiler import processes
from cudalens.worker.jobs import child_command


@dataclass(frozen=True)
class Build:
    path: str
    ok: bool
    seconds: float
    message: str = ""


def prebuild(paths: list[str], *, python: str = sys.executable, timeout: float = 600.0, workers: int = 8,
             cancel: processes.CancelToken | None = None) -> list[Build]:
    """`cancel` kills the builds in flight (`processes.Cancelled` is raised)."""

    def one(path: str) -> Build:
        with tempfile.TemporaryDirectory(prefix="cudalens-build-") as tmp:
            payload = Path(tmp) / "payload.json"
            payload.write_text(json.dumps({"path": str(Path(path).resolve()), "reps": 0}))
            start = time.monotonic()
            run = processes.run(child_command(python, "jobs.profile_target", str(payload)), timeout=timeout, cancel=cancel)
            tail = run.output.strip().splitlines()[-1] if run.output.strip() else ""
            return Build(path, run.returncode == 0, time.monotonic() - start, "timed out" if run.timed_out else tail)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, paths))


def prebuild_source(source: str, *, python: str = sys.executable, timeout: float = 600.0,
                    cancel: processes.CancelToken | None = None) -> Build:
    """`prebuild` of a source that is not a file yet (a search's candidate), from a scratch folder of its own."""
    with tempfile.TemporaryDirectory(prefix="cudalens-build-ahead-") as folder:
        path = Path(folder) / "candidate.py"
        path.write_text(source, encoding="utf-8")
        [build] = prebuild([str(path)], python=python, timeout=timeout, workers=1, cancel=cancel)
    return build
