"""The server's launch index (analysis/launch_index.py): every launch site of the workspace's `.cu`/`.cuh`
files, so that a kernel defined in an open header is analysed with the launches the `.cu` files that include it
make. Open documents feed it from each analysis (the editor's text, incrementally: an edit replaces that
file's entry only); the other files from a scan at start and from the watcher when they change on disk.
`update`-style calls return the kernels whose launches changed: the service re-checks the open documents that
define them.

Plain Python, no LSP types; its disk reads run off the event loop.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from cudalens.analysis.api import AnalysisReport, launch_entry
from cudalens.analysis.file_kinds import is_cuda_source
from cudalens.analysis.launch_index import FileLaunches, LaunchIndex, header_identities
from cudalens.server.watch import ignored_dir
from cudalens.workspace.files import load_source
from cudalens.workspace.includes import DiskIncludes

logger = logging.getLogger("cudalens.server")

MAX_SCANNED_FILES = 5000
MAX_SCANNED_BYTES = 2_000_000  # a generated file this large is not where a kernel's launches are written


class WorkspaceLaunches:
    def __init__(self) -> None:
        self.index = LaunchIndex()

    def from_report(self, path: str, report: AnalysisReport) -> set[str]:
        """An open document's launches, from its analysis (in the analysis thread)."""
        if not is_cuda_source(path) or not report.is_cuda:
            return set()
        entry = FileLaunches(tuple(report.launch_records), header_identities(report.headers), report.defines)
        return self.index.update(path, entry)

    def from_disk(self, path: str, resolver: DiskIncludes) -> set[str]:
        """A file's launches as it is on disk (gone: removed)."""
        try:
            if os.path.getsize(path) > MAX_SCANNED_BYTES:
                return self.index.remove(path)
            text = load_source(Path(path)).text  # as `cudalens check` reads it (a byte order mark, NULs)
        except OSError:
            return self.index.remove(path)
        if "<<" not in text:  # every spelling of a launch has it (`<<<`, clang-format's `<< <`)
            return self.index.remove(path)
        return self.index.update(path, launch_entry(path, text, resolver))

    def scan(self, roots: Iterable[str], is_open: Callable[[str], bool],
             resolver_for: Callable[[str], DiskIncludes]) -> dict[str, set[str]]:
        """Index every CUDA file under `roots` that the editor does not have open (in a worker thread); the
        kernels whose launches changed, by file."""
        changed: dict[str, set[str]] = {}
        count = 0
        for path in _cuda_files(roots):
            count += 1
            if count > MAX_SCANNED_FILES:
                logger.warning("launch index: stopped after %d files", MAX_SCANNED_FILES)
                break
            if is_open(path):
                continue
            try:
                changed[path] = self.from_disk(path, resolver_for(path))
            except Exception:  # one file the analyzer trips on must not stop the scan
                logger.exception("launch index: cannot read the launches of %s", path)
        logger.info("launch index: %d files with launches", len(self.index))
        return changed


def _cuda_files(roots: Iterable[str]) -> Iterable[str]:
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not ignored_dir(d))
            for name in sorted(files):
                if is_cuda_source(name):
                    yield str(Path(folder, name).resolve())
