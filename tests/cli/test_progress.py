"""The progress line: on a terminal only (a real pseudo-terminal here), and wiped before anything else prints."""

from __future__ import annotations

import io
import os
import pty
import select

from cudalens.cli.progress import FileProgress


def _drain(fd: int) -> str:
    """Everything written to the terminal so far (a pty hands it over in pieces)."""
    data = b""
    while select.select([fd], [], [], 1.0)[0]:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data.decode()


def test_progress_is_drawn_on_a_terminal_and_cleared():
    leader, follower = pty.openpty()
    try:
        with os.fdopen(follower, "w", closefd=False) as stream:
            progress = FileProgress(2, stream)
            assert progress.enabled
            progress.step("a.cu")
            progress.step("kernels/long_name.cu")
            progress.clear()
        shown = _drain(leader)
    finally:
        os.close(leader)
        os.close(follower)
    assert "[1/2] a.cu" in shown and "[2/2] kernels/long_name.cu" in shown
    assert shown.endswith("\r")


def test_no_progress_when_the_stream_is_not_a_terminal():
    stream = io.StringIO()
    progress = FileProgress(5, stream)
    progress.step("a.cu")
    progress.clear()
    assert not progress.enabled and stream.getvalue() == ""
