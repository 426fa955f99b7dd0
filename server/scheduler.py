"""When to analyse: per document, after a short quiet time, off the event loop, newest version wins.

- A new request for a document replaces the one waiting (debounce); a job already running in the analysis
  thread finishes, but its result is dropped because the version moved on.
- The quiet time applies only within a burst: the first edit after a pause waits only `BURST_WINDOW_S`, so a
  single keystroke does not pay the debounce. That little wait lets the messages already on their way be
  handled first: a burst sent back to back (a paste, a formatter's edits, a client faster than the analysis)
  is then analysed once, after its last edit, instead of once at its first edit, which the last edit then waited
  behind (benchmarks/server_latency.py: 40 edits back to back, last one → its diagnostics).
- Results are delivered only if the document is still open at the same version (never stale diagnostics).
- One analysis thread: analyses are CPU-bound under the GIL, and a document's `DocumentAnalyzer` is never
  touched by two threads. Jobs wait in a queue ordered by kind (an edit before an open before a re-check)
  and then newest first, so typing stays responsive while fifty freshly opened files are still being analysed.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from enum import IntEnum

from cudalens.server.documents import Analysed, DocState

logger = logging.getLogger("cudalens.server")

Analyse = Callable[[DocState, "int | None", str], Analysed]
Deliver = Callable[[DocState, Analysed], None]


BURST_WINDOW_S = 0.003  # a few messages' handling; what an isolated keystroke pays


class Priority(IntEnum):
    EDIT = 0
    OPEN = 1
    RECHECK = 2


class Scheduler:
    def __init__(self, analyse: Analyse, deliver: Deliver, on_error: Callable[[DocState, BaseException], None]):
        self._analyse = analyse
        self._deliver = deliver
        self._on_error = on_error
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cudalens-analysis")
        self._waiting: dict[str, asyncio.TimerHandle] = {}  # debouncing
        self._ready: dict[str, tuple[Priority, int, DocState]] = {}  # queued for the analysis thread
        self._running: str | None = None
        self._worker: asyncio.Task | None = None
        self._order = itertools.count()
        self._last_request: dict[str, float] = {}
        self._closed = False
        self._ran_at = self._took = 0.0  # of the last analysis, for the debug log

    def request(self, state: DocState, delay_s: float = 0.0, priority: Priority = Priority.EDIT) -> None:
        """Analyse `state` at its current version after `delay_s` of quiet."""
        if self._closed:
            return
        now = time.monotonic()
        last = self._last_request.get(state.uri, float("-inf"))
        self._last_request[state.uri] = now
        if not self.pending(state.uri) and now - last >= delay_s:
            delay_s = min(delay_s, BURST_WINDOW_S)  # not in a burst (yet)
        self._unqueue(state.uri)
        loop = asyncio.get_running_loop()
        if delay_s > 0:
            self._waiting[state.uri] = loop.call_later(delay_s, self._enqueue, state, priority)
        else:
            self._enqueue(state, priority)

    def cancel(self, uri: str) -> None:
        self._last_request.pop(uri, None)
        self._unqueue(uri)

    def pending(self, uri: str) -> bool:
        return uri in self._waiting or uri in self._ready or self._running == uri

    def close(self) -> None:
        """Stop everything now; a job running in the thread is abandoned, not awaited."""
        self._closed = True
        for timer in self._waiting.values():
            timer.cancel()
        self._waiting.clear()
        self._ready.clear()
        if self._worker is not None:
            self._worker.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _unqueue(self, uri: str) -> None:
        timer = self._waiting.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self._ready.pop(uri, None)

    def _enqueue(self, state: DocState, priority: Priority) -> None:
        self._waiting.pop(state.uri, None)
        if self._closed or state.closed:
            return
        self._ready[state.uri] = (priority, -next(self._order), state)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._work())

    async def _work(self) -> None:
        while self._ready and not self._closed:
            uri = min(self._ready, key=lambda u: self._ready[u][:2])
            state = self._ready.pop(uri)[2]
            self._running = uri
            try:
                await self._run(state)
            finally:
                self._running = None

    async def _run(self, state: DocState) -> None:
        version, text = state.version, state.text
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        try:
            result = await loop.run_in_executor(self._executor, self._timed_analyse, state, version, text)
        except asyncio.CancelledError:
            raise
        except RuntimeError as exc:
            if self._closed:  # the executor was shut down under us
                return
            self._on_error(state, exc)
            return
        except Exception as exc:
            self._on_error(state, exc)
            return
        if state.closed or state.version != version:
            logger.debug("dropped the result for %s version %s (now %s)", state.path, version, state.version)
            return
        try:
            self._deliver(state, result)
        except Exception as exc:  # a bug in delivering must not stop the queue
            self._on_error(state, exc)
            return
        logger.debug(
            "%s v%s: waited %.1f ms for the analysis thread, analysed in %.1f ms, delivered %.1f ms after",
            state.path, version, (self._ran_at - started) * 1000, self._took * 1000,
            (time.perf_counter() - self._ran_at - self._took) * 1000,
        )

    def _timed_analyse(self, state: DocState, version: int | None, text: str) -> Analysed:
        self._ran_at = time.perf_counter()
        try:
            return self._analyse(state, version, text)
        finally:
            self._took = time.perf_counter() - self._ran_at
