"""The include reader (analysis/report.py's `IncludeReader`) of `cudalens check` and of the language server:
`#include "x.cuh"` headers looked up next to the including file, then in the configured include folders, and
decoded as `cudalens check` decodes the files it checks. In the editor an open header's text is newer than the
disk, so the server gives `open_text`.

Headers are read only under the reader's `roots` (the workspace, the project, the include folders): CI runs
`cudalens check` on untrusted pull requests, and `#include "/tmp/x/secret.cuh"` or `"../../../../etc/…"` would put
another file's `#define`s into findings. A header found outside is not read and is named in `skipped`;
`escapes` says the same of a file nvcc is about to compile, which would read them itself.
"""

from __future__ import annotations

import re
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
        roots: tuple[str, ...] | None = None,
    ) -> None:
        self.include_dirs = tuple(include_dirs)
        self.base = base  # relative include folders start here ("": the current folder)
        self.open_text = open_text
        self.real_paths = real_paths
        self.read: set[str] = set()
        # the folders headers may be read from, resolved (None: anywhere — the tests' own files)
        folders = None if roots is None else (*roots, *(Path(base) / d for d in include_dirs))
        self.roots = None if folders is None else tuple(Path(f).resolve() for f in folders)
        self.skipped: dict[str, str] = {}  # header name → the file outside the roots it would have been

    def _inside(self, candidate: str) -> bool:
        if self.roots is None:
            return True
        real = Path(candidate).resolve()
        return any(real == r or r in real.parents for r in self.roots)

    def _placed(self, name: str, including_path: str) -> tuple[list[str], str | None]:
        """(where `name` may be read from, in the compiler's search order, up to the first file of that name
        outside the roots; that file, which a compiler would read instead of any later one)."""
        folders = (Path(including_path).parent, *(Path(self.base) / d for d in self.include_dirs))
        inside = []
        for folder in folders:
            candidate = str((folder / name).resolve()) if self.real_paths else str(folder / name)
            if self._inside(candidate):
                inside.append(candidate)
            elif Path(candidate).is_file():
                return inside, str(Path(candidate).resolve())
        return inside, None

    def _candidates(self, name: str, including_path: str) -> list[str]:
        inside, outside = self._placed(name, including_path)
        if outside is not None and not any(Path(c).is_file() for c in inside):
            self.skipped.setdefault(name, outside)
        return inside

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

    def escapes(self, path: str, text: str) -> list[str]:
        """The headers `text` (the file at `path`) includes, directly or through its headers, that lie outside
        the roots: what nvcc would read there (a quoted name found outside, an absolute or climbing `<…>` name)."""
        out: dict[str, None] = {}
        seen: set[str] = set()
        todo = [(path, text)]
        while todo:
            at, body = todo.pop()
            for quoted, name in _INCLUDE.findall(body):
                if quoted == "<":  # the compiler's own search: system folders, then the include folders
                    if (name.startswith("/") or ".." in Path(name).parts) and not self._inside(
                            name if name.startswith("/") else str(Path(at).parent / name)):
                        out[name] = None
                    continue
                inside, outside = self._placed(name, at)
                if not any(Path(c).is_file() for c in inside):
                    if outside is not None:
                        out[name] = None
                    continue
                found = self.find(name, at)
                if found is not None and found[0] not in seen:
                    seen.add(found[0])
                    todo.append(found)
        return list(out)


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^">\n]+)[">]', re.MULTILINE)
