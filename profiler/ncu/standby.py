"""A warm Nsight Compute target for the next profile of a long-lived process (the language server).

Of the ~7 s a profile took on the H200, ~4 s were ncu starting Python, importing torch and making a CUDA
context. A standby is that much done ahead: ncu already running `boot.py jobs.profile_target --standby`, which has
imported torch, made its context and waits on stdin for a payload; ncu profiles only between the target's
`cudaProfilerStart`/`Stop` (`--profile-from-start off`), around the candidate's calls. The caller keeps only the
file's kernels (no `--kernel-name` filter: the standby does not know the next file).

Standbys are kept per (ncu, python, metrics, environment, owner). A caller that is about to profile asks for two:
the one it takes now and a spare that warms while this save is built and tested, so a save that follows right
after finds one ready (one standby alone was still starting: 6.8 s save → hints back to back on the H200 against
4.5 s with 5 s between saves). After each use at least one is kept warm. They are children like any other
(`processes`: their own process group, the clean environment, killed when this process leaves, reaped when they
exit) and die with their stdin too: when this process is killed, the target reads end-of-file and leaves without
running anything.
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cudalens.profiler import processes
from cudalens.profiler.processes import CancelToken, Child, Finished

_STANDBYS: dict[str, list[Standby]] = {}  # oldest first: the one most likely ready
_LOCK = threading.Lock()


@dataclass
class Standby:
    child: Child
    folder: Path  # holds the report and the captured output
    report: Path
    owner: str = ""  # who ends it (ProfileRequest.standby_owner): an optimize run drops its own when it is over

    @property
    def proc(self) -> subprocess.Popen:
        return self.child.popen

    def alive(self) -> bool:
        return self.child.alive()

    def discard(self) -> None:
        self.child.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def key_for(command: list[str], env: dict[str, str] | None, owner: str = "") -> str:
    blob = "\0".join(command) + "\0" + repr(sorted((env or {}).items())) + "\0" + owner
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def start(
    key: str, command_for: Callable[[Path], list[str]], env: dict[str, str] | None, count: int = 1, owner: str = ""
) -> None:
    """Starts standbys for `key` until `count` are alive; `command_for(report)` gives the ncu command line."""
    with _LOCK:
        queue = _STANDBYS.get(key, [])
        alive, dead = [s for s in queue if s.alive()], [s for s in queue if not s.alive()]
        while len(alive) < count:
            started = _spawn(command_for, env, owner)
            if started is None:
                break
            alive.append(started)
        _STANDBYS[key] = alive
    for standby in dead:
        standby.discard()


def _spawn(command_for: Callable[[Path], list[str]], env: dict[str, str] | None, owner: str) -> Standby | None:
    folder = Path(tempfile.mkdtemp(prefix="cudalens-ncu-standby-"))
    report = folder / "profile.ncu-rep"
    try:
        with open(folder / "out.txt", "w") as out:  # the child keeps its own copy of the handle
            child = processes.start(command_for(report), env=env, stdin=subprocess.PIPE, stdout=out,
                                    stderr=subprocess.STDOUT, text=True, reap=True)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return Standby(child, folder, report, owner)


def take(key: str) -> Standby | None:
    """The oldest alive standby for `key` (it is then the caller's, for one run)."""
    dead: list[Standby] = []
    found = None
    with _LOCK:
        queue = _STANDBYS.get(key, [])
        while queue and found is None:
            candidate = queue.pop(0)
            if candidate.alive():
                found = candidate
            else:
                dead.append(candidate)
    for standby in dead:
        standby.discard()
    return found


def run(standby: Standby, payload: Path, timeout: float, cancel: CancelToken | None = None) -> Finished:
    """Hands the payload to the waiting target and waits for ncu to write its report and exit; `cancel` kills
    it (`processes.Cancelled` is raised)."""
    proc = standby.child.popen
    command = tuple(str(a) for a in proc.args)  # type: ignore[union-attr]
    with processes.watched(cancel, standby.child):
        try:
            assert proc.stdin is not None
            proc.stdin.write(f"{payload}\n")
            proc.stdin.close()
        except OSError:  # the target died while it waited: its exit status says how
            pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            standby.child.kill()
            return Finished(command, None, _output(standby), "", timed_out=True)
        return Finished(command, proc.returncode, _output(standby), "")


def drop_owner(owner: str) -> None:
    """Ends every standby `owner` started (an optimize run that is over: its next round will not come)."""
    with _LOCK:
        keys = [k for k, queue in _STANDBYS.items() if any(s.owner == owner for s in queue)]
        standbys = [s for k in keys for s in _STANDBYS.pop(k)]
    for standby in standbys:
        standby.discard()


def close_all() -> None:
    with _LOCK:
        standbys = [s for queue in _STANDBYS.values() for s in queue]
        _STANDBYS.clear()
    for standby in standbys:
        standby.discard()


def _output(standby: Standby) -> str:
    try:
        return (standby.folder / "out.txt").read_text(errors="replace")
    except OSError:
        return ""


atexit.register(close_all)
