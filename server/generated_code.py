"""The code attrs, cattrs and dataclasses generate while the server starts, compiled once and kept between starts.

A new window waits for the server's imports before its first diagnostics (issue 38), and a third of that is
`compile()`: lsprotocol's ≈ 570 attrs classes each get their `__init__`/`__eq__`/`__repr__` written as Python
text and compiled at import, our ≈ 100 dataclasses the same through `exec`, and cattrs writes the structuring
functions of each message type the first time one arrives. The text is the same on every start, so the code
objects are kept in a marshal file keyed by a digest of (text, file name, mode, `__future__` flags), and the
next start reads them instead of compiling (`benchmarks/first_diagnostics.py` has the figures).

The file lives in `private_dir("code")`, a folder only this user may enter: what it holds is run. Its name
carries the interpreter's cache tag, as `__pycache__` files do (marshal's format and the bytecode are the
interpreter's). Text compiled with anything else (other flags, bytes, an AST) takes the plain path; so does
everything when the folder or the file cannot be used. The file holds what the last process to write it used
(see `CodeCache.save`); reading it costs ≈ 45 ms of the ≈ 170 ms it saves.
"""

from __future__ import annotations
import __future__

import builtins
import hashlib
import logging
import marshal
import os
import sys
import tempfile
import types
from pathlib import Path

from cudalens.workspace.user_cache import NotPrivate, private_dir

logger = logging.getLogger("cudalens.server")

# A start's imports that compiled this many entries write the file at once (on the first start, or after an
# upgrade); fewer (attrs' frozen classes carry a per-process hash) wait for the exit: the write is ≈ 1.7 MB.
REWRITE_AT_START = 100
_FUTURE_NAMES = tuple(__future__.all_feature_names)


class CodeCache:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.stored: dict[bytes, types.CodeType] = _load(path) if path else {}
        self.used: dict[bytes, types.CodeType] = {}
        self.compiled = 0  # entries this process had to compile

    def code(self, source: object, filename: str, mode: str, flags: int) -> types.CodeType:
        """What `compile(source, filename, mode, flags, dont_inherit=True)` returns."""
        if not isinstance(source, str):
            return builtins.compile(source, filename, mode, flags, dont_inherit=True)
        digest = hashlib.blake2b(f"{flags}\0{mode}\0{filename}\0{source}".encode("utf-8", "surrogatepass"),
                                 digest_size=16).digest()
        found = self.used.get(digest) or self.stored.get(digest)
        if found is None:
            found = builtins.compile(source, filename, mode, flags, dont_inherit=True)
            self.compiled += 1
        self.used[digest] = found
        return found

    def install(self, module: types.ModuleType) -> None:
        """Route `module`'s own `compile(...)` and `exec(text, ...)` through the cache. The module's names shadow
        the builtins for its code only; the flags are those its text would have inherited (its `__future__`
        imports), so what runs is what would have run."""
        inherited = _future_flags(vars(module))

        def cached_compile(source, filename, mode, flags=0, dont_inherit=False, optimize=-1, **kwargs):
            flags |= 0 if dont_inherit else inherited
            if kwargs or optimize != -1 or flags & ~_ALL_FUTURE_FLAGS:
                return builtins.compile(source, filename, mode, flags, True, optimize, **kwargs)
            return self.code(source, filename, mode, flags)

        def cached_exec(source, globals=None, locals=None, /, **kwargs):
            if isinstance(source, str) and not kwargs:
                source = self.code(source, "<string>", "exec", inherited)
            return builtins.exec(source, globals, locals, **kwargs)

        module.compile = cached_compile
        module.exec = cached_exec

    def save(self, at_least: int = 1) -> None:
        """Write what this process used when it compiled at least `at_least` entries itself. Only what was used
        is kept: a class whose text changed, or one that carries this process's `hash()` of a string (attrs'
        frozen classes do), would otherwise pile up."""
        if self.path is None or self.compiled < at_least:
            return
        kept = dict(self.used)
        temporary: str | None = None
        try:
            handle, temporary = tempfile.mkstemp(dir=self.path.parent)
            with os.fdopen(handle, "wb") as out:
                marshal.dump(kept, out)
            os.replace(temporary, self.path)
        except OSError as exc:
            logger.info("start-up code not kept: %s", exc)
            if temporary is not None:
                Path(temporary).unlink(missing_ok=True)
            return
        self.stored, self.compiled = kept, 0


def _future_flags(namespace: dict) -> int:
    """The compiler flags of the `__future__` features a module's namespace imported."""
    flags = 0
    for name in _FUTURE_NAMES:
        feature = getattr(__future__, name)
        if namespace.get(name) is feature:
            flags |= feature.compiler_flag
    return flags


_ALL_FUTURE_FLAGS = _future_flags(vars(__future__))  # `__future__` itself holds every feature


def _load(path: Path) -> dict[bytes, types.CodeType]:
    try:
        with open(path, "rb") as f:
            stored = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(stored, dict):
        return {}
    return {k: v for k, v in stored.items() if isinstance(k, bytes) and isinstance(v, types.CodeType)}


GENERATORS = ("attr._make", "cattrs.gen", "cattrs.gen.typeddicts", "dataclasses")


def start(generators: tuple[str, ...] = GENERATORS) -> CodeCache:
    """The cache, installed in the modules that generate code: call before importing what they build."""
    try:
        path = private_dir("code") / f"server-{sys.implementation.cache_tag}.marshal"
    except NotPrivate as exc:
        logger.info("start-up code not kept: %s", exc)
        path = None
    cache = CodeCache(path)
    for name in generators:
        try:
            module = __import__(name, fromlist=["_"])
        except ImportError:
            continue
        cache.install(module)
    return cache
