"""`.cudalens/`: the folder of a project where cudalens writes what it makes (optimize runs, whole-model problems,
report pages). Git ignores it by itself: the folder holds a `.gitignore` that says `*`, as `.pytest_cache/` and
`.ruff_cache/` do, so no project needs a line for it in its own `.gitignore`."""

from __future__ import annotations

from pathlib import Path

STATE_DIR = ".cudalens"
_IGNORE_ALL = "# Made by cudalens: nothing in this folder belongs in the repository.\n*\n"
# What marks a project's top folder, nearest first.
_PROJECT_MARKERS = (STATE_DIR, "pyproject.toml", ".git")


def project_root(path: Path) -> Path:
    """The project of `path` (a file or a folder): the nearest folder at or above it that has a `.cudalens`, a
    `pyproject.toml` or a `.git`; else the current folder when `path` is inside it, else the folder of `path`."""
    here = path.resolve()
    start = here if here.is_dir() else here.parent
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in _PROJECT_MARKERS):
            return folder
    cwd = Path.cwd().resolve()
    return cwd if start == cwd or cwd in start.parents else start


def ignored(path: Path) -> Path:
    """`path`, after making sure that the `.cudalens` folder it is in (if it is in one) exists and holds its
    `.gitignore`. Call it before writing under `.cudalens/`."""
    absolute = path.absolute()
    for folder in (absolute, *absolute.parents):
        if folder.name == STATE_DIR:
            folder.mkdir(parents=True, exist_ok=True)
            ignore = folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text(_IGNORE_ALL, encoding="utf-8")
            break
    return path


def report_page(file: Path) -> Path:
    """Where `cudalens report FILE` writes the page of a file: `.cudalens/reports/` of its project, at the file's
    path in the project (`src/a/kernel.cu` → `.cudalens/reports/src/a/kernel.cu.report.html`)."""
    root = project_root(file)
    relative = file.resolve().relative_to(root)
    return root / STATE_DIR / "reports" / relative.parent / f"{relative.name}.report.html"
