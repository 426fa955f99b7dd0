"""`cudalens serve --warm`: a new window's server forked from one that has already loaded, instead of a fresh
interpreter importing pygls, lsprotocol and the analysis (issue 38: ≈ 0.35 s of a new window's wait on a quiet
two-core machine, seconds on a loaded one; the fork answers `initialize` in ≈ 0.1 s and its first analysis is
warm too).

Opt-in, per user and per session, on the warm workers' terms (worker/warm.py): a small server (this module run
as a program) imports what `cudalens serve` imports, analyses one small kernel so that the first analysis's
one-time costs are paid, and listens on a Unix socket in `~/.cache/cudalens/warm/` (0700; the socket 0600; a
peer of another user is refused). The socket is named by the session, the interpreter and a stamp of the
installed code, so an edited or upgraded cudalens gets a new one. It starts from the clean environment (no
secret reaches it) in a session of its own, and exits once its anchor (the session's leader, or the command's
parent) is gone or after `IDLE_S` without a window.

`cudalens serve --warm` (the process the editor starts) hands its stdin, stdout, stderr and the key pipe
(server/key_pipe.py) with its environment, working folder and options to that server, which forks: the child
takes them over and is the language server from there, exactly as `cudalens serve` would have been. The process
the editor started stays, waiting, and leaves with the child's exit code; the child leaves when that process
goes (its end of the socket closes) as it leaves when the editor closes its stdin or dies. With no warm server
listening, `serve --warm` starts one for the next window and serves this one itself.
"""

from __future__ import annotations

import argparse
import array
import contextlib
import gc
import hashlib
import json
import os
import signal
import socket
import struct
import sys
import threading
from pathlib import Path

IDLE_S = 3600.0  # no window for this long: the server exits (it holds ≈ 100 MB and nothing else)
_HEADER_MAX = 1 << 22  # an environment of 4 MB is already absurd
_HELLO = b"cudalens-serve-1"  # the first message, with the descriptors
_FDS = 4  # stdin, stdout, stderr and the key pipe (when the editor opened one)
_EXIT = struct.Struct("!i")
SAMPLE = """
__global__ void warm(const float* in, float* out, int n) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i * 2] : 0.0f;
    __syncthreads();
    if (threadIdx.x % 2 == 0) out[i] = tile[255 - threadIdx.x];
}
void launch(const float* in, float* out, int n) { warm<<<(n + 255) / 256, 256>>>(in, out, n); }
"""


def socket_path() -> Path:
    """This session's socket for a warm server of this interpreter and this installed code."""
    from cudalens.worker.warm import session_socket

    return session_socket(json.dumps([os.path.realpath(sys.executable), code_stamp()]), ".lsp.sock")


def code_stamp() -> str:
    """The installed cudalens's files, their sizes and times: a server forked from older code is never used."""
    import importlib.util

    import cudalens

    digest = hashlib.sha256()
    folders = [Path(cudalens.__file__).parent]
    for part in cudalens.PARTS:  # each mapped to a folder of its own (an editable install maps them to the clone's)
        spec = importlib.util.find_spec(f"cudalens.{part}")
        folders += [Path(p) for p in (spec.submodule_search_locations or ())] if spec else []
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            with contextlib.suppress(OSError):
                stat = path.stat()
                digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


# -- the side of the process the editor started ------------------------------------------------------------------


def hand_over(path: Path, options: list[str]) -> int | None:
    """This process's stdio, key pipe, environment and folder to the warm server at `path`; the forked server's
    exit code once it has exited, or None when no warm server took them (this process serves)."""
    from cudalens.server.key_pipe import VARIABLE
    from cudalens.worker.warm import connect

    conn = connect(path)
    if conn is None:
        return None

    secrets = os.environ.get(VARIABLE, "")
    fds = [0, 1, 2, *([int(secrets)] if secrets.isdigit() else [])]
    # the environment goes to the fork alone: the warm server reads only the descriptors (no key reaches it)
    header = json.dumps({"env": dict(os.environ), "cwd": os.getcwd(), "options": options}).encode()
    with conn:
        try:
            conn.sendmsg([_HELLO], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
            conn.sendall(struct.pack("!I", len(header)) + header)
            taken = _received(conn, _EXIT.size)
        except OSError:
            taken = None
        if taken is None:  # refused or failed before it took our stdio: this process serves
            return None
        try:
            code = _received(conn, _EXIT.size)
        except OSError:
            code = None
        return 1 if code is None else _EXIT.unpack(code)[0]  # None: it was killed before it could say


def _received(conn: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def start(path: Path) -> None:
    """A warm server for the next window (worker/warm.py's start_detached). Two windows starting one each is
    harmless: the second finds the first's lock."""
    from cudalens.worker.warm import WarmUnavailable, start_detached

    with contextlib.suppress(WarmUnavailable):  # this window is served either way
        start_detached("cudalens.server.warm_start", path, [])


# -- the warm server -----------------------------------------------------------------------------------------------


def serve(path: Path, session: int, idle_s: float = IDLE_S) -> int:
    from cudalens.server.main import load
    from cudalens.worker.warm import accept_while_anchored, hold_lock, listen

    lock = hold_lock(path)  # held for the server's life
    if lock is None:
        return 0  # another window's warm server of this socket is up
    code = load()
    from cudalens.analysis.api import analyze_text

    analyze_text("warm.cu", SAMPLE)  # the first analysis's one-time costs, paid before any window waits
    # the imports' garbage collected here once, the rest frozen: each fork's settle_heap (lifecycle) then walks
    # only what its own window allocated (collecting the inherited heap took a fork 0.23–0.47 s in a window)
    gc.collect()
    gc.freeze()
    listener = listen(path)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the forks are reaped by the kernel
    print(f"warm server ready: {path}", flush=True)
    # the fork must not keep the listener, nor the lock: a window's server outliving this one would hold it, and
    # the next warm server could never start
    mine = (listener, lock)
    accept_while_anchored(listener, path, session, idle_s, lambda conn: _fork_one(conn, mine, code))
    return 0


def _fork_one(conn: socket.socket, mine: tuple, code: object) -> None:
    conn.settimeout(5.0)
    fds = array.array("i")
    try:
        hello, ancillary, _, _ = conn.recvmsg(len(_HELLO), socket.CMSG_SPACE(_FDS * fds.itemsize))
        for level, kind, raw in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(raw[: len(raw) - len(raw) % fds.itemsize])
    except OSError as exc:
        print(f"a window's request refused: {exc}", flush=True)
        hello = b""
    if hello != _HELLO or not 3 <= len(fds) <= _FDS:
        for fd in fds:
            os.close(fd)
        return
    if os.fork() == 0:
        for held in mine:
            held.close()
        _become(conn, list(fds), code)  # never returns
    for fd in fds:
        os.close(fd)


def _become(conn: socket.socket, fds: list[int], code: object) -> None:
    """In the fork: read the window's environment, folder and options, take its stdio, be its language server."""
    from cudalens.server import lifecycle
    from cudalens.server.key_pipe import VARIABLE
    from cudalens.server.main import parser, run_server

    try:
        os.setsid()  # a session of its own, apart from the warm server's
        size = struct.unpack("!I", _received(conn, 4) or b"")[0]
        if size > _HEADER_MAX:
            raise ValueError(f"a header of {size} bytes")
        header = json.loads(_received(conn, size) or b"")
        args = parser().parse_args(header["options"])
        os.chdir(header["cwd"])
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in header["env"].items()})
        for target, fd in zip((0, 1, 2), fds, strict=False):
            os.dup2(fd, target)
        if len(fds) > 3:
            os.dup2(fds[3], 3)
            os.environ[VARIABLE] = "3"
        else:
            os.environ.pop(VARIABLE, None)
        for fd in fds:
            if fd > 3:
                os.close(fd)
        conn.settimeout(None)
        conn.sendall(_EXIT.pack(0))  # taken: the editor's process waits for the exit code from here
    except (OSError, ValueError, KeyError, TypeError, struct.error, SystemExit) as exc:
        print(f"a window's server did not start: {exc}", flush=True)
        os._exit(1)

    def window_gone() -> None:  # the process the editor started went away: this server goes with it
        with contextlib.suppress(OSError):
            conn.recv(1)
        lifecycle.hard_exit(1)

    threading.Thread(target=window_gone, daemon=True, name="cudalens-warm-window").start()
    lifecycle.at_exit(lambda: _say(conn, lifecycle.exit_code()))
    run_server(args, code)  # leaves through lifecycle.hard_exit


def _say(conn: socket.socket, code: int) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(_EXIT.pack(code))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cudalens.server.warm_start", description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", required=True)
    parser.add_argument("--session", type=int, required=True, help="the pid whose end ends the server")
    parser.add_argument("--idle", type=float, default=IDLE_S)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    return serve(Path(args.socket), args.session, args.idle)


if __name__ == "__main__":
    raise SystemExit(main())
