"""When to analyse: per document, after a short quiet time, off the event loop, newest version wins.

- A new request for a document cancels the one waiting (debounce); a job already running in the analysis
  thread finishes, but its result is dropped because the version moved on.
- The quiet time applies only within a burst: the first edit after a pause is analysed at once, so a single
  keystroke does not pay the debounce.
- Results are delivered only if the document is still open at the same version (never stale diagnostics).
- One analysis thread: analyses are CPU-bound under the GIL, and a document's `DocumentAnalyzer` is never
  touched by two threads.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from cudalens.server.documents import Analysed, DocState

logger = logging.getLogger("cudalens.server")

Analyse = Callable[[DocState, "int | None", str], Analysed]
Deliver = Callable[[DocState, Analysed], None]


class Scheduler:
    def __init__(self, analyse: Analyse, deliver: Deliver, on_error: Callable[[DocState, BaseException], None]):
        self._analyse = analyse
        self._deliver = deliver
        self._on_error = on_error
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cudalens-analysis")
        self._tasks: dict[str, asyncio.Task] = {}
        self._last_request: dict[str, float] = {}
        self._closed = False
        self._ran_at = self._took = 0.0  # of the last analysis, for the debug log

    def request(self, state: DocState, delay_s: float = 0.0) -> None:
        """Analyse `state` at its current version after `delay_s` of quiet."""
        if self._closed:
            return
        now = time.monotonic()
        last = self._last_request.get(state.uri, float("-inf"))
        self._last_request[state.uri] = now
        if not self.pending(state.uri) and now - last >= delay_s:
            delay_s = 0.0  # not in a burst
        previous = self._tasks.pop(state.uri, None)
        if previous is not None and not previous.done():
            previous.cancel()
        task = asyncio.get_running_loop().create_task(self._run(state, delay_s))
        self._tasks[state.uri] = task
        task.add_done_callback(lambda t, uri=state.uri: self._forget(uri, t))

    def cancel(self, uri: str) -> None:
        self._last_request.pop(uri, None)
        task = self._tasks.pop(uri, None)
        if task is not None:
            task.cancel()

    def pending(self, uri: str) -> bool:
        task = self._tasks.get(uri)
        return task is not None and not task.done()

    def close(self) -> None:
        """Stop everything now; a job running in the thread is abandoned, not awaited."""
        self._closed = True
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _forget(self, uri: str, task: asyncio.Task) -> None:
        if self._tasks.get(uri) is task:
            del self._tasks[uri]

    async def _run(self, state: DocState, delay_s: float) -> None:
        if delay_s > 0:
            await asyncio.sleep(delay_s)
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
        self._deliver(state, result)
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
