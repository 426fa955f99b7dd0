"""The API key from VS Code's secret storage, through a pipe the extension opens beside stdio.

Reading the secret storage takes 0.04–0.46 s in a new code-server window, and the server used to be started only
once it was read: the key went into its environment. Now the extension starts the server at once with
`CUDALENS_SECRETS_FD` naming an inherited pipe and writes `{"VARIABLE": "key", ...}` into it when the storage
answers (or nothing, and closes it). A thread here reads it to its end and puts each value into `os.environ`
(never into the environment block `/proc/<pid>/environ` shows; child_env keeps it from every child, as it kept
the variable the extension used to set). The only reader, the Coder's check for a key (server/coder_setup.py),
waits for it first. Without the variable (Neovim, a terminal, an older extension) there is nothing to wait for.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading

logger = logging.getLogger("cudalens.server")

VARIABLE = "CUDALENS_SECRETS_FD"
WAIT_S = 10.0  # the longest a Coder request waits for the editor's answer
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAX_BYTES = 1 << 16
_done = threading.Event()
_done.set()


def receive() -> None:
    """Start reading the pipe `CUDALENS_SECRETS_FD` names, if any (call once, first thing in `serve`)."""
    value = os.environ.pop(VARIABLE, None)
    if value is None:
        return
    try:
        fd = int(value)
        os.set_inheritable(fd, False)  # no child gets the pipe, even before it is read and closed
    except (ValueError, OSError) as exc:
        logger.warning("%s=%r is not an open pipe (%s): no stored key", VARIABLE, value, exc)
        return
    _done.clear()
    threading.Thread(target=_read, args=(fd,), daemon=True, name="cudalens-key").start()


def wait() -> None:
    """Until the editor's answer is in (at most WAIT_S)."""
    if not _done.wait(WAIT_S):
        logger.warning("the editor did not send the stored key within %g s", WAIT_S)


def _read(fd: int) -> None:
    try:
        data = b""
        while chunk := os.read(fd, 4096):
            data += chunk
            if len(data) > _MAX_BYTES:
                raise ValueError("more than 64 KiB")
        values = json.loads(data) if data.strip() else {}
        if not isinstance(values, dict):
            raise ValueError("not an object")
        names = [name for name, key in values.items()
                 if isinstance(name, str) and _NAME.match(name) and isinstance(key, str) and key]
        for name in names:
            os.environ[name] = values[name]
        if names:
            logger.info("the stored key came from the editor: %s", ", ".join(f"${name}" for name in names))
    except (OSError, ValueError) as exc:  # never the text: it may hold the key
        logger.warning("the stored key could not be read from the editor's pipe: %s", type(exc).__name__)
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
        _done.set()
