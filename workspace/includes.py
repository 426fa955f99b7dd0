"""The include reader (analysis/report.py's `IncludeReader`) of `cudalens check` and of the language server:
`#include "x.cuh"` headers looked up next to the including file, then in the configured include folders, and
decoded as `cudalens check` decodes the files it checks. In the editor an open header's text is newer than the
disk, so the server gives `open_text`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cudalens.workspace.files import load_source


class DiskIncludes:
    """`locate` says where `#include "name"` is (findings in a header are placed there); calling it reads the
    header and records its path in `read` (the server re-checks a document when a header it read changes).
    `real_paths`: paths are resolved (the editor's documents and the watcher's events are keyed by them);
    `cudalens check` keeps them as written, relative to where it runs."""

    def __init__(
        self,
        include_dirs: tuple[str, ...] = (),
        base: str = "",
        open_text: Callable[[str], str | None] | None = None,
        real_paths: bool = False,
    ) -> None:
        self.include_dirs = tuple(include_dirs)
        self.base = base  # relative include folders start here ("": the current folder)
        self.open_text = open_text
        self.real_paths = real_paths
        self.read: set[str] = set()

    def _candidates(self, name: str, including_path: str) -> list[str]:
        folders = (Path(including_path).parent, *(Path(self.base) / d for d in self.include_dirs))
        return [str((f / name).resolve()) if self.real_paths else str(f / name) for f in folders]

    def locate(self, name: str, including_path: str) -> str | None:
        return next((c for c in self._candidates(name, including_path) if Path(c).is_file()), None)

    def find(self, name: str, including_path: str) -> tuple[str, str] | None:
        """(path, text) of the header, without recording it."""
        for candidate in self._candidates(name, including_path):
            text = self.open_text(candidate) if self.open_text is not None else None
            if text is None and Path(candidate).is_file():
                try:
                    text = load_source(Path(candidate)).text
                except OSError:
                    continue
            if text is not None:
                return candidate, text
        return None

    def __call__(self, name: str, including_path: str) -> str | None:
        found = self.find(name, including_path)
        if found is None:
            return None
        self.read.add(found[0])
        return found[1]
