"""What the server does with documents, independent of pygls: open/change/close, analyse off the loop, deliver
diagnostics (push, or hold them for pull requests), re-check on outside changes and on settings changes, and
run the GPU half on save (pipeline_on_save.py), its findings merged with the static ones of the same version.

`app.py` only turns LSP messages into calls of this class; `Output` is how this class talks back.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cudalens.analysis.api import DocumentAnalyzer
from cudalens.analysis.config import AnalysisConfig, ConfigResult
from cudalens.analysis.file_kinds import is_cuda_source
from cudalens.analysis.launch_index import identity
from cudalens.analysis.positions import split_lines
from cudalens.profiler import child_env
from cudalens.profiler.gpu_specs import NoGpu
from cudalens.profiler.ncu import standby
from cudalens.server.convert import DiagnosticCache, Entry, Positions, entry, to_diagnostic
from cudalens.server.documents import (
    Analysed,
    DocState,
    DocumentStore,
    may_contain_cuda,
)
from cudalens.server.gpu_runtime import GpuRuntime
from cudalens.server.launch_sync import WorkspaceLaunches
from cudalens.server.lifecycle import set_level
from cudalens.server.pipeline_on_save import (
    LastRun,
    Pipelines,
    Plan,
    SaveJob,
    build_ahead,
    builds_ahead,
    plan_for,
    profile_request,
    run_on_save,
)
from cudalens.server.scheduler import Priority, Scheduler
from cudalens.server.settings import ClientTrust, ParsedSettings, ServerSettings
from cudalens.server.status import Busy
from cudalens.server.trust import effective, key_variable
from cudalens.workspace.config import load_config
from cudalens.workspace.includes import DiskIncludes

logger = logging.getLogger("cudalens.server")


class Output(Protocol):
    def publish(self, uri: str, version: int | None, diagnostics: list[str]) -> None:
        """`diagnostics` are already JSON text (lsprotocol Diagnostics, each encoded once)."""
    def show(self, message: str, kind: types.MessageType) -> None: ...
    def refresh_diagnostics(self) -> None: ...
    def refresh_lenses(self) -> None: ...
    def work_done(self, title: str, on_cancel=None):
        """A `WorkDone` (begin/report/end) for a long-running job."""
    def status(self, payload: dict) -> None:
        """A `cudalens/status` notification (server/status.py)."""


@dataclass
class _Analyzer:
    """A document's analyzer with the config and include reader it was built with."""

    analyzer: DocumentAnalyzer
    config: AnalysisConfig
    resolver: DiskIncludes
    said_skipped: set[str] = field(default_factory=set)  # headers outside the workspace already logged


@dataclass
class Service:
    out: Output
    codec: PositionCodec = field(default_factory=PositionCodec)
    root: str | None = None
    folders: tuple[str, ...] = ()  # the workspace's folders: headers are read only under them (and the file's own)
    pull: bool = False  # the client pulls diagnostics (textDocument/diagnostic): never push
    settings: ServerSettings = field(default_factory=ServerSettings)  # what it acts on: trust applied
    trust: ClientTrust = field(default_factory=ClientTrust)  # the editor's last word on workspace trust

    def __post_init__(self) -> None:
        self.documents = DocumentStore()
        self.scheduler = Scheduler(self._analyse, self._deliver, self._failed)
        self._configs: dict[Path, ConfigResult] = {}
        self._analyzers: dict[str, _Analyzer] = {}
        self._converted: dict[str, DiagnosticCache] = {}
        self._shown: set[str] = set()
        self._nonempty: set[str] = set()  # URIs whose last published diagnostics were not empty
        self.runtime = GpuRuntime()
        self.pipelines = Pipelines()
        self._built_ahead: set[str] = set()  # .cu files built (or to be built) when they opened
        self._build_next: tuple[str, str] | None = None  # the one waiting for its turn, and its text
        self._builder: asyncio.Task | None = None
        self.launches = WorkspaceLaunches()
        self._busy = Busy(lambda payload: self.out.status(payload))

    # --- documents -------------------------------------------------------------------------------------
    def open(self, uri: str, path: str, version: int | None, text: str, language_id: str | None = None) -> None:
        state = self.documents.open(uri, path, version, text, language_id)
        if state is not None:
            self._schedule(state, 0.0, Priority.OPEN)
            self._build_ahead(state.path, text)

    def _build_ahead(self, path: str, text: str) -> None:
        """Once a file per session: its first save then finds its extension built (pipeline_on_save.build_ahead).
        One at a time, and only the latest file opened waits for the next turn: a save waits for one build at
        most (an editor restoring ten tabs would otherwise queue ten in the worker ahead of it)."""
        if path in self._built_ahead or not builds_ahead(self.settings.on_save, path, text):
            return
        if self._build_next is not None:
            self._built_ahead.discard(self._build_next[0])  # dropped, not built: a reopen tries again
        self._built_ahead.add(path)
        self._build_next = (path, text)
        if self._builder is None or self._builder.done():
            try:
                self._builder = asyncio.get_running_loop().create_task(self._builds())
            except RuntimeError:  # no loop (the service driven outside the server): the first save builds it
                self._build_next = None

    async def _builds(self) -> None:
        while self._build_next is not None:
            (path, text), self._build_next = self._build_next, None
            if not builds_ahead(self.settings.on_save, path, text):  # the settings changed while it waited
                continue
            gpu = await self.runtime.gpu()
            if isinstance(gpu, NoGpu):
                continue
            try:
                with self._busy.doing(gpu, f"building {Path(path).name} ahead of its first save"):
                    await build_ahead(path, self.runtime, self.settings.worker)
            except Exception as exc:  # a build ahead is a convenience: the save reports what matters
                logger.info("building %s ahead of its first save failed: %s", Path(path).name, exc)

    def change(self, uri: str, version: int | None, text: str, resynced: bool = False) -> None:
        """`resynced`: the change carried the whole text, so the server's copy is the editor's again."""
        state = self.documents.change(uri, version, text)
        self.pipelines.cancel(uri)  # its results would be for a text that is gone
        if state is not None:
            state.in_sync = state.in_sync or resynced
            self._schedule(state, self.settings.debounce_ms / 1000)

    def out_of_sync(self, uri: str, reason: str) -> None:
        """The editor sent a change that does not fit the text: the server keeps its last good copy, and offers
        no edit computed on it until the editor sends the whole text again (a reopen does)."""
        state = self.documents.get(uri)
        if state is None:
            return
        state.in_sync = False
        self.show_once(f"cudalens: the editor sent a change to {Path(state.path).name} that does not fit its text "
                       f"({reason}); cudalens offers no fixes for it until the editor sends its whole text again "
                       "(reopen the file).")

    def close(self, uri: str) -> None:
        state = self.documents.close(uri)
        self.scheduler.cancel(uri)
        self.pipelines.cancel(uri)
        self._analyzers.pop(uri, None)
        self._converted.pop(uri, None)
        if state is not None and is_cuda_source(state.path):
            self._reindex([state.path])  # its launches are what the disk says again
        if state is not None and not self.pull and uri in self._nonempty:
            self.out.publish(uri, None, [])  # a closed document keeps no diagnostics
        self._nonempty.discard(uri)

    def recheck(self, states: list[DocState], why: str) -> None:
        for state in states:
            logger.info("re-checking %s: %s", Path(state.path).name, why)
            self._analyzers.pop(state.uri, None)  # its config or headers may have changed
            self._schedule(state, 0.0, Priority.RECHECK)

    def files_changed(self, paths: set[str]) -> None:
        """Files changed on disk (from the watcher)."""
        if any(Path(p).name == "pyproject.toml" for p in paths):
            self._configs.clear()
            self.recheck(list(self.documents), "pyproject.toml changed")
            return
        for path in sorted(paths):
            self.recheck(self.documents.dependents(path), f"{Path(path).name} changed on disk")
        self._reindex([p for p in paths if is_cuda_source(p) and self._open_state(p) is None])

    # --- the launch index ------------------------------------------------------------------------------
    def scan_launches(self, roots: list[str]) -> None:
        """Index the launch sites of the workspace's CUDA files, off the loop; then re-check the open
        documents whose kernels they launch."""
        self._in_background(lambda: self.launches.scan(roots, lambda p: self._open_state(p) is not None,
                                                       self._resolver_for), "the workspace's launches")

    def _reindex(self, paths: list[str]) -> None:
        if paths:
            self._in_background(lambda: {p: self.launches.from_disk(p, self._resolver_for(p)) for p in paths},
                                ", ".join(Path(p).name for p in paths))

    def _in_background(self, job, what: str) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a test driving the service directly): nothing to schedule on
            return
        future = loop.run_in_executor(None, job)
        future.add_done_callback(lambda f: None if f.cancelled() or f.exception() is not None
                                 else self._recheck_launched(f.result(), what, pending_too=True))

    def _recheck_launched(self, changes: dict[str, set[str]], where: str, pending_too: bool = False) -> None:
        """Re-check the open documents that define kernels whose launches changed in another file (`changes`:
        file -> kernels). `pending_too`: also a document whose first analysis may have begun before these
        launches were indexed (after the scan at start)."""
        changes = {identity(path): kernels for path, kernels in changes.items() if kernels}
        if not changes:
            return
        index = self.launches.index

        def affected(s: DocState) -> bool:
            for path, kernels in changes.items():
                if path == identity(s.path):
                    continue
                if s.result is None:
                    if pending_too and any(f" {k}(" in s.text for k in kernels):
                        return True
                elif any(k.name in kernels and (path not in index or index.reaches(path, k.name, s.path))
                         for k in s.result.kernels):
                    return True
            return False

        states = [s for s in self.documents if affected(s)]
        if states:
            kernels = sorted(set().union(*changes.values()))
            self.recheck(states, f"launches of {', '.join(kernels[:3])} changed in {where}")

    def _open_state(self, path: str) -> DocState | None:
        real = identity(path)
        return next((s for s in self.documents if identity(s.path) == real), None)

    def _resolver_for(self, path: str, config: AnalysisConfig | None = None,
                      project: ConfigResult | None = None) -> DiskIncludes:
        """Headers as the editor has them; relative include folders (from the settings) start at the folder of
        the pyproject.toml, else of the workspace, else of the file."""
        if config is None or project is None:
            config, project = self._config_for(path)
        base = str(project.source.parent) if project.source else self.root or str(Path(path).parent)
        roots = (*self.folders, *([self.root] if self.root else []), base, str(Path(path).parent))
        return DiskIncludes(config.include_dirs, base, self.documents.text_of_path, real_paths=True, roots=roots)

    def apply_settings(self, parsed: ParsedSettings) -> None:
        for message in parsed.errors:
            self.show_once(message, types.MessageType.Warning)
        if parsed.unknown:
            logger.info("ignoring unknown settings: %s", ", ".join(parsed.unknown))
        if parsed.trust is not None:
            if parsed.trust.trusted != self.trust.trusted:  # said when it changes, not on every settings push
                logger.info("workspace trusted: %s", parsed.trust.trusted)
            self.trust = parsed.trust
        settings = effective(parsed.settings, self.trust)
        changed = settings != self.settings
        self.settings = settings
        key = key_variable(self.settings, self.trust)
        # a warm worker or ncu target holds a variable that is a secret now, or lacks one given back: replace them
        if child_env.hide_only("server settings", (key,)):
            logger.info("%s names the Coder's key now: restarting the worker with only what it may see", key)
            self.runtime.restart()
            standby.close_all()
        if self.settings.log_level is not None:
            set_level(self.settings.log_level)
        if changed:
            self.recheck(list(self.documents), "settings changed")
        on_save = self.settings.on_save
        if on_save.test or on_save.time:
            self.runtime.prestart(self.settings.worker)  # a warm worker for the first save
        if on_save.profile:
            try:
                asyncio.get_running_loop().create_task(self._warm_profiler())
            except RuntimeError:  # no loop yet (a settings parse outside the server): the first save starts it
                pass

    async def _warm_profiler(self) -> None:
        """A warm ncu target (profiler/ncu/standby.py) for the first profiled save of a `.cu` file."""
        if isinstance(await self.runtime.gpu(), NoGpu):
            return
        from cudalens.profiler.ncu.profile import prepare_standby

        request = profile_request("kernel.cu", self.settings.worker)
        await asyncio.get_running_loop().run_in_executor(None, prepare_standby, request, request.path, "")

    def close_all(self) -> None:
        if self._builder is not None:
            self._builder.cancel()  # a build ahead: its job's process group is killed with it
        self.scheduler.close()
        self.pipelines.cancel_all()
        self.runtime.close()
        standby.close_all()

    # --- on save ---------------------------------------------------------------------------------------
    def saved(self, uri: str) -> asyncio.Task | None:
        """Runs the `onSave` steps for the document's current version in the background."""
        state = self.documents.get(uri)
        if state is None or not Path(state.path).is_file():
            return None
        plan = plan_for(self.settings.on_save, state.path, state.text)
        if not plan.anything:
            return None
        return self.pipelines.start(uri, self.run_plan(state, plan))

    def job_for(self, state: DocState, profile_kernels: tuple[str, ...] = ()) -> SaveJob:
        result = state.result
        kernels = result.kernels if result is not None and result.version == state.version else None
        return SaveJob(state.path, state.version, state.text, self._config_for(state.path)[0], kernels, profile_kernels,
                       self._resolver_for(state.path).roots)

    async def run_plan(self, state: DocState, plan: Plan, job: SaveJob | None = None) -> LastRun | None:
        """Runs `plan` on the document's saved file with progress; keeps and shows the results. None when it
        failed (the user was told) or was cancelled by the editor's cancel button."""
        job = job or self.job_for(state)
        with self._busy.doing(await self.runtime.gpu(), f"running {Path(state.path).name}"):
            return await self._run_plan(state, plan, job)

    async def _run_plan(self, state: DocState, plan: Plan, job: SaveJob) -> LastRun | None:
        progress = self.out.work_done(f"cudalens: {Path(state.path).name}", lambda: self.pipelines.cancel(state.uri))
        await progress.begin("starting")
        try:
            run = await run_on_save(
                job, plan, self.runtime, self.settings.worker, progress.report,
                lambda m: self.show_once(m, types.MessageType.Info),
            )
            if run.outcome is not None or run.profile is not None:
                # the Judge: imported by the first run that needs it, not at the server's start
                from cudalens.server.verdicts import add_verdicts, specs

                if not job.kernels:  # saved before the first analysis finished: it has by now
                    job = self.job_for(state, job.profile_kernels) if state.version == job.version else job
                add_verdicts(job, run, specs(await self.runtime.gpu()), self.settings.worker.timeout_seconds)
        except asyncio.CancelledError:
            progress.end("cancelled")
            raise
        except Exception as exc:
            logger.error("running %s failed", state.path, exc_info=exc)
            self.show_once(f"cudalens: running {Path(state.path).name} failed; details are in the server log.")
            progress.end("failed")
            return None
        self.take_run(state, run)  # first: a client that acts on the progress's end finds the results published
        progress.end(run_summary(run))
        return run

    def take_run(self, state: DocState, run: LastRun) -> None:
        """Keep a run's results and show them, unless the document moved on meanwhile."""
        if state.closed or state.version != run.version:
            logger.debug("dropped the on-save results for %s version %s (now %s)", state.path, run.version, state.version)
            return
        state.last_run = run
        if run.test is not None:
            self.out.refresh_lenses()  # the lens shows the verdict
        if self.pull:
            self.out.refresh_diagnostics()
        elif state.result is not None and state.result.version == run.version:
            self._publish(state, always=True)
        # else: the analysis of this version is still running; its delivery publishes both

    # --- results ---------------------------------------------------------------------------------------
    def positions(self, result: Analysed) -> Positions:
        return Positions(result.lines, self.codec)

    def _converted_entries(self, state: DocState) -> list[Entry]:
        result = state.result
        if result is None:
            return []
        if result.diagnostics is None:
            cache = self._converted.setdefault(state.uri, DiagnosticCache())
            result.diagnostics = cache.convert(result.findings, state.uri, self.positions(result))
        return result.diagnostics

    def last_run(self, state: DocState) -> LastRun | None:
        """The last on-save run, if it was for the text the analysis result describes."""
        run, result = state.last_run, state.result
        return run if run is not None and result is not None and run.version == result.version else None

    def findings(self, state: DocState) -> list:
        """The static findings and those of the last run, when both describe the current text."""
        run = self.last_run(state)
        static = state.result.findings if state.result is not None else []
        return static + run.findings if run is not None else static

    def _run_entries(self, state: DocState) -> list[Entry]:
        run = self.last_run(state)
        if run is None:
            return []  # results of an older text are never shown as diagnostics
        if run.diagnostics is None:
            pos = Positions(run.lines, self.codec)
            run.diagnostics = [entry(to_diagnostic(f, state.uri, pos)) for f in run.findings]
        return run.diagnostics

    def _entries(self, state: DocState) -> list[Entry]:
        return self._converted_entries(state) + self._run_entries(state)

    def diagnostics(self, state: DocState) -> list[types.Diagnostic]:
        return [diagnostic for diagnostic, _ in self._entries(state)]

    def diagnostics_json(self, state: DocState) -> list[str]:
        return [as_json for _, as_json in self._entries(state)]

    def _publish(self, state: DocState, always: bool) -> None:
        entries = self.diagnostics_json(state)
        if not entries and not always and state.uri not in self._nonempty:
            return
        self.out.publish(state.uri, state.result.version if state.result else state.version, entries)
        if entries:
            self._nonempty.add(state.uri)
        else:
            self._nonempty.discard(state.uri)

    async def current_result(self, state: DocState) -> Analysed | None:
        """The result for the document's current version, waiting for the analysis if need be."""
        while not state.closed:
            result = state.result
            if result is not None and result.version == state.version:
                return result
            if not self.scheduler.pending(state.uri):
                self._schedule(state, 0.0)
            await state.updated.wait()
        return None

    def show_once(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        logger.warning("%s", message)
        if message not in self._shown:
            self._shown.add(message)
            self.out.show(message, kind)

    # --- scheduling and analysis -------------------------------------------------------------------------
    def _schedule(self, state: DocState, delay_s: float, priority: Priority = Priority.EDIT) -> None:
        if not may_contain_cuda(state.kind, state.text):
            self.scheduler.cancel(state.uri)
            self._deliver(state, Analysed(state.version, None, []))
            return
        self.scheduler.request(state, delay_s, priority)

    def _config_for(self, path: str) -> tuple[AnalysisConfig, ConfigResult]:
        folder = Path(path).parent
        result = self._configs.get(folder)
        if result is None:
            result = self._configs[folder] = load_config(folder)
        return self.settings.analysis_config(result.config), result

    def _analyse(self, state: DocState, version: int | None, text: str) -> Analysed:
        """In the analysis thread."""
        config, project = self._config_for(state.path)
        entry = self._analyzers.get(state.uri)
        if entry is None or entry.config != config:
            resolver = self._resolver_for(state.path, config, project)
            analyzer = DocumentAnalyzer(state.analysis_path, config, resolver, self.launches.index)
            entry = _Analyzer(analyzer, config, resolver)
            if not state.closed:  # closed meanwhile: don't keep an analyzer nobody will use
                self._analyzers[state.uri] = entry
        entry.resolver.read.clear()
        report = entry.analyzer.update(text)
        for error in report.errors:
            logger.warning("%s", error)
        for name in entry.resolver.skipped:  # once each: the resolver lives as long as the document's analyzer
            if name not in entry.said_skipped:
                entry.said_skipped.add(name)
                logger.warning("%s: #include \"%s\" is outside the workspace and its include folders: not read",
                               Path(state.path).name, name)
        changed = self.launches.from_report(state.path, report) if not state.closed else set()
        # Only this document's own findings: one inside an included header has the header's positions. (The
        # analyzer, made with this `config`, has already dropped the codes it turns off.)
        own = state.analysis_path
        report.findings = [f for f in report.findings if f.path == own]
        lines = split_lines(text)
        # Every header the document includes is a dependency, whether or not the analyzer read it.
        depends = entry.resolver.read | set(filter(None, (entry.resolver.locate(n, state.path)
                                                          for n in set(report.includes))))
        messages = tuple(f"cudalens: {e} (defaults used)" for e in project.errors)
        return Analysed(version, report, lines, frozenset(depends), messages,
                        syntax=entry.analyzer.syntax_baseline(text), launches_changed=frozenset(changed))

    def _deliver(self, state: DocState, result: Analysed) -> None:
        previous = state.result
        state.set_result(result)
        for message in result.messages:
            self.show_once(message)
        self._recheck_launched({state.path: set(result.launches_changed)}, Path(state.path).name)
        if self.pull:
            if previous is not None and previous.version == result.version:
                self.out.refresh_diagnostics()  # a re-check of the same text: ask the client to pull again
            return
        self._publish(state, always=result.report is not None and result.report.is_cuda)

    def _failed(self, state: DocState, exc: BaseException) -> None:
        logger.error("analysis of %s failed", state.path, exc_info=(type(exc), exc, exc.__traceback__))
        self.show_once(f"cudalens: analysing {Path(state.path).name} failed; details are in the server log.")
        if not state.closed:
            state.set_result(Analysed(state.version, None, []))


def run_summary(run: LastRun) -> str:
    parts = []
    if run.compile is not None:
        errors = sum(f.code == "CL801" for f in run.compile.findings)
        parts.append(f"{errors} compile error(s)" if errors else "compiled")
    if run.test is not None:
        parts.append(run.test.summary() if run.test.passed else f"test {run.test.status}")
    if run.timing is not None:
        parts.append(f"{run.timing.speedup:.2f}× vs PyTorch")
    if run.profile is not None:
        parts.append(f"{len(run.ncu_hints)} profile hint(s)")
    return "; ".join([*parts, *run.notes]) or "nothing to run"
