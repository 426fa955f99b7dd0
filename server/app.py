"""The pygls LanguageServer and its handlers. Each handler takes typed params, calls a plain function, and
converts the result; the logic lives in service.py, actions.py, hover.py, lens.py.

What only a hover, a lens, a Coder quick fix, a command or a save needs (the on-save results, the Judge, the
profiler, the GPU commands: ≈ 0.2–0.3 s of imports) is imported by the handler that first needs it, after the
document's first diagnostics, not at the start a new window waits for (tests/server/test_start_imports.py).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import FeatureNotificationError
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from cudalens import __version__
from cudalens.analysis.positions import split_lines
from cudalens.analysis.syntax_check import SyntaxBaseline
from cudalens.profiler import processes
from cudalens.profiler.gpu_specs import NoGpu
from cudalens.profiler.ncu import standby
from cudalens.server import lifecycle
from cudalens.server.actions import KINDS, ActionContext, code_actions, comment_marker, wanted
from cudalens.server.coder_actions import REWRITE, coder_actions
from cudalens.server.command_runs import run_command
from cudalens.server.commands import COMMANDS, TITLES, CommandHandler
from cudalens.server.convert import Positions, converter
from cudalens.server.hover import hover_markdown
from cudalens.server.model_lens import model_lenses
from cudalens.server.offers import Offers
from cudalens.server.protocol import CudalensProtocol
from cudalens.server.service import Service
from cudalens.server.settings import parse_settings, settings_from_initialization_options
from cudalens.server.status import STATUS_METHOD, status_payload
from cudalens.server.transport import READ_CHUNK, EditorWriter, serve
from cudalens.server.watch import WorkspaceWatcher
from cudalens.server.work_done import CURRENT, Stage, WorkDone, progress_for

logger = logging.getLogger("cudalens.server")
AFTER_FIRST_DIAGNOSTICS_S = 10.0


class CudalensServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "cudalens", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=CudalensProtocol, converter_factory=converter,
        )
        self.service = Service(self)
        self.watcher: WorkspaceWatcher | None = None
        self.background: set[asyncio.Task] = set()
        self.offers = Offers()  # edits the Coder proposed, until applied or discarded
        self.optimizing: dict[str, asyncio.Task] = {}  # running optimize loops, by document
        self._errors = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        # Start-up work no first diagnostic needs (indexing the folders' launches, collecting the imports'
        # garbage): it waits until the first diagnostics are out, or
        # AFTER_FIRST_DIAGNOSTICS_S after the start when no document is opened, so that it does not take the CPU
        # (and the GIL) from the first analysis a new window waits for. A kernel launched from another file gets
        # its launches when the index is done (service.scan_launches re-checks it).
        self._after_first: list[Callable[[], None]] | None = []

    # --- Output, for the service -------------------------------------------------------------------------
    def publish(self, uri: str, version: int | None, diagnostics: list[str]) -> None:
        # Sent as JSON text joined here: the diagnostics were encoded once (and cached); pygls' own path would
        # unstructure and encode every one of them again on each keystroke (35 ms for 1,128 of them).
        version_text = "" if version is None else f', "version": {json.dumps(version)}'
        self.protocol.send_encoded(
            f'{{"jsonrpc": "2.0", "method": "{types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS}", "params": '
            f'{{"uri": {json.dumps(uri)}{version_text}, "diagnostics": [{", ".join(diagnostics)}]}}}}'
        )
        self.diagnostics_sent()

    def diagnostics_sent(self) -> None:
        """A document's diagnostics left, pushed (publish) or pulled (their report answered): the first time, the
        start-up jobs run just after, not before a pulled report is sent."""
        if self._after_first and self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.call_later, 0.05, self._first_diagnostics_out, "first")

    def after_first_diagnostics(self, job: Callable[[], None]) -> None:
        if self._after_first is None:
            job()
        else:
            self._after_first.append(job)

    def _first_diagnostics_out(self, why: str) -> None:
        if self._after_first is None:
            return
        jobs, self._after_first = self._after_first, None
        logger.info("start-up jobs: %s", "after the first diagnostics" if why == "first"
                    else f"{AFTER_FIRST_DIAGNOSTICS_S:g} s after the start, no diagnostics asked for")
        for job in jobs:
            try:
                job()
            except Exception:
                logger.exception("a start-up job failed")

    def show(self, message: str, kind: types.MessageType) -> None:
        self.window_show_message(types.ShowMessageParams(kind, message))

    def work_done(self, title: str, on_cancel=None) -> WorkDone | Stage:
        return progress_for(self, title, on_cancel)

    def status(self, payload: dict) -> None:
        self.protocol.notify(STATUS_METHOD, payload)

    def refresh_lenses(self) -> None:
        """The lens summaries changed (a run's verdict): ask the client to draw them again."""
        caps = self.client_capabilities.workspace
        if caps and caps.code_lens and caps.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)

    def refresh_diagnostics(self) -> None:
        caps = self.client_capabilities.workspace
        if caps and caps.diagnostics and caps.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)

    def bad_change(self, uri: str, reason: str) -> None:
        """The editor sent a change that does not fit the text (CudalensProtocol kept the last good one)."""
        self.service.out_of_sync(uri, reason)

    # --- pygls hooks ---------------------------------------------------------------------------------
    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls' start_io, reading frames with transport.py instead of pygls' reader (see there why)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(EditorWriter(stdout or sys.stdout.buffer))
        stream = stdin or sys.stdin.buffer
        read = getattr(stream, "read1", stream.read)

        async def main() -> None:
            loop = asyncio.get_running_loop()
            await serve(lambda: loop.run_in_executor(self.thread_pool, read, READ_CHUNK), self.protocol,
                        self._stop_event)

        self._run(main())

    def start_tcp(self, host: str, port: int) -> None:
        """pygls' start_tcp with transport.py's reader; one client at a time (for debugging)."""
        self._stop_event = stop = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)  # type: ignore[arg-type]
            await serve(lambda: reader.read(READ_CHUNK), self.protocol, stop)
            self.shutdown()

        async def main() -> None:
            self._server = await asyncio.start_server(connection, host, port)
            logger.info("serving on %s", ", ".join(str(s.getsockname()) for s in self._server.sockets))
            async with self._server:
                await self._server.serve_forever()

        self._run(main())

    def _run(self, main) -> None:
        async def serving() -> None:
            self._loop = loop = asyncio.get_running_loop()
            self.after_first_diagnostics(lifecycle.settle_heap)
            loop.call_later(AFTER_FIRST_DIAGNOSTICS_S, self._first_diagnostics_out, "timer")
            await main

        try:
            asyncio.run(serving())
        except BrokenPipeError:
            logger.error("the connection to the editor is lost; shutting down")
        except (KeyboardInterrupt, SystemExit, asyncio.CancelledError):
            pass
        finally:
            self.shutdown()

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls shows a pop-up per failed notification by default; a broken client or a bug would flood the
        editor. Log every error; tell the user once. (A failed request already answers with its error.)"""
        logger.error("server error (%s): %s", getattr(source, "__name__", source), error)
        if source is not FeatureNotificationError:
            return  # a failed request answers with its error; a malformed message is the client's problem
        self._errors += 1
        if self._errors == 1:
            self.show(
                "cudalens: an internal error occurred; details are in the server log (shown only once).",
                types.MessageType.Error,
            )

    def spawn(self, coro) -> asyncio.Task:
        """A task of its own: outside any command's run, so its progress is its own (the optimize loop outlives
        the command that started it)."""
        context = contextvars.copy_context()
        context.run(CURRENT.set, None)
        task = asyncio.get_running_loop().create_task(coro, context=context)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    def document_changes(self) -> bool:
        ws = self.client_capabilities.workspace
        return bool(ws and ws.workspace_edit and ws.workspace_edit.document_changes)

    def stop_everything(self) -> None:
        processes.kill_all()  # first: a thread waiting on a child (a compile, a warming worker) returns now
        for task in list(self.background):
            task.cancel()
        self.service.close_all()
        if self.watcher is not None:
            self.watcher.stop()
        processes.kill_all()


def _path(uri: str) -> str:
    path = to_fs_path(uri)
    if path is None:  # not a file (an unsaved buffer): the URI is its name
        return uri
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError):
        return path


async def _pull_settings(ls: CudalensServer) -> None:
    ws = ls.client_capabilities.workspace
    if not (ws and ws.configuration):
        return
    try:
        values = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="cudalens")])
        )
    except Exception as exc:  # the client refused or does not know the section
        logger.info("workspace/configuration failed: %s", exc)
        return
    if values and values[0] is not None:
        ls.service.apply_settings(parse_settings(values[0]))


def _command(name: str, handler: CommandHandler):
    async def run(ls, *arguments):
        return await run_command(ls, name, TITLES.get(name, name), handler, list(arguments))

    return run


def wants_pull_diagnostics(caps: types.ClientCapabilities) -> bool:
    """Pull (textDocument/diagnostic) when the client can pull *and* be told to pull again: without
    `workspace/diagnostic/refresh` (Neovim 0.11) a re-check after an outside change would never be seen,
    so such clients get pushed diagnostics."""
    pulls = caps.text_document is not None and caps.text_document.diagnostic is not None
    ws = caps.workspace
    return pulls and bool(ws and ws.diagnostics and ws.diagnostics.refresh_support)


async def pull_diagnostics(ls: CudalensServer, params: types.DocumentDiagnosticParams):
    state = ls.service.documents.get(params.text_document.uri)
    result = await ls.service.current_result(state) if state is not None else None
    ls.diagnostics_sent()
    if state is None or result is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    return types.RelatedFullDocumentDiagnosticReport(
        items=ls.service.diagnostics(state), result_id=f"{result.version}-{id(result)}"
    )


def create_server() -> CudalensServer:
    server = CudalensServer()
    # every child dies with the server however it exits (lifecycle.hard_exit); these stop the pools for good and
    # remove the warm ncu targets' folders
    lifecycle.at_exit(server.service.runtime.close)
    lifecycle.at_exit(standby.close_all)

    @server.feature(types.INITIALIZE)
    def initialize(ls: CudalensServer, params: types.InitializeParams) -> None:
        loop = asyncio.get_running_loop()
        handler = lifecycle.EditorLogHandler(ls.window_log_message, loop)
        handler.setLevel(logging.INFO)
        lifecycle.log_to_editor(handler)
        svc = ls.service
        svc.codec = ls.workspace.position_codec
        svc.root = ls.workspace.root_path
        svc.folders = tuple(_path(f.uri) for f in ls.workspace.folders.values())
        svc.pull = wants_pull_diagnostics(params.capabilities)
        if svc.pull:  # registered before pygls computes the capabilities, so only pull clients see it
            ls.feature(
                types.TEXT_DOCUMENT_DIAGNOSTIC,
                types.DiagnosticOptions(identifier="cudalens", inter_file_dependencies=True, workspace_diagnostics=False),
            )(pull_diagnostics)
        svc.apply_settings(settings_from_initialization_options(params.initialization_options))
        # Made here, started in `initialized`: a didOpen can be handled before the async `initialized` handler
        # runs, and the folder of a file opened outside the workspace must be watched from that first didOpen.
        if ls.watcher is None:
            ls.watcher = WorkspaceWatcher(loop, svc.files_changed)
        pid = params.process_id
        if pid is not None and not 0 < pid < 2**31:  # not a pid_t: os.kill would raise OverflowError
            logger.warning("initialize: processId %d is not a process id; not watching the editor", pid)
        elif pid and lifecycle.pid_alive(pid):
            ls.spawn(lifecycle.watch_parent(pid, lambda: lifecycle.hard_exit(0)))
        elif pid:  # another pid namespace (a container, WSL): we cannot see the editor
            logger.info("editor pid %d is not visible from here; not watching it", pid)

    async def _announce_gpu(ls: CudalensServer) -> None:
        gpu = await ls.service.runtime.gpu()
        ls.protocol.notify(STATUS_METHOD, status_payload(gpu))
        if isinstance(gpu, NoGpu):
            ls.refresh_lenses()  # the run buttons that need one say "no GPU" now

    @server.feature(types.INITIALIZED)
    async def initialized(ls: CudalensServer, params: types.InitializedParams) -> None:
        if ls.watcher is None or ls.watcher.started:
            logger.warning("ignoring an `initialized` notification that is not the first after initialize")
            return
        folders = [_path(f.uri) for f in ls.workspace.folders.values()] or (
            [ls.workspace.root_path] if ls.workspace.root_path else []
        )
        ls.watcher.start(folders)  # now: a change made once the first diagnostics are out must be seen
        ls.after_first_diagnostics(lambda: ls.service.scan_launches(folders))
        ls.spawn(_announce_gpu(ls))
        await _pull_settings(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: CudalensServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.service.folders = (*ls.service.folders, *(_path(f.uri) for f in params.event.added))
        if ls.watcher is not None:
            for folder in params.event.added:
                ls.watcher.add_tree(_path(folder.uri))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: CudalensServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and "cudalens" in settings:
            ls.service.apply_settings(parse_settings(settings["cudalens"]))
        else:
            await _pull_settings(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CudalensServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        path = _path(doc.uri)
        ls.service.open(doc.uri, path, doc.version, doc.text, doc.language_id)
        if ls.watcher is not None and ls.service.documents.get(doc.uri) is not None and path.startswith("/"):
            ls.watcher.watch_folder(str(Path(path).parent))  # its headers, even outside the workspace

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CudalensServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.service.documents.get(uri) is not None:
            text = ls.workspace.get_text_document(uri).source
            whole = any(isinstance(c, types.TextDocumentContentChangeWholeDocument) for c in params.content_changes)
            ls.service.change(uri, params.text_document.version, text, resynced=whole)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: CudalensServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.service.saved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CudalensServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.service.close(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[*KINDS, REWRITE], resolve_provider=False)
    )
    def code_action(ls: CudalensServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        state = ls.service.documents.get(params.text_document.uri)
        if state is None or state.result is None or not state.in_sync:
            return None  # no edits computed on a text that may not be the editor's
        result = state.result
        pos = ls.service.positions(result)
        if result.report is None:  # not analysed (a Python file without CUDA): positions in the text itself
            pos = Positions(split_lines(state.text), ls.service.codec)
        span, only = pos.span(params.range), params.context.only
        ctx = ActionContext(
            state.uri, result.version, pos, ls.document_changes(),
            comment_marker(state.kind, result.report.embedded_sources if result.report else []),
            result.syntax or SyntaxBaseline("".join(pos.lines), state.analysis_path),
        )
        actions = code_actions(result.findings, span, ctx, only) if result.findings else []
        if ls.service.trust.trusted and (wanted(only, types.CodeActionKind.QuickFix) or wanted(only, REWRITE)):
            from cudalens.server.coder_setup import kernelbench_problem  # (see the module docstring)

            coder = coder_actions(state.uri, result.kernels, ls.service.findings(state), span, pos,
                                  optimizable=kernelbench_problem(state.path, state.text) is None)
            actions += [a for a in coder if wanted(only, a.kind)]
        return actions or None

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: CudalensServer, params: types.HoverParams) -> types.Hover | None:
        state = ls.service.documents.get(params.text_document.uri)
        if state is None or state.result is None:
            return None
        from cudalens.server import last_run, verdicts  # (see the module docstring)

        result = state.result
        line, column = ls.service.positions(result).from_lsp(params.position)
        run, findings = ls.service.last_run(state), ls.service.findings(state)

        def sections(kernel) -> str | None:
            parts = [last_run.markdown(run, kernel, state.path), verdicts.hover(run, kernel, findings)]
            return "\n\n".join(p for p in parts if p) or None

        text = hover_markdown(result.kernels, findings, line, column, last_run=sections)
        if text is None:
            return None
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text))

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def code_lens(ls: CudalensServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        state = ls.service.documents.get(params.text_document.uri)
        if state is None or state.result is None:
            return None
        result = state.result
        runs = ls.service.trust.trusted
        models = []
        if state.kind == "python":  # the current text: a file without CUDA keeps no analysed lines
            models = model_lenses(state.uri, state.text, Positions(split_lines(state.text), ls.service.codec), runs)
        if not result.kernels:
            return models or None
        from cudalens.server import last_run  # (see the module docstring)
        from cudalens.server.coder_setup import kernelbench_problem
        from cudalens.server.lens import gpu_less, kernel_lenses

        badge = last_run.badge(ls.service.last_run(state))
        no_gpu = gpu_less(state.path, state.text, ls.service.settings.optimize.allow_torch_ops, ls.service.runtime.known_gpu)
        return kernel_lenses(state.uri, result.kernels, ls.service.findings(state), ls.service.positions(result), badge,
                             runs=runs, optimizable=kernelbench_problem(state.path, state.text) is None,
                             no_gpu=no_gpu) + models

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: CudalensServer, params: None) -> None:
        ls.stop_everything()

    @server.feature(types.EXIT)
    def exit_(ls: CudalensServer, params: None) -> None:
        """Leave now, without pygls's way out (asyncio's shutdown waits for every executor thread)."""
        lifecycle.hard_exit(0 if ls.protocol._shutdown else 1)

    for name, handler in COMMANDS.items():
        server.command(name)(_command(name, handler))

    return server
