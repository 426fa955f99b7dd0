"""Which files a check looks at, and how their bytes become text.

Folders are walked for `.cu`, `.cuh` and `.py` files, skipping hidden folders and the usual build and
environment folders; a file named on the command line is always taken (pre-commit names them one by one),
unless an exclude pattern matches it. Text is decoded by its byte order mark, else as UTF-8 with replacement
characters, so no file's bytes can stop a check; bytes that are not text get a reason instead, which the
check reports as a finding.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from cudalens.analysis.file_kinds import CHECKED_SUFFIXES

SOURCE_SUFFIXES = CHECKED_SUFFIXES
# hidden folders (.git, .venv, ...) are skipped by their leading dot
SKIPPED_DIRS = frozenset({"build", "dist", "__pycache__", "node_modules", "site-packages", "venv"})

# Given a path (a file or a folder), whether the user's exclude patterns reject it.
ExcludeTest = Callable[[Path], bool]


@dataclass(frozen=True)
class Discovery:
    files: list[Path]
    missing: list[Path]  # paths named on the command line that do not exist


def _skipped_dir(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRS


def _walk(root: Path, excluded: ExcludeTest) -> Iterable[Path]:
    # os.walk does not follow symlinked folders, so a link cycle cannot loop; onerror=None skips unreadable ones
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not _skipped_dir(d) and not excluded(here / d))
        for name in sorted(files):
            path = here / name
            if name.endswith(SOURCE_SUFFIXES) and path.is_file() and not excluded(path):
                yield path


def discover_files(paths: Iterable[Path], excluded: ExcludeTest = lambda _: False) -> Discovery:
    """The source files under `paths`, each once, in a stable order."""
    files: list[Path] = []
    missing: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found: Iterable[Path] = _walk(path, excluded)
        elif path.is_file():
            found = [] if excluded(path) else [path]
        else:
            missing.append(path)
            continue
        for file in found:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                files.append(file)
    return Discovery(files, missing)


def matches_exclude(path: Path, patterns: Iterable[str], root: Path) -> bool:
    """Whether a glob pattern matches the path's name, its path relative to `root`, or a folder above it.

    `vendor` excludes `vendor/x.cu`; `*.cuh` excludes every header; `third_party/*/gen_*.cu` matches by
    relative path.
    """
    patterns = [p.strip().rstrip("/") for p in patterns if p.strip()]
    if not patterns:
        return False
    try:
        relative = path.resolve().relative_to(root.resolve())
    except ValueError:
        relative = path
    rel = relative.as_posix()
    parts = relative.parts
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatchcase(path.name, p) or fnmatchcase(rel, p) or any(fnmatchcase(pre, p) for pre in prefixes)
        for p in patterns
    )


# Byte order marks and the encodings they announce; UTF-32's come first, as UTF-32-LE's begins with UTF-16-LE's.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Without a byte order mark, this share of NUL bytes in the first kilobytes means UTF-16/32 or binary data:
# decoded as UTF-8 it would be text in which no kernel can be found, a check that "passes".
_NUL_SHARE = 0.1
_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class SourceText:
    text: str
    lossless: bool  # the bytes decoded cleanly, so writing `text` back keeps every other byte as it was
    bom: bool
    encoding: str = "utf-8"
    undecodable: str | None = None  # why the bytes are not text to analyse (then `text` is empty)


def load_source(path: Path) -> SourceText:
    """The file's text (see decode_source)."""
    return decode_source(path.read_bytes())


def decode_source(data: bytes) -> SourceText:
    """Text by the byte order mark (UTF-8, UTF-16, UTF-32; editors hide the mark, so it is dropped and columns
    agree with the language server's), else UTF-8 with U+FFFD for bytes that are not. Bytes that are not text
    at all (mostly NULs) are `undecodable`, with the reason."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            body = data[len(bom):]
            try:
                return SourceText(body.decode(encoding), True, True, encoding)
            except UnicodeDecodeError:
                return SourceText(body.decode(encoding, errors="replace"), False, True, encoding)
    head = data[:_SNIFF_BYTES]
    if head and head.count(0) > _NUL_SHARE * len(head):
        return SourceText("", False, False, undecodable="its bytes are mostly NULs (UTF-16 or UTF-32 without "
                                                        "a byte order mark, or not text at all)")
    try:
        return SourceText(data.decode("utf-8"), True, False)
    except UnicodeDecodeError:
        return SourceText(data.decode("utf-8", errors="replace"), False, False)


def read_source(path: Path) -> str:
    return load_source(path).text


def write_source(path: Path, original: SourceText, text: str) -> None:
    """Writes a changed text back in the original's encoding, with its byte order mark; refuses a lossy
    original."""
    if not original.lossless:
        raise ValueError(f"{path} is not valid {original.encoding.upper()}; not rewriting it")
    bom = next(mark for mark, encoding in _BOMS if encoding == original.encoding) if original.bom else b""
    path.write_bytes(bom + text.encode(original.encoding))
