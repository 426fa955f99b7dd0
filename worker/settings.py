"""The worker that runs the user's code (tests, timings, profiles, candidates): the one schema behind the editor's
`worker.*` settings and the defaults of the CLI's `--python`/`--worker-python` and `--timeout`."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from cudalens.worker.child.typed_json import setting


@dataclass(frozen=True)
class WorkerSettings:
    python: str = setting(
        sys.executable, scope="machine-overridable", restricted=True,
        unset="the interpreter the server runs in (VS Code: the one it found the server in)",
        doc="Python interpreter with torch that runs tests, timings, profiles and the Coder's candidates.",
    )
    timeout_seconds: float = setting(300.0, range=(1, 7200), doc="Time limit of one compile/test/profile job, in seconds.")
