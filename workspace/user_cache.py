"""Where cudalens keeps what it makes for the user across projects: `$CUDALENS_CACHE_DIR`, else
`$XDG_CACHE_HOME/cudalens`, else `~/.cache/cudalens`. One definition, so the build cache, the server's log, the
warm workers' sockets and the server's compiled start-up code agree on it."""

from __future__ import annotations

import os
from pathlib import Path


def cache_home() -> Path:
    explicit = os.environ.get("CUDALENS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cudalens"


class NotPrivate(OSError):
    """The folder cannot be made, or someone other than this user may enter it (why, in one line)."""


def private_dir(name: str) -> Path:
    """`cache_home()/name`, made 0700; refused unless it is a folder of this user that no one else may enter:
    what it holds (sockets a worker listens on, code the server loads) must not be someone else's to plant."""
    path = cache_home() / name
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError as exc:
        raise NotPrivate(f"cannot make {path}: {exc.strerror}") from None
    if not os.path.isdir(path) or os.path.islink(path) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise NotPrivate(f"{path} must be a folder of yours that only you may enter (chmod 700)")
    return path
