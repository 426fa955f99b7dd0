"""A good citizen: exits with its editor, shuts down promptly with work in flight, takes its children along."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsptools import WAIT_S, kernel, open_doc, server_command, start
from procs import gone, wait_for
from pytest_lsp import LanguageClient

from cudalens.profiler import processes

# The "editor": starts the server with a stdin it does not own, says its pid, and exits when told to.
EDITOR = """
import subprocess, sys
server = subprocess.Popen(sys.argv[2:], stdin=int(sys.argv[1]), stdout=open(sys.argv[1] + ".out", "wb"),
                          pass_fds=(int(sys.argv[1]),))
print(server.pid, flush=True)
sys.stdin.readline()
"""


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_server_exits_when_its_editor_dies(tmp_path: Path):
    read_end, write_end = os.pipe()
    out = Path(f"{read_end}.out").resolve()
    editor = subprocess.Popen(
        [sys.executable, "-c", EDITOR, str(read_end), *server_command()],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(read_end,), cwd=Path.cwd(),
    )
    os.close(read_end)  # the server's stdin stays open: only the editor's death can end it
    try:
        server_pid = int(editor.stdout.readline())
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"processId": editor.pid, "rootUri": tmp_path.as_uri(), "capabilities": {}}}
        os.write(write_end, frame(init))
        wait_for(lambda: out.exists() and b'"id": 1' in out.read_bytes().replace(b'"id":1', b'"id": 1'),
                 "the initialize response")
        os.write(write_end, frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        assert not gone(server_pid)
        editor.stdin.write(b"bye\n")
        editor.stdin.flush()
        editor.wait()
        wait_for(lambda: gone(server_pid), "the server to notice its editor is gone")
    finally:
        os.close(write_end)
        editor.kill()
        out.unlink(missing_ok=True)


async def test_shutdown_returns_with_work_in_flight(bare_client: LanguageClient):
    await start(bare_client, bare_client.root)
    big = "\n".join(kernel("strided.cu").replace("scale_columns", f"scale_{i}") for i in range(150))
    for i in range(5):
        open_doc(bare_client, bare_client.root / f"big{i}.cu", big)
    await bare_client.shutdown_session()  # returns although analyses are queued
    assert bare_client._server.returncode == 0


def test_children_process_groups_are_killed():
    # a child that starts a grandchild in its own group: both must die
    child = processes.start(["sh", "-c", "sleep 60 & sleep 60"], stdout=subprocess.DEVNULL)
    time.sleep(0.2)
    group = child.pid
    processes.kill_all()
    child.popen.wait(timeout=WAIT_S)
    wait_for(lambda: not _group_has_members(group), "the grandchild to die")


def _group_has_members(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return any(not gone(int(p)) for p in _pids_in_group(pgid))


def _pids_in_group(pgid: int) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid:
                found.append(entry)
    return found


def test_tcp_mode_for_debugging(tmp_path: Path):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([*server_command(), "--tcp", f"127.0.0.1:{port}"])
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
                break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline, "the server never listened"
                time.sleep(0.1)
        with conn:
            conn.sendall(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}))
            received = b""
            while b"capabilities" not in received:
                chunk = conn.recv(65536)
                assert chunk, "the connection closed"
                received += chunk
    finally:
        server.kill()
        server.wait()


def test_serve_command_line():
    import argparse

    from cudalens.server.main import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--tcp", "127.0.0.1:2087", "--log-file", "x.log"])
    assert args.tcp == "127.0.0.1:2087" and args.log_file == "x.log"
    bad = subprocess.run([*server_command(), "--tcp", "nonsense"], capture_output=True, text=True, timeout=WAIT_S)
    assert bad.returncode == 2 and "HOST:PORT" in bad.stderr and bad.stdout == ""


@pytest.mark.parametrize("pull", [False, True], ids=["pushed", "pulled"])
def test_the_start_up_jobs_run_once_the_first_diagnostics_are_out(tmp_path: Path, pull: bool):
    """`cudalens serve` loads with the cyclic collector off and holds back the launch index
    (app.after_first_diagnostics): both must come once the first diagnostics leave, pushed or pulled (VS Code
    pulls), not only after the 10 s timer."""
    log = tmp_path / "server.log"
    source = tmp_path / "k.cu"
    source.write_text(kernel("strided.cu"))
    capabilities = {"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": True}}} \
        if pull else {}
    server = subprocess.Popen(server_command(str(log)), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd=tmp_path)
    try:
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": capabilities}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": source.as_uri(), "languageId": "cuda-cpp", "version": 1, "text": source.read_text()}}},
        ]
        if pull:
            messages.append({"jsonrpc": "2.0", "id": 2, "method": "textDocument/diagnostic",
                             "params": {"textDocument": {"uri": source.as_uri()}}})
        for message in messages:
            server.stdin.write(frame(message))
        server.stdin.flush()
        # the jobs run one after another (the collector first, then the launch index): wait for the last
        wait_for(lambda: log.exists() and "launch index: " in log.read_text(errors="replace"),
                 "the start-up jobs to run")
        text = log.read_text(errors="replace")
        assert "start-up jobs: after the first diagnostics" in text, text
        assert "start-up garbage collected" in text
    finally:
        server.kill()
        server.wait()
