"""The stored API key reaches the server through its own pipe (server/key_pipe.py), never its environment block."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from lsptools import WAIT_S, server_command

KEY = "sk-through-the-pipe-1234"


def start_with_pipe(tmp_path: Path) -> tuple[subprocess.Popen, int, Path]:
    read_end, write_end = os.pipe()
    log = tmp_path / "server.log"
    server = subprocess.Popen(server_command(str(log)), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              env={**os.environ, "CUDALENS_SECRETS_FD": str(read_end)}, pass_fds=(read_end,),
                              cwd=tmp_path)
    os.close(read_end)
    return server, write_end, log


def logged(log: Path, text: str) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return True
        time.sleep(0.05)
    return False


def test_the_key_comes_through_the_pipe_and_never_into_the_environment_block(tmp_path: Path):
    server, pipe, log = start_with_pipe(tmp_path)
    try:
        time.sleep(0.2)  # the server is loading: the editor's secret storage answers later
        os.write(pipe, json.dumps({"MY_CODER_KEY": KEY, "CUDALENS_API_KEY": KEY}).encode())
        inode = os.fstat(pipe).st_ino
        os.close(pipe)
        assert logged(log, "the stored key came from the editor: $MY_CODER_KEY, $CUDALENS_API_KEY")
        block = Path(f"/proc/{server.pid}/environ").read_bytes()
        assert KEY.encode() not in block and b"MY_CODER_KEY" not in block
        assert KEY not in log.read_text()
        # and the server closed its end once read: no child it starts can inherit it
        fds = {os.readlink(f) for f in Path(f"/proc/{server.pid}/fd").iterdir()}
        assert f"pipe:[{inode}]" not in fds
    finally:
        server.kill()
        server.wait()


def test_a_broken_message_is_one_line_and_no_key(tmp_path: Path):
    server, pipe, log = start_with_pipe(tmp_path)
    try:
        os.write(pipe, b'{"MY_CODER_KEY": "' + KEY.encode())  # cut short: the editor died while writing
        os.close(pipe)
        assert logged(log, "the stored key could not be read from the editor's pipe: JSONDecodeError")
        assert KEY not in log.read_text()
    finally:
        server.kill()
        server.wait()
