"""`cudalens serve --warm`: the first window's server starts a warm one for the next; the next window's server is
forked from it, serves exactly as a fresh one would, in the window's folder, and goes when the window's process
goes. Real processes, real sockets, a real LSP conversation; the session's warm server is stopped at the end."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest
from lsptools import WAIT_S, RawConnection, kernel
from procs import children, gone, wait_for, warm_server, warm_servers

SECRET = "sk-warm-start-test-not-a-key"


@pytest.fixture
def cache():
    # a short path: a Unix socket's is at most 107 bytes, and pytest's tmp_path leaves too few of them
    folder = Path(tempfile.mkdtemp(prefix="cl-warm-"))
    yield folder
    for pid in warm_servers(folder):  # nothing of this test outlives it, a warm server still starting included
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda pid=pid: gone(pid), "the warm server to stop")
    shutil.rmtree(folder, ignore_errors=True)


def window(cache: Path, folder: Path, new_session: bool = False, **env: str) -> RawConnection:
    folder.mkdir(exist_ok=True)
    return RawConnection(command=[sys.executable, "-m", "cudalens", "serve", "--warm", "--log-file", "/dev/null"],
                         env={**os.environ, "XDG_CACHE_HOME": str(cache), **env}, cwd=folder,
                         new_session=new_session)


def first_window(cache: Path, folder: Path, new_session: bool = False) -> list[dict]:
    """The session's first window serves itself and, once its first diagnostics are out, starts the warm server
    (waited for here) before it closes; its diagnostics."""
    first = window(cache, folder, new_session)
    try:
        first.initialize(folder)
        assert not warm_servers(cache), "the warm server waits for this window's first diagnostics"
        found = diagnose(first, folder)
        wait_for(lambda: warm_server(cache) is not None, "the warm server the first window started", timeout=WAIT_S)
        assert first.close() == 0
    finally:
        first.kill()
    return found


def diagnose(server: RawConnection, folder: Path) -> list[dict]:
    return server.diagnostics(server.open(folder / "strided.cu", kernel("strided.cu")), 1)


# VS Code starts its server in the editor's session; Neovim starts each in a session of its own (`detached`)
@pytest.mark.parametrize("new_session", [False, True], ids=["vscode", "neovim"])
def test_the_next_window_is_forked_from_the_warm_server(cache, tmp_path, new_session):
    expected = first_window(cache, tmp_path / "one", new_session)
    assert expected, "the kernel has findings"
    warm = warm_server(cache)
    warm_env = Path(f"/proc/{warm}/environ").read_bytes()
    assert SECRET.encode() not in warm_env and b"OPENAI_API_KEY" not in warm_env  # started from the clean environment

    second = window(cache, tmp_path / "two", new_session, OPENAI_API_KEY=SECRET)
    try:
        assert "capabilities" in second.initialize(tmp_path / "two")["result"]
        assert [d["code"] for d in diagnose(second, tmp_path / "two")] == [d["code"] for d in expected]
        forks = children(warm)
        assert len(forks) == 1, "the second window's server is the warm server's fork"
        server = forks[0]
        assert os.readlink(f"/proc/{server}/cwd") == str(tmp_path / "two")  # the window's folder, not the warm one's
        assert SECRET.encode() not in Path(f"/proc/{server}/environ").read_bytes()  # not in its environment block
        second.proc.kill()  # the window's process goes: its server goes with it
        wait_for(lambda: gone(server), "the forked server to leave with the window's process")
    finally:
        second.kill()
    assert warm_server(cache) == warm  # the warm server stays for the next window


def test_a_clean_exit_is_the_window_process_exit_code(cache, tmp_path):
    first_window(cache, tmp_path / "one")
    second = window(cache, tmp_path / "two")
    try:
        second.initialize(tmp_path / "two")
        started = time.monotonic()
        assert second.close() == 0  # shutdown then exit: 0, through the fork's report
        assert time.monotonic() - started < WAIT_S
        second.proc.wait()
        third = window(cache, tmp_path / "three")
        third.initialize(tmp_path / "three")
        third.send({"jsonrpc": "2.0", "method": "exit"})  # exit without shutdown: 1, as LSP says
        assert third.proc.wait(timeout=WAIT_S) == 1
    finally:
        second.kill()


def test_a_window_outliving_the_warm_server_does_not_keep_the_next_from_starting(cache, tmp_path):
    # the fork closes the warm server's lock and socket: once the warm server is gone (its session, an idle hour, a
    # kill), the next window starts a new one although an older window's server still runs
    first_window(cache, tmp_path / "one")
    warm = warm_server(cache)
    second = window(cache, tmp_path / "two")
    try:
        second.initialize(tmp_path / "two")
        (forked,) = children(warm)
        os.kill(warm, signal.SIGTERM)
        wait_for(lambda: gone(warm), "the warm server to stop")
        assert not gone(forked), "a window's server does not go with the warm server"
        third = window(cache, tmp_path / "three")  # no warm server: serves itself and starts the next one
        try:
            assert "capabilities" in third.initialize(tmp_path / "three")["result"]
            diagnose(third, tmp_path / "three")
            wait_for(lambda: warm_server(cache) not in (None, warm), "a new warm server")
        finally:
            third.kill()
    finally:
        second.kill()
