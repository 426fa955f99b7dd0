"""Build failures remembered by content, so that sources known not to compile are not compiled again to fail again.

A candidate whose CUDA does not compile falls back from the fast build to torch's `load_inline` (its messages
are the ones a user should see), and that costs a cold compile of torch's headers: 30-60 s on an H200 host. In a
search the same candidate was built ahead on a CPU core and then once more under its GPU's lease, where every
other candidate waited for it; on save, saving a broken file again paid it again. A compile error follows from
the sources and flags (both in the content name), torch (in the build root) and the compilers (in the folder's
name, from their files and the environment they read): it is kept under those and raised again, with its
compiler output, from the record. A failure that may not happen again is not kept: a killed compiler, a full
disk, and what depends on what is installed (a missing header or library, an undefined symbol at link time).

Standard library at top level (a jobs library); torch is asked inside, for the CUDA it builds with.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

KEEP = 256  # records per toolchain: each is a compiler log of a few KB
# may not happen again: the machine (a killed compiler, a full disk) or what is installed (a header, a library)
_NOT_THE_SOURCES = ("Killed", "No space left", "signal", "Terminated", "Cannot allocate memory", "timed out",
                    "No such file or directory", "cannot open source file", "cannot find -l", "undefined reference", "undefined symbol")
# what else a compile depends on: where headers and libraries are found, flags added from outside
_ENVIRONMENT = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "NVCC_PREPEND_FLAGS",
                "NVCC_APPEND_FLAGS", "NVCC_CCBIN", "TORCH_CUDA_ARCH_LIST", "CXX", "CC")
NOTE = "(cudalens: these sources failed to build before with the same compilers and flags; not compiled again)"


def remembered(root: Path, name: str) -> str | None:
    """The recorded message of `name`'s failed build, or None."""
    try:
        return (_folder(root) / name).read_text(encoding="utf-8")
    except OSError:
        return None


def remember(root: Path, name: str, exc: BaseException) -> None:
    """Keeps `exc` as `name`'s build failure when it is a compiler's error."""
    text = str(exc)
    if not (isinstance(exc, RuntimeError) and text.startswith("Error building extension") and "error" in text):
        return
    if any(word in text for word in _NOT_THE_SOURCES):
        return
    folder = _folder(root)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.{os.getpid()}"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, folder / name)  # whole or not at all: another process may be reading it
        records = sorted(folder.iterdir(), key=lambda p: p.stat().st_mtime)
        for old in records[:-KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        pass  # a record only saves time


def _folder(root: Path) -> Path:
    return root / "failed" / _toolchain()


def _toolchain() -> str:
    """The compilers a build would use, by path, size and modification time (an upgraded nvcc builds again), and
    the environment they read."""
    try:
        from torch.utils.cpp_extension import CUDA_HOME as cuda_home  # the one torch's builds use
    except ImportError:
        cuda_home = None
    nvcc = str(Path(cuda_home) / "bin" / "nvcc") if cuda_home else shutil.which("nvcc") or ""
    cxx = shutil.which(os.environ.get("CXX", "c++")) or ""
    parts = [f"{name}={os.environ.get(name, '')}" for name in _ENVIRONMENT]
    for tool in (nvcc, cxx):
        try:
            st = os.stat(tool)
            parts.append(f"{os.path.realpath(tool)}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{tool}:missing")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
