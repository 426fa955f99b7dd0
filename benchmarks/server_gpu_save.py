"""Save → verdict and save → ncu hints through the real language server, as an editor sees them (on a GPU).

An outside client starts `python -m cudalens.server` over stdio, opens a `.cu` kernel with its PyTorch reference
(tests/runtime/data/transpose.cu, copied to a scratch folder) and saves it:

- save → correctness verdict, cold (first save: the worker starts, torch imports, load_inline builds);
- save → verdict, warm, the same text saved again (the build is cached, the worker is warm) — issue 4 goal ≤ 2 s;
- save → verdict after an edit (a new build of the edited kernel, warm worker);
- save → per-line ncu hints (CL904) with `onSave.profile` on, each after an edit (a rebuild and a new profile):
  the first comes right after `onSave.profile` is turned on, while ncu's first target is still starting; later
  ones find one warm (profiler/ncu/standby.py: each profiled save starts a spare for the next), back to back and
  with a few seconds between saves — goal ≤ 6 s.

The time is from didSave to the end of the server's work-done progress (its message is the verdict), and for
hints to the publishDiagnostics that carries CL904. `onSave.compile` is off here: on save it runs side by side
with the test (nvcc in the server, the build in the worker), so it adds nothing unless it is the slower. The
server's log lines that say how each save's extension was built are printed as they come.

    python benchmarks/server_gpu_save.py [--repeat 3] [--think 5] [--fresh-cache] [--first-save-after 30] [--no-hints]

`--fresh-cache` gives the server new caches (a first save after install); `--first-save-after S` waits S seconds
after opening the file before its first save (the worker's warm-up, with the fast builds' header, runs meanwhile).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

DATA = Path(__file__).resolve().parents[1] / "tests" / "runtime" / "data"


class Client(LanguageClient):
    def __init__(self) -> None:
        super().__init__("cudalens-gpu-benchmark", "1")
        self.ends: list[tuple[float, str]] = []
        self.reports: list[tuple[float, str]] = []  # every progress report's message ("testing…": the job is sent)
        self.published: list[tuple[float, types.PublishDiagnosticsParams]] = []
        self.changed = asyncio.Event()
        self.logs: list[tuple[float, str]] = []  # every log message, for the first save's timeline

        @self.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @self.feature(types.PROGRESS)
        def progress(params: types.ProgressParams) -> None:
            value = params.value
            kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
            if kind == "report":
                message = value.get("message") if isinstance(value, dict) else value.message
                self.reports.append((time.perf_counter(), message or ""))
            if kind == "end":
                message = value.get("message") if isinstance(value, dict) else value.message
                self.ends.append((time.perf_counter(), message or ""))
                self.changed.set()

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published.append((time.perf_counter(), params))
            self.changed.set()

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def log(params: types.LogMessageParams) -> None:
            self.logs.append((time.perf_counter(), params.message))
            if any(w in params.message for w in (": fast ", "declined ", "fell back ")):
                print(f"  (server log: {params.message[:300]})", flush=True)  # how each save's extension was built

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def show(params: types.ShowMessageParams) -> None:
            print(f"  (server says: {params.message})", flush=True)

        @self.feature("cudalens/status")
        def status(params: object) -> None:
            pass

        @self.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[None]:
            return [None for _ in params.items]

    async def until(self, predicate, timeout: float = 900.0):
        deadline = time.perf_counter() + timeout
        while (value := predicate()) is None:
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), max(0.1, deadline - time.perf_counter()))
        return value


def on_save(**steps: bool) -> dict:
    return {"onSave": {"compile": False, "test": False, "time": False, "profile": False, **steps}}


async def save_and_wait(client: Client, uri: str, hints: bool = False, version: int | None = None) -> tuple[float, str]:
    ends, published = len(client.ends), len(client.published)
    started = time.perf_counter()
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    if hints:
        def found():
            for at, p in client.published[published:]:
                if p.uri == uri and p.version == version and any(d.code == "CL904" for d in p.diagnostics):
                    return at, f"{sum(d.code == 'CL904' for d in p.diagnostics)} CL904 hint(s)"
            return None if len(client.ends) == ends else (client.ends[-1][0], client.ends[-1][1] + " (no CL904)")
        at, what = await client.until(found)
        # the pipeline ends after it publishes: wait for that end, or the next save would take it for its own
        await client.until(lambda: client.ends[ends] if len(client.ends) > ends else None)
    else:
        at, what = await client.until(lambda: client.ends[ends] if len(client.ends) > ends else None)
    return at - started, what


async def main(repeat: int, think: float, first_after: float, fresh_cache: bool, with_hints: bool = True) -> None:
    folder = Path(tempfile.mkdtemp(prefix="cudalens-gpu-save-"))
    for name in ("transpose.cu", "transpose_ref.py"):
        shutil.copy(DATA / name, folder / name)
    path = folder / "transpose.cu"
    text = path.read_text()
    client = Client()
    env = dict(os.environ)
    if fresh_cache:  # a first save after install: no fast build, precompiled header or bindings from earlier runs
        env["XDG_CACHE_HOME"] = str(folder / "cache")
    began = time.perf_counter()
    await client.start_io(sys.executable, "-m", "cudalens.server", "--log-level", "info", env=env)
    caps = types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True))
    await client.initialize_async(types.InitializeParams(
        capabilities=caps, root_uri=folder.as_uri(), initialization_options={"settings": on_save(test=True, time=True)},
    ))
    client.initialized(types.InitializedParams())
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "cuda-cpp", 1, text)))
    rows = []
    await asyncio.sleep(first_after)  # a person reading the file first: the worker's warm-up runs meanwhile
    saved = time.perf_counter()
    seconds, verdict = await save_and_wait(client, uri)
    # where the first save's time went: the server's log up to its verdict, in seconds since the server started
    print(f"  (first save at +{saved - began:.1f} s; its verdict at +{saved - began + seconds:.1f} s)")
    for at, message in client.logs:
        if at <= saved + seconds:
            print(f"  (+{at - began:5.1f} s) {message[:400]}")
    when = f", {first_after:g} s after the server started" if first_after else ""
    rows.append((f"save → verdict + timing, cold{' (fresh caches)' if fresh_cache else ''}{when}", [seconds], verdict))
    warm = []
    for _ in range(repeat):
        seconds, verdict = await save_and_wait(client, uri)
        warm.append(seconds)
    rows.append(("save → verdict + timing, warm (unchanged)", warm, verdict))
    version = 1

    def edit(marker: str) -> None:
        nonlocal text, version
        version += 1
        text = text.replace("if (r < rows", f"/* {marker} */ if (r < rows", 1)
        path.write_text(text)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [types.TextDocumentContentChangeWholeDocument(text=text)],
        ))

    edited = []
    for i in range(repeat):
        edit(f"edit {i}")
        seconds, verdict = await save_and_wait(client, uri)
        edited.append(seconds)
    rows.append(("save → verdict + timing after an edit (rebuild)", edited, verdict))
    if with_hints:
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"cudalens": on_save(test=True, profile=True)}
        ))
    for pause, label in ((0.0, "back to back"), (think, f"{think:g} s between saves")) if with_hints else ():
        hints = []
        for i in range(repeat + 1):
            await asyncio.sleep(pause)  # a person editing: the next standby has started meanwhile
            edit(f"profiled edit {label} {i}")  # a new text each time: a rebuild and no cached profile
            seconds, what = await save_and_wait(client, uri, hints=True, version=version)
            hints.append(seconds)
        rows.append((f"save → per-line ncu hints after an edit, {label}", hints, what))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    print(f"\n{'step':<72} {'first':>8} {'later':>8}  last result  (later: median after the first)")
    for label, samples, result in rows:
        later = f"{statistics.median(samples[1:]):>7.2f}s" if len(samples) > 1 else f"{'-':>8}"
        print(f"{label:<72} {samples[0]:>7.2f}s {later}  {result[:80]}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--think", type=float, default=5.0, help="seconds between saves in the second hints row")
    parser.add_argument("--first-save-after", type=float, default=0.0,
                        help="seconds between opening the file and its first save")
    parser.add_argument("--fresh-cache", action="store_true",
                        help="the server's caches in a new folder (XDG_CACHE_HOME): a first save after install")
    parser.add_argument("--no-hints", action="store_true", help="the verdict rows only (no ncu)")
    args = parser.parse_args()
    asyncio.run(main(args.repeat, args.think, args.first_save_after, args.fresh_cache, not args.no_hints))
