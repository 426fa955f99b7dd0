"""The environment every child process starts with, and this process's own secrets.

A child (nvcc, ncu, compute-sanitizer, a worker, a warm ncu target) gets `clean_env()`: the variables on an
allow-list (what the CUDA toolkit, torch, Python and the locale need; the full list is below), never one named
like a credential (`…KEY`, `…TOKEN`, `…SECRET`, `…PASSWORD`, …), never one `hide()` was told of (the Coder's
`apiKeyEnv`). It is built from the list, not copied and then trimmed, so a secret nobody thought of (a cloud
token called `FOO_CREDS`) is left out because it is not on the list.

That is not enough where a child runs the user's or an LLM's code: such code can read the start-up environment
of every ancestor of the same user at /proc/<pid>/environ. So the entry points (the CLI, the server) call
`scrub()` first thing: in this process's original environment block (the memory /proc/self/environ shows),
the value of every variable a child would not get is overwritten in place, whatever its name (the CLI cannot
know that `TEAM_LLM` holds a key). Python's `os.environ` is a copy made at start-up and keeps them all, which
is where the Coder reads its key; the C library's `environ` is pointed at heap copies first, so C code that
calls getenv (OpenSSL's SSL_CERT_FILE, say) still sees them.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path

# Exact names and prefixes a child may inherit.
ALLOWED_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP",
    "LD_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "MAX_JOBS",
    # the host compiler nvcc and torch's extension builds use
    "CC", "CXX", "CUDAHOSTCXX", "CPATH", "LIBRARY_PATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
})
ALLOWED_PREFIXES = (
    "CUDA_", "NVIDIA_", "NVCC_", "NV_", "TORCH_", "PYTORCH_", "CUPY_", "TRITON_", "CUDALENS_", "PYTHON",
    "OMP_", "MKL_", "LC_", "XDG_",
)
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE", re.IGNORECASE)

_hidden: set[str] = set()  # for the rest of the process (a run's, a command's Coder key variable)
_hidden_by: dict[str, frozenset[str]] = {}  # for as long as their owner's settings say so (the server's)
_lock = threading.Lock()


def is_secret(name: str) -> bool:
    return name in _hidden or any(name in names for names in _hidden_by.values()) or bool(SECRET_NAME.search(name))


def allowed(name: str) -> bool:
    return (name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)) and not is_secret(name)


def clean_env(extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowed variables of `base` (default: this process's environment), then `extra` on top (cudalens's
    own settings for the child: PYTHONPATH, NVCC_APPEND_FLAGS...; a secret among them is dropped too)."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if allowed(k)}
    env.update({k: v for k, v in (extra or {}).items() if not is_secret(k)})
    return env


def hide(*names: str) -> bool:
    """Treat `names` as secrets from now on (the variable `coder.apiKeyEnv` names): left out of every child's
    environment and scrubbed from this process's start-up block. True when one of them was reaching children
    until now (a child started before holds it: restart it)."""
    new = [n for n in names if n and n not in _hidden]
    was_passed = any(allowed(n) and n in os.environ for n in new)
    with _lock:
        _hidden.update(new)
    if new:
        scrub()
    return was_passed


def hide_only(owner: str, names: tuple[str, ...]) -> bool:
    """`names` are `owner`'s secrets now, instead of the ones it named before: a variable it named earlier
    reaches children again unless another rule hides it (the server's settings changed back, or a refused
    workspace's choice gave way to the user's own). True when a child started before gets other variables than
    one started now would (restart it): one of `names` was reaching children, or one given back now was not."""
    new = frozenset(n for n in names if n)
    with _lock:
        old = _hidden_by.get(owner, frozenset())
        was_passed = any(allowed(n) and n in os.environ for n in new - old)
        _hidden_by[owner] = new
        given_back = any(allowed(n) and n in os.environ for n in old - new)
    if new:
        scrub()
    return was_passed or given_back


def scrub() -> None:
    """Overwrite, in this process's original environment block, the value of every variable a child would not
    get (not `allowed`): /proc/<our pid>/environ then shows `NAME=` and zeros for it. Does nothing where there
    is no /proc."""
    with _lock:
        try:
            fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
            start, end = int(fields[47]), int(fields[48])  # env_start, env_end (proc(5) fields 50, 51)
            block = Path("/proc/self/environ").read_bytes()
        except (OSError, ValueError, IndexError):
            return
        if end - start != len(block):
            return  # not the block we think it is
        import ctypes

        if ctypes.string_at(start, len(block)) != block:
            return
        offset = 0
        for entry in block.split(b"\0"):
            name, sep, value = entry.partition(b"=")
            if sep and name and value.strip(b"\0") and not allowed(os.fsdecode(name)):
                os.putenv(name, value)  # the C library's `environ` now points at a copy on the heap
                ctypes.memset(start + offset + len(name) + 1, 0, len(value))
            offset += len(entry) + 1
