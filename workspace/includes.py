"""The standard include reader (analysis/report.py's `IncludeReader`): `#include "x.cuh"` headers read from
disk, decoded as `cudalens check` decodes the files it checks."""

from __future__ import annotations

from pathlib import Path

from cudalens.workspace.files import load_source


class DiskIncludes:
    """`name` next to the including file, then in `include_dirs`; `locate` says where that is (findings in a
    header are placed there)."""

    def __init__(self, include_dirs: tuple[str, ...] = ()) -> None:
        self.include_dirs = tuple(include_dirs)

    def locate(self, name: str, including_path: str) -> str | None:
        for folder in (Path(including_path).parent, *map(Path, self.include_dirs)):
            candidate = folder / name
            if candidate.is_file():
                return str(candidate)
        return None

    def __call__(self, name: str, including_path: str) -> str | None:
        found = self.locate(name, including_path)
        return load_source(Path(found)).text if found is not None else None
