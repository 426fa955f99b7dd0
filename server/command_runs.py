"""Every `workspace/executeCommand` of cudalens runs through `run_command`, however it was started (a lens, a quick
fix, the palette, Neovim's `vim.lsp.buf.execute_command`): work-done progress titled with the command and what it
runs on, the handler's stages as its messages (`stage`, or the job's own progress inside it), a cancel button,
and the answer's message as the progress's end and as a line in the editor's log — in VS Code the cudalens
output, the way back to a result after its notification is gone.

The handlers stay plain: `(server, arguments) -> {"ok", "message", ...}` (commands.py)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from cudalens.server.work_done import CURRENT, WorkDone

if TYPE_CHECKING:
    from cudalens.server.app import CudalensServer
    from cudalens.server.commands import CommandHandler

logger = logging.getLogger("cudalens.server")


def title_of(command: str, title: str, arguments: list[Any]) -> str:
    """`cudalens: Run tests · kernel.cu · my_kernel`: the command's title, the file and the kernel (or entry)."""
    parts = [f"cudalens: {title}"]
    uri = arguments[0] if arguments and isinstance(arguments[0], str) else None
    if uri is not None and "/" in uri:
        parts.append(Path(unquote(urlparse(uri).path)).name or uri)
    if len(arguments) > 1 and isinstance(arguments[1], str) and arguments[1]:
        parts.append(arguments[1])
    return " · ".join(parts)


def outcome(title: str, answer: Any) -> tuple[bool, str]:
    """(ok, message) of a handler's answer: `{"ok", "message"}`, or anything else as "done"."""
    if isinstance(answer, dict) and isinstance(answer.get("message"), str):
        return answer.get("ok") is not False, answer["message"]
    return True, f"{title}: done"


def stage(message: str) -> None:
    """Says what the running command does now (its progress's message); nothing outside a command's run."""
    progress = CURRENT.get()
    if progress is not None:
        progress.report(message)


async def run_command(
    server: CudalensServer, command: str, title: str, handler: CommandHandler, arguments: list[Any]
) -> Any:
    what = title_of(command, title, arguments)
    progress = WorkDone(server, what)
    handler_task: asyncio.Task | None = None
    progress.on_cancel = lambda: handler_task is not None and handler_task.cancel()
    await progress.begin("starting")
    token = CURRENT.set(progress)
    try:  # the handler's task (it copies this context) sees the progress; this one does not keep it
        handler_task = asyncio.ensure_future(handler(server, arguments))
    finally:
        CURRENT.reset(token)
    try:
        answer = await asyncio.shield(handler_task)
    except asyncio.CancelledError:
        if not handler_task.cancelled():  # the editor cancelled the request ($/cancelRequest): as the button does
            if progress.on_cancel is not None:
                progress.on_cancel()  # the job's own stop (a run's pipeline), else the handler's task
            handler_task.cancel()
            progress.end("cancelled")
            logger.info("%s ✗ cancelled", what)
            raise
        answer = {"ok": False, "message": f"{what}: cancelled"}
    except Exception as exc:
        progress.end("failed")
        logger.error("%s failed", what, exc_info=exc)
        raise
    ok, message = outcome(what, answer)
    progress.end(message)
    logger.info("%s %s %s", what, "→" if ok else "✗", message.removeprefix("cudalens: "))
    return answer
