"""Server-initiated work-done progress (`window/workDoneProgress/create` + `$/progress` begin/report/end),
with the client's cancel button wired to a callback. A client without progress support gets nothing."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

logger = logging.getLogger("cudalens.server")
_TOKENS = itertools.count(1)


class WorkDone:
    def __init__(
        self, server: LanguageServer, title: str, on_cancel: Callable[[], None] | None = None
    ) -> None:
        self._server = server
        self.title = title
        self.token = f"cudalens-{next(_TOKENS)}"
        self._on_cancel = on_cancel
        self._live = False

    def _supported(self) -> bool:
        window = self._server.client_capabilities.window
        return bool(window and window.work_done_progress)

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
        if self._on_cancel is not None:
            future = progress.tokens.get(self.token)
            if future is not None:
                on_cancel = self._on_cancel
                future.add_done_callback(lambda f: f.cancelled() and on_cancel())
        progress.begin(self.token, types.WorkDoneProgressBegin(
            title=self.title, message=message or None, cancellable=self._on_cancel is not None, percentage=0,
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
