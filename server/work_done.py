"""Server-initiated work-done progress (`window/workDoneProgress/create` + `$/progress` begin/report/end),
with the client's cancel button wired to a callback. A client without progress support gets nothing.

A command's run (command_runs.py) holds one progress for all it does: a job inside it that asks for progress of
its own (the on-save steps of Run tests) gets a `Stage` of it instead, so the editor shows one spinner whose
message is the job's stage, and the cancel button stops that job."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

logger = logging.getLogger("cudalens.server")
_TOKENS = itertools.count(1)
# The progress of the command being run in this task (set by command_runs.run_command), if any.
CURRENT: ContextVar[WorkDone | None] = ContextVar("cudalens_command_progress", default=None)


class WorkDone:
    def __init__(
        self, server: LanguageServer, title: str, on_cancel: Callable[[], None] | None = None
    ) -> None:
        self._server = server
        self.title = title
        self.token = f"cudalens-{next(_TOKENS)}"
        self.on_cancel = on_cancel  # read when the user cancels: a Stage swaps in its own while it runs
        self._live = False

    @property
    def live(self) -> bool:
        return self._live

    def _supported(self) -> bool:
        window = self._server.client_capabilities.window
        return bool(window and window.work_done_progress)

    def _cancelled(self) -> None:
        if self.on_cancel is not None:
            self.on_cancel()

    async def begin(self, message: str = "") -> None:
        if not self._supported():
            return
        progress = self._server.work_done_progress
        try:
            await progress.create_async(self.token)
        except Exception as exc:  # the client refused: work without a progress bar
            logger.info("the client refused a progress token: %s", exc)
            return
        self._live = True
        if self.on_cancel is not None:
            future = progress.tokens.get(self.token)
            if future is not None:
                future.add_done_callback(lambda f: f.cancelled() and self._cancelled())
        progress.begin(self.token, types.WorkDoneProgressBegin(
            title=self.title, message=message or None, cancellable=self.on_cancel is not None, percentage=0,
        ))

    def report(self, message: str, percentage: int | None = None) -> None:
        if self._live:
            self._server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )

    def end(self, message: str | None = None) -> None:
        if self._live:
            self._live = False
            progress = self._server.work_done_progress
            progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            progress.tokens.pop(self.token, None)


class Stage:
    """A job's progress inside a command's: begin and report become the command's stage messages; end hands the
    cancel button back. The command's own end says how it went."""

    def __init__(self, outer: WorkDone, on_cancel: Callable[[], None] | None) -> None:
        self._outer, self._on_cancel, self._before = outer, on_cancel, None

    async def begin(self, message: str = "") -> None:
        self._before = self._outer.on_cancel
        if self._on_cancel is not None:
            self._outer.on_cancel = self._on_cancel
        if message:
            self._outer.report(message)

    def report(self, message: str, percentage: int | None = None) -> None:
        self._outer.report(message, percentage)

    def end(self, message: str | None = None) -> None:
        self._outer.on_cancel = self._before


def progress_for(server: LanguageServer, title: str, on_cancel: Callable[[], None] | None = None) -> WorkDone | Stage:
    """A job's progress: a stage of the running command's, or one of its own (on save, the optimize loop)."""
    outer = CURRENT.get()
    if outer is not None and outer.live:
        return Stage(outer, on_cancel)
    return WorkDone(server, title, on_cancel)
