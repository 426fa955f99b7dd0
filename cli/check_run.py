"""Checking many files: in order or in a process pool, with a progress line, into one outcome."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from cudalens.analysis.api import launch_entry
from cudalens.analysis.file_kinds import is_cuda_source
from cudalens.analysis.findings import Finding, Severity, sort_key
from cudalens.analysis.launch_index import FileLaunches, LaunchIndex
from cudalens.cli.check_config import ConfigResolver
from cudalens.cli.file_check import (
    FileJob,
    FileResult,
    FixMode,
    check_file,
    describe_error,
    includes_for,
    warn,
)
from cudalens.cli.profiler_hooks import ProfilerHooks
from cudalens.cli.progress import FileProgress
from cudalens.profiler import processes
from cudalens.workspace.files import SourceText, decode_source, read_source


@dataclass
class CheckOutcome:
    findings: list[Finding] = field(default_factory=list)
    failing: int = 0  # findings at or above their file's failing level
    checked: int = 0  # files analysed without an internal error
    errors: int = 0
    fixed: int = 0
    diffs: str = ""


def display_path(path: Path, cwd: Path) -> str:
    """Relative to the current folder where it lies under it (as ruff prints), else as given."""
    try:
        return path.resolve().relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class _Done:
    job: FileJob
    result: FileResult | None
    error: str | None


# The launch index of a check, set once in each worker process (handing it to every job would pickle it
# once per file).
_launches: LaunchIndex | None = None


def _use_launches(index: LaunchIndex | None) -> None:
    global _launches
    _launches = index


def _check_job(
    job: FileJob, hooks: ProfilerHooks, fix: FixMode | None, source: SourceText | None = None
) -> _Done:
    try:
        return _Done(job, check_file(job, hooks, fix, source, _launches), None)
    except Exception as exc:  # one file the analyzer trips on must not stop the others
        return _Done(job, None, describe_error(exc, job.path))


def _entry(job: FileJob) -> tuple[str, FileLaunches | None]:
    """A CUDA file's launches, for the index; None for a file that cannot be read (its check says why)."""
    if not is_cuda_source(job.shown):
        return job.shown, None
    try:
        return job.shown, launch_entry(job.shown, read_source(job.path), includes_for(job))
    except Exception:  # the file's own check reports what is wrong with it
        return job.shown, None


def launch_index(jobs: list[FileJob], workers: int) -> LaunchIndex:
    """Every launch site of the files checked (and of the headers they include), so that a kernel defined in
    one file is analysed with the launches another makes."""
    index = LaunchIndex()
    if workers <= 1:
        entries = map(_entry, jobs)
    else:
        with _process_pool(workers) as pool:
            entries = list(pool.map(_entry, jobs, chunksize=16))
    for shown, entry in entries:
        if entry is not None and entry.records:
            index.update(shown, entry)
    return index


# Below this many files a process pool costs more to start than it saves.
PARALLEL_MIN_FILES = 16
STOP_GRACE_S = 1.0  # what an interrupted pool's processes get to kill their own children


def cores() -> int:
    """The CPU cores this process may run on (a container's or taskset's share, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _workers(jobs: int, files: int) -> int:
    """`--jobs`, at most one per core (more only cost memory: 100000 once started ~6,000 processes)."""
    limit = cores()
    if jobs > limit:
        warn(f"cudalens: --jobs {jobs} is more than the {limit} CPU cores here; using {limit}")
    if jobs > 0:
        return min(jobs, limit, files)
    return min(limit, 8, files) if files >= PARALLEL_MIN_FILES else 1


@contextlib.contextmanager
def _process_pool(workers: int, launches: LaunchIndex | None = None) -> Iterator[ProcessPoolExecutor]:
    """A pool whose processes never outlive this one: they die with it even when it is SIGKILLed
    (`processes.die_with_parent`), and any way out but the normal end (Ctrl-C, SIGTERM, a closed pipe)
    ends them at once instead of waiting for the files queued: SIGTERM (they kill their nvcc and leave), then
    SIGKILL for one still there after a second (busy in C code). `launches`: the workers' launch index."""
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_start_worker, initargs=(os.getpid(), launches))
    try:
        yield pool
    except BaseException:
        children = multiprocessing.active_children()
        for child in children:
            child.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        for child in children:
            child.join(max(0.0, deadline - time.monotonic()))
            child.kill()
        # the processes gone, the pool's manager thread ends at once: waited for here, it has closed its wakeup
        # pipe before interpreter exit writes to it (CPython 3.11 races the two: a "Bad file descriptor"
        # traceback at Ctrl-C, 3 runs in 30 under load). The queued futures are not cancelled: the manager
        # fails every pending one with BrokenProcessPool, and on 3.11 one cancelled meanwhile makes that raise
        # InvalidStateError in its thread (a traceback at Ctrl-C, both runs of the suite under load)
        pool.shutdown(wait=True)
        raise
    pool.shutdown()


def _start_worker(parent: int, launches: LaunchIndex | None) -> None:
    processes.die_with_parent(parent)
    _use_launches(launches)


def _in_pool(jobs: list[FileJob], hooks: ProfilerHooks, fix: FixMode | None, pool: ProcessPoolExecutor) -> Iterator[_Done]:
    futures = [pool.submit(_check_job, job, hooks, fix) for job in jobs]
    for future in as_completed(futures):
        try:
            yield future.result()
        except Exception as exc:  # a worker process that died (killed, out of memory)
            job = jobs[futures.index(future)]
            yield _Done(job, None, f"worker failed: {type(exc).__name__}: {exc}")


def _collect(results: Iterable[_Done], progress: FileProgress) -> CheckOutcome:
    outcome = CheckOutcome()
    for done in results:
        progress.step(done.job.shown)
        if done.result is None:
            progress.clear()
            warn(f"cudalens: error: {done.job.shown}: {done.error}")
            outcome.errors += 1
            continue
        result = done.result
        outcome.checked += 1
        outcome.findings += result.findings
        outcome.fixed += result.fixed
        outcome.diffs += result.diff
        threshold = Severity(done.job.config.fail_level).rank
        outcome.failing += sum(1 for f in result.findings if f.severity.rank >= threshold)
    progress.clear()
    outcome.findings.sort(key=sort_key)
    return outcome


def run_checks(
    files: list[Path],
    resolver: ConfigResolver,
    hooks: ProfilerHooks,
    cwd: Path,
    fix: FixMode | None = None,
    jobs: int = 1,
) -> CheckOutcome:
    work = [FileJob(path, display_path(path, cwd), resolver.config_for(path)) for path in files]
    workers = _workers(jobs, len(work))
    index = launch_index(work, workers) if len(work) > 1 else None
    if workers <= 1:
        _use_launches(index)
        try:
            return _collect((_check_job(job, hooks, fix) for job in work), FileProgress(len(work)))
        finally:
            _use_launches(None)
    with _process_pool(workers, index) as pool:
        return _collect(_in_pool(work, hooks, fix, pool), FileProgress(len(work)))


def check_stdin(
    name: str, resolver: ConfigResolver, hooks: ProfilerHooks, fix: FixMode | None
) -> CheckOutcome:
    """`cudalens check -`: the text on stdin, named (for its language, config and reports) by --stdin-filename."""
    job = FileJob(Path(name), name, resolver.config_for(Path(name).absolute()))
    source = decode_source(sys.stdin.buffer.read())
    return _collect([_check_job(job, hooks, fix, source)], FileProgress(1))
