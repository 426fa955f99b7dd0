"""A warm worker the CLI reuses across its invocations (`cudalens test --warm`): torch imported, the CUDA context
made and CUPTI started once, then each command of the same terminal session sends its job there instead of
starting a worker of its own.

Opt-in, per user and per session. A small server (this module run as a program) holds a `WorkerPool` and listens
on a Unix socket in `$XDG_CACHE_HOME/cudalens/warm/`: a folder only its user may enter (0700, else no warm worker),
the socket 0600, and a peer of another user is refused. The socket is named by the session, the interpreter, the
working folder and the environment given to the worker, so a command reuses only a worker it would have started
the same way. The server starts from the clean environment (child_env: no secret reaches it or its worker) in
its own session; it runs one job at a time, cancels a job whose command went away (Ctrl-C), and exits, its worker
with it, after `IDLE_S` without a job or once its anchor is gone: the session's leader (the terminal's shell) or,
where that leader is outside this PID namespace (a container's or CI's shell: `getsid` says 0), the command's parent.

Messages on the socket are the worker protocol's lines: a `JobRequest` in, `Progress` and a `JobResult` out.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from cudalens.profiler.child_env import clean_env
from cudalens.worker.child.protocol import (
    PROTOCOL_VERSION,
    Failure,
    JobRequest,
    JobResult,
    Progress,
    ProtocolError,
    decode,
    encode,
)
from cudalens.worker.pool import GPU_WARMUP, WorkerPool
from cudalens.workspace.user_cache import NotPrivate, private_dir

IDLE_S = 900.0  # a warm worker with no job for this long exits (it holds a CUDA context and GPU memory)
START_S = 30.0  # how long a command waits for the server it started to listen
_SOCKET_PATH_MAX = 107  # sun_path's bytes on Linux, less its NUL


class WarmUnavailable(RuntimeError):
    """No warm worker can serve this command (why, in one line): it runs a worker of its own."""


def warm_dir() -> Path:
    """`cache_home()/warm`, made 0700 (user_cache.private_dir)."""
    try:
        return private_dir("warm")
    except NotPrivate as exc:
        raise WarmUnavailable(str(exc)) from None


def anchor() -> int:
    """The process whose end ends this command's warm server: the session's leader when this PID namespace can see
    it, else the command's parent (the shell or script that ran it), else the command itself (no reuse). A process
    its editor started in a session of its own (Neovim starts each language server `detached`) is anchored to the
    editor's session: else each would have a session, a socket and a warm server of its own, none ever reused."""
    sid = os.getsid(0)
    if sid == os.getpid():
        with contextlib.suppress(OSError):
            sid = os.getsid(os.getppid())
    if sid > 0 and _start_time(sid) is not None:
        return sid
    parent = os.getppid()
    return parent if parent > 0 and _start_time(parent) is not None else os.getpid()


def socket_path(python: str, cwd: str, env: dict[str, str] | None) -> Path:
    """This session's socket for a worker of `python` in `cwd` with `env`."""
    key = json.dumps([os.path.realpath(python), os.path.realpath(cwd), sorted((env or {}).items()),
                      str(Path(__file__).resolve().parent), PROTOCOL_VERSION])
    return session_socket(key, ".sock")


def session_socket(key: str, suffix: str) -> Path:
    """`warm_dir()/<anchor>-<digest of key><suffix>`: a warm server's socket, its `.lock` and `.log` beside it,
    this session's and only for what `key` says; WarmUnavailable where the path is too long for a socket."""
    path = warm_dir() / f"{anchor()}-{hashlib.sha256(key.encode()).hexdigest()[:16]}{suffix}"
    if len(os.fsencode(path)) > _SOCKET_PATH_MAX:
        raise WarmUnavailable(f"{path} is too long for a Unix socket")
    return path


# -- the command's side ----------------------------------------------------------------------------------------


def run_job(
    kind: str, payload: dict, *, timeout_s: float, python: str | None = None, cwd: str | None = None,
    env: dict[str, str] | None = None, gpu: Callable[[], bool] = lambda: False,
    on_progress: Callable[[str, float | None], None] | None = None,
) -> JobResult:
    """The job on this session's warm worker, started (warming up for a GPU when `gpu()`, asked only then) when
    there is none; raises `WarmUnavailable` when none can be reached, before the job was sent."""
    python, cwd = python or sys.executable, cwd or os.getcwd()
    path = socket_path(python, cwd, env)
    conn = connect(path)
    if conn is None:
        server = _start_server(path, python, cwd, env, gpu())
        deadline = time.monotonic() + START_S
        while conn is None and time.monotonic() < deadline:
            time.sleep(0.05)
            conn = connect(path)
            if conn is None and server.poll():  # it failed (0: another command's server holds the socket)
                said = path.with_suffix(".log").read_text(errors="replace").strip().splitlines()
                raise WarmUnavailable(f"its server exited: {said[-1] if said else server.returncode}")
        if conn is None:
            raise WarmUnavailable(f"its server did not listen within {START_S:g} s (log: {path.with_suffix('.log')})")
    request = JobRequest(f"job-{os.getpid()}-warm", kind, payload, timeout_s)
    with conn:
        conn.sendall((encode(request) + "\n").encode())
        heard = False
        for raw in conn.makefile("rb"):
            message = decode(raw)
            heard = True
            if isinstance(message, Progress) and on_progress is not None:
                on_progress(message.message, message.fraction)
            elif isinstance(message, JobResult):
                return message
            elif isinstance(message, Failure):
                raise WarmUnavailable(f"its server refused the job: {message.message}")
    if not heard:  # it was leaving (idle) as the job came: nothing ran
        raise WarmUnavailable("its server closed the connection")
    return JobResult(request.id, kind, "crash", error="the warm worker's server went away during the job")


def connect(path: Path) -> socket.socket | None:
    """A connection to the server at `path`; None where none listens (or its socket is stale)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
    except OSError:  # none, or a stale socket of a server that is gone
        conn.close()
        return None
    return conn


def _start_server(path: Path, python: str, cwd: str, env: dict[str, str] | None, gpu: bool) -> subprocess.Popen:
    """The server, in a session of its own (it outlives this command) and from the clean environment."""
    args = ["--python", python, "--cwd", cwd, "--env", json.dumps(env or {}), *(["--gpu"] if gpu else [])]
    return start_detached("cudalens.worker.warm", path, args, cwd)


def start_detached(module: str, path: Path, args: list[str], cwd: str | None = None) -> subprocess.Popen:
    """`python -m module --socket path --session anchor() args`: a warm server in a session of its own (it
    outlives the command that starts it, until its anchor ends), from the clean environment (no secret reaches
    it), its output in `path`'s `.log` (0600); WarmUnavailable where it cannot be started."""
    import cudalens

    here = str(Path(cudalens.__file__).resolve().parent.parent)  # cudalens importable from any `cwd`
    path_var = os.pathsep.join(filter(None, (here, os.environ.get("PYTHONPATH"))))
    log = os.open(path.with_suffix(".log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        return subprocess.Popen([sys.executable, "-m", module, "--socket", str(path), "--session", str(anchor()),
                                 *args], env=clean_env({"PYTHONPATH": path_var}), cwd=cwd,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                                close_fds=True)
    except OSError as exc:
        raise WarmUnavailable(f"cannot start its server: {exc.strerror}") from None
    finally:
        os.close(log)


def hold_lock(path: Path) -> IO[str] | None:
    """`path`'s `.lock`, locked for as long as the file returned stays open (a warm server's life); None when
    another server of that socket holds it (two commands or windows started one each)."""
    lock = open(path.with_suffix(".lock"), "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return None
    return lock


# -- the server ------------------------------------------------------------------------------------------------


def serve(path: Path, python: str, cwd: str, env: dict[str, str], session: int, gpu: bool,
          idle_s: float = IDLE_S) -> int:
    lock = hold_lock(path)  # held for the server's life
    if lock is None:
        return 0
    listener = listen(path)
    pool = WorkerPool(python=python, env=env or None, cwd=cwd, keep_warm=True,
                      warmup=GPU_WARMUP if gpu else {"modules": ["torch"]})
    pool.prestart()
    try:
        accept_while_anchored(listener, path, session, idle_s, lambda conn: _serve_one(conn, pool))
    finally:
        pool.close()
    return 0


def accept_while_anchored(listener: socket.socket, path: Path, session: int, idle_s: float,
                          handle: Callable[[socket.socket], None]) -> None:
    """Each connection of this user to `handle` (then closed), until `session`'s process is gone (or is another
    process of the same number) or `idle_s` pass without one; then the socket is closed and removed."""
    leader = _start_time(session)
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle_s and leader is not None and _start_time(session) == leader:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                if _peer_uid(conn) == os.getuid():
                    handle(conn)
            last = time.monotonic()
    finally:
        listener.close()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def listen(path: Path) -> socket.socket:
    """The server's socket at `path` (0600; a stale one of a server that is gone replaced, ended sessions' files
    pruned), accepting with a 0.5 s timeout so that the server can look at its anchor between windows or jobs."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a stale socket: its server is gone (it held the lock)
    _prune(path.parent)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(mask)
    listener.listen(8)
    listener.settimeout(0.5)
    return listener


def _serve_one(conn: socket.socket, pool: WorkerPool) -> None:
    conn.settimeout(10.0)
    try:
        message = decode(conn.makefile("rb").readline())
    except (OSError, ProtocolError) as exc:
        _send(conn, Failure(f"no job request: {exc}"))
        return
    if not isinstance(message, JobRequest):
        _send(conn, Failure(f"expected a job, got {type(message).__name__}"))
        return
    conn.settimeout(None)
    done = threading.Event()

    def watch() -> None:  # the command went away (Ctrl-C, killed): its job is killed, not finished for no one
        with contextlib.suppress(OSError):
            conn.recv(1)
        if not done.is_set():
            pool.cancel(message.id)

    threading.Thread(target=watch, daemon=True, name="cudalens-warm-watch").start()
    result = pool.run(message, on_progress=lambda progress: _send(conn, progress))
    done.set()
    _send(conn, result)


def _send(conn: socket.socket, message: object) -> None:
    with contextlib.suppress(OSError):
        conn.sendall((encode(message) + "\n").encode())  # type: ignore[arg-type]


def _prune(folder: Path) -> None:
    """The sockets, locks and logs of sessions that have ended."""
    for entry in folder.glob("*-*.*"):
        sid = entry.name.split("-", 1)[0]
        if sid.isdigit() and _start_time(int(sid)) is None:
            with contextlib.suppress(OSError):
                entry.unlink()


def _peer_uid(conn: socket.socket) -> int:
    _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return uid


def _start_time(pid: int) -> str | None:
    """The process's start time (/proc), which tells it from a later process given the same number; None: gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return None if fields[0] == "Z" else fields[19]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cudalens.worker.warm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--session", type=int, required=True, help="the pid whose end ends the server (anchor())")
    parser.add_argument("--env", default="{}")
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--idle", type=float, default=IDLE_S)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a kill's TERM: its worker and socket go too
    return serve(Path(args.socket), args.python, args.cwd, json.loads(args.env), args.session, args.gpu, args.idle)


if __name__ == "__main__":
    raise SystemExit(main())
