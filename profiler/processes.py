"""Every child process cudalens starts (nvcc, ncu, compute-sanitizer, a worker, a warm ncu target, a helper
interpreter) starts here: in its own process group (a kill takes what it started too: cicc, ptxas, the target
under ncu, a job's children), from the clean environment (`child_env.clean_env`), and registered, so that every
way out of this process kills every group it started: a timeout or a cancel (`run`, `CancelToken`), the end of
the `with` block that owns a child, the child's own exit (its stragglers), a server's shutdown, exit, editor
death or signal (`kill_all` / `close`, from server/lifecycle.py), and interpreter exit (`atexit`).

What this cannot do is run after SIGKILL of this process: a worker then sees its parent change and leaves, a
warm ncu target reads end-of-file on its stdin; an nvcc runs to its end (bounded by the compile itself).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, TypeVar

from cudalens.profiler.child_env import clean_env

_lock = threading.RLock()  # re-entrant: a signal handler on a thread that holds it may kill everything
_children: set[Child] = set()
_closed = False


class Closing(OSError):
    """This process is exiting: no child may start any more (it would outlive us)."""


class Cancelled(Exception):
    """The run was cancelled (`CancelToken.cancel`); its child is dead."""


class Child:
    """A started child process, leader of its own process group."""

    def __init__(self, popen: subprocess.Popen, *, reap: bool) -> None:
        self.popen = popen
        self.pid = popen.pid
        if reap:
            threading.Thread(target=self._reap, daemon=True, name=f"cudalens-reap-{self.pid}").start()

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL the whole group (the leader and whatever it started), reap the leader, forget it."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)  # SIGKILL waits on nothing: this is quick
        with _lock:
            _children.discard(self)

    def _reap(self) -> None:
        """For a long-lived child nobody waits on (a standby, a worker): once it exits, kill what it left in its
        group while its zombie still holds the group's number, then reap it, so no zombie stays behind."""
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        self.kill()

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def start(
    args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None,
    stdin: int | IO[Any] | None = subprocess.DEVNULL, stdout: int | IO[Any] | None = subprocess.PIPE,
    stderr: int | IO[Any] | None = subprocess.PIPE, text: bool = False, reap: bool = False,
) -> Child:
    """Start `args` in a new session; `env` is added to the clean environment. `reap`: a thread reaps it when
    it exits (for children kept around). Raises `OSError` (`Closing` once this process is exiting)."""
    with _lock:
        if _closed:
            raise Closing(f"not starting {args[0]}: cudalens is exiting")
        popen = subprocess.Popen(
            list(args), env=clean_env(env), cwd=cwd, stdin=stdin, stdout=stdout, stderr=stderr,
            text=text, errors="replace" if text else None, start_new_session=True, close_fds=True,
        )
        child = Child(popen, reap=reap)
        _children.add(child)
    return child


class CancelToken:
    """Cancels runs from another thread: their children's groups are killed and `run` raises `Cancelled`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[Child] = set()
        self.cancelled = False

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            running = list(self._running)
        for child in running:
            child.kill()

    @contextlib.contextmanager
    def watching(self, child: Child) -> Iterator[None]:
        """While the block runs, `cancel()` kills `child`; `Cancelled` is raised after a cancelled block (in
        place of what it returned)."""
        with self._lock:
            if not self.cancelled:
                self._running.add(child)
        if self.cancelled:
            child.kill()
        try:
            yield
        finally:
            with self._lock:
                self._running.discard(child)
        if self.cancelled:
            raise Cancelled


T = TypeVar("T")


def which(name: str) -> str | None:
    """`shutil.which` over the absolute entries of PATH only: a relative entry (`.`, `bin`, an empty one) is
    looked up from the current folder, which may be the repository just opened, and would run its `nvcc`."""
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return shutil.which(name, path=os.pathsep.join(e for e in entries if os.path.isabs(e)))


async def in_thread(call: Callable[[CancelToken], T]) -> T:
    """`call(token)` in a thread, off the event loop; cancelling the awaiting task kills its running children."""
    import asyncio  # here: `cudalens serve --warm` and `check` load this module and never run an event loop

    token = CancelToken()
    future = asyncio.get_running_loop().run_in_executor(None, call, token)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        token.cancel()
        # the thread ends with Cancelled; take it so asyncio does not log it as unretrieved
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        raise


def watched(cancel: CancelToken | None, child: Child) -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext() if cancel is None else cancel.watching(child)


@dataclass(frozen=True)
class Finished:
    command: tuple[str, ...]
    returncode: int | None  # None: killed on timeout
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def output(self) -> str:
        return self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr


def run(
    args: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike | None = None, input: str | None = None, cancel: CancelToken | None = None,
) -> Finished:
    """Run `args` to its end or `timeout` (then its group is killed and `timed_out` set), text in and out.
    A command that cannot start finishes with 127 and the reason on stderr; `cancel` raises `Cancelled`."""
    command = tuple(str(a) for a in args)
    try:
        child = start(command, env=env, cwd=cwd, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                      text=True)
    except OSError as exc:
        if isinstance(exc, Closing):
            raise
        return Finished(command, 127, "", f"{command[0]}: {exc.strerror or exc}")
    with child, watched(cancel, child):
        try:
            out, err = child.popen.communicate(input, timeout=timeout)
            return Finished(command, child.popen.returncode, out or "", err or "")
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.popen.communicate()
            return Finished(command, None, out or "", err or "", timed_out=True)


def die_with_parent(parent: int) -> None:
    """In a child that cudalens forks without exec (a `cudalens check` pool process): the kernel sends it SIGTERM
    when `parent` dies, SIGKILL included (PR_SET_PDEATHSIG; it fires when the forking thread ends, so fork from
    a thread that lives as long as the children, the main one), and SIGTERM kills its own children (an nvcc of
    `--compile`) and leaves. Ctrl-C is the parent's to handle: the terminal sends it to the whole group."""
    import ctypes

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, _close_and_leave)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # it died before the prctl
        _close_and_leave(signal.SIGTERM, None)


def _close_and_leave(number: int, _frame: object) -> None:
    close()
    os._exit(128 + number)


_PR_SET_PDEATHSIG = 1


def running() -> list[Child]:
    with _lock:
        return list(_children)


def kill_all() -> None:
    """Kill every child's group (a server's shutdown, a cancel of everything)."""
    for child in running():
        child.kill()


def close() -> None:
    """This process is leaving: no child starts from now on, and every one running is killed."""
    global _closed
    with _lock:
        _closed = True
    kill_all()


atexit.register(close)
