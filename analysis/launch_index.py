"""The launch sites of every file a session sees (`cudalens check DIR`, the language server's workspace), for
the kernels that are defined in one file and launched from another: a header's kernel launched from the `.cu`
files that include it, or a kernel declared in a header, defined in one `.cu` and launched from another.

A file's entry is replaced as a whole when the file changes (`update` says which kernels' launches changed,
so a server re-checks only the documents that define them). Thread-safe: the server updates it from its
analysis thread and from the workspace scan.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from cudalens.analysis.findings import Span
from cudalens.analysis.launch_sites import LaunchValues

MAX_INCLUDE_DEPTH = 4


@dataclass(frozen=True)
class LaunchRecord:
    """One configuration of one launch site (a site called through a wrapper with several constants has
    several), as values: no parse tree, so it outlives the file's analysis and crosses processes."""

    kernel: str
    path: str  # the file's name as findings name it (relative for `cudalens check`, absolute in the server)
    span: Span
    values: LaunchValues


@dataclass(frozen=True)
class FileLaunches:
    records: tuple[LaunchRecord, ...]
    includes: frozenset[str]  # identities (real paths) of the headers it includes, transitively
    defines: frozenset[str]  # the functions defined in the file itself (Unit.defined_names)


@lru_cache(maxsize=4096)
def identity(path: str) -> str:
    return os.path.realpath(path)


class LaunchIndex:
    def __init__(self) -> None:
        self._files: dict[str, FileLaunches] = {}
        self._version = 0  # bumped whenever an entry changes
        self._external: dict[str, tuple[int, dict[str, list[LaunchRecord]]]] = {}  # see `external`
        self._lock = threading.Lock()

    def update(self, path: str, entry: FileLaunches) -> set[str]:
        """Replace a file's launches; the kernels whose launches (as values) changed."""
        key = identity(path)
        with self._lock:
            old = self._files.get(key)
            if old == entry:  # typing inside a kernel: the launches are what they were
                return set()
            self._files[key] = entry
            self._version += 1
        return _changed(old, entry)

    def remove(self, path: str) -> set[str]:
        key = identity(path)
        with self._lock:
            old = self._files.pop(key, None)
            self._version += 1
        return _changed(old, None)

    def external(self, defined_in: str) -> dict[str, list[LaunchRecord]]:
        """Every kernel's launches made in other files that count for its definition in `defined_in`: those of
        the files that include it, and those of files that launch a kernel of that name they do not define
        (declared in a header, defined elsewhere). Made once per change of the index: a document asks on
        every edit."""
        home = identity(defined_in)
        with self._lock:
            known = self._external.get(home)
            if known is not None and known[0] == self._version:
                return known[1]
            version = self._version
            entries = sorted((key, entry) for key, entry in self._files.items() if key != home)
        out: dict[str, list[LaunchRecord]] = {}
        for _, entry in entries:
            for r in entry.records:
                if _counts(entry, r.kernel, home):
                    out.setdefault(r.kernel, []).append(r)
        with self._lock:
            self._external[home] = (version, out)
        return out

    def reaches(self, source: str, kernel: str, defined_in: str) -> bool:
        """Whether the launches of `kernel` in `source` count for its definition in `defined_in`."""
        with self._lock:
            entry = self._files.get(identity(source))
        return entry is not None and identity(source) != identity(defined_in) and (
            _counts(entry, kernel, identity(defined_in)))

    def __contains__(self, path: str) -> bool:
        with self._lock:
            return identity(path) in self._files

    def __len__(self) -> int:
        with self._lock:
            return len(self._files)

    def __getstate__(self) -> dict:  # `cudalens check` hands it to its worker processes
        with self._lock:
            return {"files": dict(self._files)}

    def __setstate__(self, state: dict) -> None:
        self._files = state["files"]
        self._version, self._external = 0, {}
        self._lock = threading.Lock()


def _counts(entry: FileLaunches, kernel: str, home: str) -> bool:
    """A file's launches of `kernel` are those of its definition in `home` when the file includes `home`, or
    launches a kernel of that name it does not define (declared in a header, defined elsewhere)."""
    return home in entry.includes or kernel not in entry.defines


def _changed(old: FileLaunches | None, new: FileLaunches | None) -> set[str]:
    def by_kernel(entry: FileLaunches | None) -> dict[str, list]:
        out: dict[str, list] = {}
        for r in entry.records if entry is not None else ():
            out.setdefault(r.kernel, []).append(r.values)
        return out

    before, after = by_kernel(old), by_kernel(new)
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)} | (
        set() if old is None or new is None or old.includes == new.includes else set(before) | set(after))


def header_identities(paths: Iterable[str]) -> frozenset[str]:
    """The real paths of the headers a file's analysis read (`FileLaunches.includes`): one walk of the include
    graph, pipeline.read_headers, for the analysis and the index alike."""
    return frozenset(identity(p) for p in paths)
