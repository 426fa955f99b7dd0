"""`load_inline`, built in seconds: the CUDA source split into a torch-free device unit (nvcc) and a host glue
unit over a precompiled ATen header (g++), linked with load_inline's own bindings `main.cpp`, which is compiled
once per set of declarations and then reused (docs/fast-builds.md).

A cold `load_inline` spends ~60 s on an H200 host parsing torch's headers twice (nvcc and g++); an optimize
round used to pay that for every candidate. Here a candidate costs its kernels plus a small glue file. The
result is the module load_inline would give (same flags from torch's own ninja writer, same bindings, same
`#line`s into a `cuda.cu` with load_inline's text), stored by content so that any later process reuses it.

Whenever this path declines (see split_source) or fails, the caller builds with torch's load_inline, whose
errors are the ones the user should see. Standard library at top level; torch is imported inside functions.
`start_early` begins a build's torch-free compiles before torch is imported (a worker's warm-up).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import inspect
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from . import light_glue, split_source, torch_install
from .jobkit import load_by_path

_DEVICE_PRELUDE = "".join(
    f"#include <{h}>\n"
    for h in ("cstdint", "cmath", "cfloat", "climits", "cstdio", "cassert", "algorithm", "limits", "type_traits", "utility")
)
_LITE_HEADER = """#ifndef CUDALENS_TORCH_LITE_H
#define CUDALENS_TORCH_LITE_H
// What host glue uses of <torch/extension.h>, without the C++ frontend and pybind11 (built once, precompiled).
#include <ATen/ATen.h>
#include <cuda_runtime.h>
#if __has_include(<cublas_v2.h>) && __has_include(<c10/cuda/impl/cuda_cmake_macros.h>)
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#endif
#include <vector>
namespace torch { using namespace at; }
#endif
"""
LOG: list[str] = []  # one line per load: "fast NAME (…)" or "declined NAME: reason"; read by the harness
KEEP_CANDIDATES = 64  # per bindings set: a long optimize run must not fill the disk (each .so is a few MB)
KEEP_MODULES = 32  # sets of declarations: each folder holds its bindings, its lanes and up to KEEP_CANDIDATES
_PRECOMPILING: dict[Path, threading.Thread] = {}
_PRECOMPILING_LOCK = threading.Lock()
BUILD_DIRS: list[str] = []  # where each fast build's `cuda.cu` is, for tools that name it bare (the sanitizer)
_EARLY: dict[str, threading.Thread] = {}  # a folder → the thread that waits for its early compile (start_early)
_EARLY_BUILT: dict[str, list[str]] = {}  # a folder → the objects its early compile made, until a build checks them
_EARLY_LOCK = threading.Lock()
_EARLY_NINJA = "cudalens-early.ninja"
_NAME = "@TORCH_EXTENSION_NAME@"  # the module's name in a remembered command line
# torch's ninja rule for a `.cpp` file (torch/utils/cpp_extension.py `_write_ninja_file`, Linux)
_COMPILE_COMMAND = "$cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags"


class Declined(Exception):
    """This load is not for the fast path; the message says why (load_inline builds it instead)."""


@dataclass(frozen=True)
class Sources:
    bindings: str  # load_inline's main.cpp
    cuda: str  # load_inline's cuda.cu (implicit headers + the user's CUDA)
    device: str  # the nvcc unit
    glue: str  # the g++ unit
    # main.cpp over what its declarations and the pybind11 module need (the Tensor class, torch's pybind casters),
    # not torch/extension.h: where `cpp_sources` only declares functions; None: only `bindings` will do
    light_bindings: str | None = None


# what `torch::Tensor f(torch::Tensor x, int64_t n);` and `m.def("f", torch::wrap_pybind_function(f))` need: the
# Tensor class and torch's pybind casters, not ATen's operators (torch/types.h: ATen/ATen.h) nor the C++
# frontend (torch/extension.h: nn, optim, data). g++ here: 22.8 s for load_inline's main.cpp, 6.6 s for this
_LIGHT_PRELUDE = ["#include <torch/csrc/Exceptions.h>", "#include <torch/csrc/utils/pybind.h>",
                  "namespace torch { using namespace at; using Dtype = at::ScalarType; }"]  # torch/types.h's names
_EXTENSION_H = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/extension\.h[>"][ \t]*$', re.M)
_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"', re.S)


def declarations_only(cpp: list[str]) -> bool:
    """`cpp_sources` that declare and define nothing more: prototypes, `#include`s, `#pragma once`. Anything
    with a body, a macro or an initializer list may need more of torch than the light bindings include."""
    for text in cpp:
        code = _COMMENT_OR_STRING.sub(" ", text)
        directives = [ln.strip() for ln in code.splitlines() if ln.strip().startswith("#")]
        if any(not re.match(r"#\s*(include\b|pragma\s+once\b)", d) for d in directives) or "{" in code:
            return False
    return True


def fast_load_inline(original: Any, *args: Any, **kwargs: Any) -> ModuleType:
    """Builds and imports the module `original(*args, **kwargs)` (torch's load_inline) would, or raises Declined."""
    if os.environ.get("CUDALENS_FAST_BUILD", "1") == "0":
        raise Declined("CUDALENS_FAST_BUILD=0")
    try:
        call = inspect.signature(original).bind(*args, **kwargs)
    except TypeError as exc:
        raise Declined(f"arguments load_inline does not take: {exc}") from None
    call.apply_defaults()
    a = call.arguments
    _check_arguments(a)
    sources = split_sources(a)
    flags = build_flags(a)
    stable = module_name(a, sources, flags)
    build = build_root() / stable
    candidate = _candidate(build, sources)
    library = candidate / f"{stable}.so"
    took = ""
    if not library.exists():
        _await_early(build / "lane0")  # a glue compiled there before torch was imported: that lane is the one
        with _free_lane(build) as lane:
            if not library.exists():
                took = " " + _build(stable, sources, flags, lane, candidate, bool(a.get("verbose")))
        with _locked(build / ".prune.lock"):
            _prune(build / "cand", keep=KEEP_CANDIDATES)
        with _locked(build.parent / ".prune.lock"):
            _prune_modules(build.parent, keep=KEEP_MODULES, using=build)
    else:
        os.utime(candidate)  # recently used: the last to be pruned
    os.utime(build)
    LOG.append(f"fast {a['name']} ({stable}/{candidate.name}){took}")
    BUILD_DIRS.append(str(candidate))
    return _import(stable, library)


def _candidate(build: Path, sources: Sources) -> Path:
    """The folder of the module built from `sources` in module folder `build`, named by what it compiles."""
    return build / "cand" / _digest(sources.device, sources.glue, sources.cuda)


def _check_arguments(a: dict) -> None:
    """Declines what load_inline would build differently from this path."""
    for key, ok in (
        ("cuda_sources", lambda v: bool(v)),
        ("sycl_sources", lambda v: not v),
        ("is_python_module", lambda v: v is True),
        ("with_cuda", lambda v: v is not False),
        ("build_directory", lambda v: not v),
    ):
        if key in a and not ok(a[key]):
            raise Declined(f"{key}={a[key]!r}")


def module_name(a: dict, sources: Sources, flags: dict) -> str:
    """The module's name (TORCH_EXTENSION_NAME, its build folder): the bindings' digest, not the load's own
    `name`, so that candidates differing only in it (an LLM renames its extension at will) share one bindings
    build, the ≈ 15 s of torch's headers; unless the sources name it themselves
    (`TORCH_LIBRARY(TORCH_EXTENSION_NAME, m)` is then `torch.ops.<name>` to the Python that calls it)."""
    own = [a.get("cpp_sources"), a.get("cuda_sources")]
    named = any("TORCH_EXTENSION_NAME" in t for v in own for t in ([v] if isinstance(v, str) else v or []))
    return f"{a['name'] if named else 'cudalens_ext'}_{_digest(sources.bindings, repr(sorted(flags.items())))}"


def build_flags(a: dict) -> dict[str, list[str]]:
    """load_inline's flag arguments, plus `-lineinfo` (line tables only, no change to the code: ncu needs them).
    These build the bindings, as load_inline builds its main.cpp; the glue adds to them (glue_flags)."""
    flags = {k: list(a.get(k) or []) for k in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths")}
    if "-lineinfo" not in flags["extra_cuda_cflags"]:
        flags["extra_cuda_cflags"].append("-lineinfo")
    return flags


def glue_flags(flags: dict[str, list[str]]) -> dict[str, list[str]]:
    """The glue's (and its precompiled header's): nvcc's host optimization level too, so that host code moved out
    of cuda.cu keeps the level nvcc would have compiled it at. Not the bindings': load_inline compiles main.cpp
    with `extra_cflags` alone (at g++'s -O0 unless they say otherwise), and -O3 made their first, longest compile
    a quarter slower (here: 6.5 s against 4.9 s)."""
    host_level = [f for f in flags["extra_cuda_cflags"] if re.fullmatch(r"-O[0-3s]", f)]
    if not host_level or any(f.startswith("-O") for f in flags["extra_cflags"]):
        return flags
    return {**flags, "extra_cflags": [*flags["extra_cflags"], host_level[-1]]}


def split_sources(a: dict) -> Sources:
    cpp = [a["cpp_sources"]] if isinstance(a["cpp_sources"], str) else list(a["cpp_sources"])
    cuda = [a["cuda_sources"]] if isinstance(a["cuda_sources"], str) else list(a["cuda_sources"])
    implicit = not a.get("no_implicit_headers", False)
    prelude = ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"] if implicit else []
    user_cuda = "\n".join(cuda)
    cuda_text = "\n".join([*prelude, user_cuda])
    try:
        units = split_source.split_cuda(user_cuda, "CUDA_SOURCE_PATH", len(prelude))
    except split_source.Unsplittable as exc:
        raise Declined(str(exc)) from None
    declared = list(cpp)
    if units.bindings:
        declared += units.glue_prototypes + units.bindings
    functions = a.get("functions")
    module = []
    if functions is not None:
        names = {functions: functions} if isinstance(functions, str) else functions
        names = {f: f for f in names} if isinstance(names, list) else names
        wrap = a.get("with_pytorch_error_handling", True)
        module.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
        for fn, doc in names.items():
            module.append(f'm.def("{fn}", torch::wrap_pybind_function({fn}), "{doc}");' if wrap else f'm.def("{fn}", {fn}, "{doc}");')
        module.append("}")
    bindings = (["#include <torch/extension.h>"] if implicit else []) + declared + module
    light = None
    if implicit and module and not units.bindings and declarations_only(cpp):
        # prototypes need its types, not its frontend: an `#include <torch/extension.h>` of theirs goes too
        light = "\n".join([*_LIGHT_PRELUDE, *(_EXTENSION_H.sub("", c) for c in declared), *module])
    device = ("#include <cuda.h>\n#include <cuda_runtime.h>\n" if implicit else "") + _DEVICE_PRELUDE + units.device
    return Sources("\n".join(bindings), cuda_text, device, units.glue, light)


def build_root() -> Path:
    """One folder for every process of this user and torch: the worker's build is the ncu target's (which
    runs with its own TORCH_EXTENSIONS_DIR), so a profile never rebuilds."""
    version = torch_install.versions()[0]  # torch.__version__, without importing torch
    if version in (None, "unknown"):
        import torch

        version = torch.__version__
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cudalens" / "fast_builds"
    folder = base / f"py{sys.version_info[0]}{sys.version_info[1]}_torch{version}".replace("+", "_")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _build(stable: str, sources: Sources, flags: dict, lane: Path, candidate: Path, verbose: bool) -> str:
    """One candidate in `lane`: its glue and kernels compile while the bindings do (the first time a set of
    declarations is seen), then they are linked with the bindings' object. Says where its time went (a first
    build on a fresh machine is a first save's or round's longest part)."""
    from torch.utils import cpp_extension

    started = time.perf_counter()
    marks: dict[str, float] = {}
    candidate.mkdir(parents=True, exist_ok=True)
    cuda_path = candidate / "cuda.cu"
    _write_if_changed(cuda_path, sources.cuda)
    # the header of every module folder and of the worker's warm-up, at the fast builds' root (a lane's
    # parent is its module's folder, whose parent is the root)
    glue = glue_flags(flags)
    pch, precompiling = _precompiled_header(stable, lane, glue, root=lane.parent.parent)
    bindings = _Bindings(stable, sources, flags, lane.parent / "bindings", verbose)
    # the glue's `#line`s name the lane's own copy of cuda.cu, not the candidate's: an edit of device code only
    # then leaves glue.cpp as it was, and ninja does not compile it again (on 2 cores it is ≈ 3 s, the longer
    # of the two halves). Its messages are never shown (a failed split build falls back to load_inline's).
    _write_if_changed(lane / "cuda.cu", sources.cuda)
    # while the header is not precompiled yet (a machine's first build), the glue includes only what it calls
    light = None if pch.with_name(pch.name + ".gch").exists() else light_glue.prelude(
        sources.glue, Path(cpp_extension.include_paths()[0]))
    _write_if_changed(lane / "glue.cpp", glue_text(sources, pch, lane / "cuda.cu", light))
    _write_if_changed(lane / "kernels.cu", sources.device.replace("CUDA_SOURCE_PATH", str(cuda_path)))
    _write_if_changed(lane / split_source.LAUNCHERS_FILE, "// the launchers' #line name (split_source)\n")
    try:
        ldflags = _torch_call(cpp_extension._prepare_ldflags, extra_ldflags=[*flags["extra_ldflags"], str(bindings.obj)],
                              with_cuda=True, with_sycl=False, verbose=verbose, is_standalone=False)
        objects_flags = {**glue, "extra_ldflags": ldflags}
        try:
            _compile_objects(lane, stable, ["glue.cpp", "kernels.cu"], objects_flags)
        except _CompileFailed as exc:
            if light is None or "glue.o" not in exc.failed:
                raise
            LOG.append(f"light glue of {stable} failed to compile: the ATen header instead")
            _write_if_changed(lane / "glue.cpp", glue_text(sources, pch, lane / "cuda.cu"))
            _compile_objects(lane, stable, ["glue.cpp", "kernels.cu"], objects_flags)
        marks["glue+kernels" if light is None else "light glue+kernels"] = time.perf_counter()
        bindings.wait()
        marks["then the bindings"] = time.perf_counter()
        _torch_call(cpp_extension._run_ninja_build, build_directory=str(lane), verbose=verbose,
                    error_prefix=f"Error linking {stable}")
        marks["link"] = time.perf_counter()
    finally:
        bindings.wait(raising=False)
        if precompiling is not None:
            precompiling.join()
    marks["then the header"] = time.perf_counter()
    tmp = candidate / f".{stable}.so.{os.getpid()}"
    shutil.copy2(lane / f"{stable}.so", tmp)
    os.replace(tmp, candidate / f"{stable}.so")
    steps, last = [], started
    for step, at in marks.items():
        steps.append(f"{step} {at - last:.1f} s")
        last = at
    made = "bindings compiled" if bindings.compiled_here else "bindings reused"
    return f"in {time.perf_counter() - started:.1f} s ({', '.join(steps)}; {made})"


def _compile_objects(folder: Path, stable: str, names: list[str], flags: dict) -> None:
    """torch's ninja file for `names` in `folder` (its flags, its object names), and ninja run on the objects
    only: the link comes after, once every object it needs is there."""
    from torch.utils import cpp_extension

    _torch_call(
        cpp_extension._write_ninja_file_to_build_library,
        path=str(folder / "build.ninja"), name=stable, sources=[str(folder / n) for n in names],
        with_cuda=True, with_sycl=False, is_standalone=False, extra_sycl_cflags=[], **flags,
    )
    ninja = (folder / "build.ninja").read_text()
    if any(n.endswith(".cpp") for n in names):
        _remember_cpp_variables(ninja, stable, flags)
    objects = re.findall(r"^build (\S+\.o): (?:cuda_)?compile ", ninja, re.M)
    with _EARLY_LOCK:
        early = {o: _mtime(folder / o) for o in _EARLY_BUILT.pop(str(folder), [])}
    run = subprocess.run(["ninja", "-C", str(folder), *objects], capture_output=True, text=True, check=False)
    for obj, before in early.items():
        if _mtime(folder / obj) != before:  # torch's command line was not the early one: ninja compiled it again
            LOG.append(f"early {obj} of {stable} compiled again: torch's flags are not the ones guessed")
    if run.returncode != 0:
        failed = " ".join(re.findall(r"^FAILED: (.*)$", run.stdout, re.M))
        raise _CompileFailed(f"compiling {', '.join(names)} failed: {run.stdout[-2000:]}", failed)


class _CompileFailed(RuntimeError):
    def __init__(self, message: str, failed: str) -> None:
        super().__init__(message)
        self.failed = failed  # ninja's FAILED: lines (the targets that did not build)


class _Bindings:
    """load_inline's `main.cpp` for one set of declarations, compiled once into `folder/main.o` (in a thread, so
    that a first build compiles it beside its glue and kernels) and linked into every candidate of the set.
    Where the declarations allow it, the light `main.cpp` (≈ 7 s of g++ here against 23 s for
    torch/extension.h); should that fail to compile, load_inline's own."""

    def __init__(self, stable: str, sources: Sources, flags: dict, folder: Path, verbose: bool) -> None:
        self.folder, self.obj = folder, folder / "main.o"
        self._done = folder / "main.o.done"  # written after a whole build: a killed one leaves no half object
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self.compiled_here = not self._done.exists()  # (or waited for another build compiling them)
        if self.compiled_here:
            self._thread = threading.Thread(target=self._compile, args=(stable, sources, flags),
                                            name="cudalens-bindings", daemon=True)
            self._thread.start()

    def _compile(self, stable: str, sources: Sources, flags: dict) -> None:
        try:
            with _locked(self.folder / ".lock"):
                if self._done.exists():
                    return
                texts = [sources.light_bindings, sources.bindings] if sources.light_bindings else [sources.bindings]
                for i, text in enumerate(texts):
                    _write_if_changed(self.folder / "main.cpp", text)
                    try:
                        _compile_objects(self.folder, stable, ["main.cpp"], flags)
                        break
                    except RuntimeError:
                        if i == len(texts) - 1:
                            raise
                        LOG.append(f"light bindings of {stable} failed to compile: torch/extension.h instead")
                self._done.write_text("light" if i == 0 and len(texts) == 2 else "full")
        except BaseException as exc:  # raised in the building thread by wait()
            self._error = exc

    def wait(self, raising: bool = True) -> None:
        if self._thread is not None:
            self._thread.join()
        if raising and self._error is not None:
            raise self._error


def glue_text(sources: Sources, pch: Path | None, cuda_path: Path, light: str | None = None) -> str:
    """The glue over the (precompiled) lite header `pch`, or over `light` (light_glue.prelude) instead."""
    return (light or f'#include "{pch}"\n') + sources.glue.replace("CUDA_SOURCE_PATH", str(cuda_path))


def _prune(folder: Path, keep: int) -> None:
    """Removes all but the `keep` most recently used candidates (a process that loaded one keeps its mapping)."""
    try:
        candidates = sorted((p for p in folder.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    except OSError:
        return
    for old in candidates[:-keep]:
        shutil.rmtree(old, ignore_errors=True)


def _prune_modules(root: Path, keep: int, using: Path) -> None:
    """Removes all but the `keep` most recently used module folders (an LLM that keeps changing its functions'
    signatures makes one a change), except `using` and any folder whose lanes or bindings another build holds."""
    try:
        folders = sorted((p for p in root.iterdir() if (p / "cand").is_dir() and p != using),
                         key=lambda p: p.stat().st_mtime)
    except OSError:
        return
    for old in folders[:max(0, len(folders) - (keep - 1))]:
        locks = [*old.glob("lane*/.lock"), old / "bindings" / ".lock"]
        if not any(_held_elsewhere(lock) for lock in locks if lock.exists()):
            shutil.rmtree(old, ignore_errors=True)


def _precompiled_header(stable: str, build: Path, flags: dict, root: Path | None = None
                        ) -> tuple[Path, threading.Thread | None]:
    """The lite header to include, precompiled with exactly the flags torch's ninja file gives `.cpp` files (one
    per flag set, shared by every build). Without a precompiled header the glue still compiles, only slower.
    The first build with a flag set precompiles it in a thread (returned: the build waits for it at its end, so
    that a short-lived process leaves it made) while the bindings, the glue and the kernels compile: the glue uses
    the `.gch` only when it is in place by then (it appears whole, by rename), and every later build does. On a
    fresh machine that takes the header's ≈ 15 s off the first build. A thread already at it (the worker's
    warm-up) is left to finish on its own: None. `build` is the folder of this build's own files; the header is
    made once in `root`'s `pch/` (default: build's parent, the fast builds' root), for every build and the warm-up."""
    from torch.utils import cpp_extension

    scratch = build / "pch-probe"
    scratch.mkdir(parents=True, exist_ok=True)
    header = build / "cudalens_torch_lite.h"
    _write_if_changed(header, _LITE_HEADER)
    try:
        _torch_call(
            cpp_extension._write_ninja_file_to_build_library,
            path=str(scratch / "build.ninja"),
            name=stable,
            sources=[str(build / "glue.cpp"), str(build / "kernels.cu")],
            with_cuda=True,
            with_sycl=False,
            is_standalone=False,
            extra_sycl_cflags=[],
            **{**flags, "extra_ldflags": []},
        )
        variables = _ninja_variables((scratch / "build.ninja").read_text())
        command = [
            *shlex.split(variables.get("cxx", "c++")),
            *[f for f in shlex.split(variables.get("cflags", "")) if not f.startswith("-DTORCH_EXTENSION_NAME=")],
            *shlex.split(variables.get("post_cflags", "")),
        ]
    except Exception as exc:  # torch's private writer moved: build without the precompiled header
        LOG.append(f"no precompiled header: {exc}")
        return header, None
    shared = (root or build.parent) / "pch" / _digest(" ".join(command), _LITE_HEADER)
    shared_header = shared / "cudalens_torch_lite.h"
    if (shared / "failed.txt").exists():  # tried once with these flags: not again on every build
        return header, None
    if (shared / "cudalens_torch_lite.h.gch").exists():
        return shared_header, None
    shared.mkdir(parents=True, exist_ok=True)
    _write_if_changed(shared_header, _LITE_HEADER)  # the glue includes it from here, precompiled or not yet
    with _PRECOMPILING_LOCK:  # one thread a header in this process (the file lock below is per process)
        running = _PRECOMPILING.get(shared)
        if running is not None and running.is_alive():
            return shared_header, None  # the warm-up's: this build need not wait for it
        if _held_elsewhere(shared / ".lock"):
            # another process is making it (a worker's warm-up, while a build ahead runs): this build goes on
            # without it, and does not wait for it to end either
            return shared_header, None
        thread = threading.Thread(target=_precompile, args=(command, shared), name="cudalens-pch", daemon=True)
        _PRECOMPILING[shared] = thread
        thread.start()
    return shared_header, thread


def warm_precompiled_header(extra_cuda_cflags: list[str]) -> threading.Thread | None:
    """Starts precompiling the header the builds of sources with these nvcc flags will use (`.cu` files get
    `-O3 -lineinfo`, as do load_inline calls with `-O3`), so that the first save does not wait for it; the
    worker's warm-up calls it. None: nothing to do (already there, or it cannot be made here)."""
    build = build_root() / "warmup"
    build.mkdir(parents=True, exist_ok=True)
    return _precompiled_header("warmup", build, glue_flags(build_flags({"extra_cuda_cflags": list(extra_cuda_cflags)})))[1]


# load_inline's defaults for what start_early reads (its signature is torch's, which is not imported yet)
_LOAD_INLINE_DEFAULTS = {"functions": None, "extra_cflags": None, "extra_cuda_cflags": None, "extra_ldflags": None,
                         "extra_include_paths": None, "build_directory": None, "verbose": False, "with_cuda": None,
                         "is_python_module": True, "with_pytorch_error_handling": True, "no_implicit_headers": False}


def start_early(name: str, **kwargs: Any) -> list[str]:
    """Starts the compiles of `load_inline(name, **kwargs)`'s fast build that need no torch imported: the bindings
    (a first build's longest compile: 7-8 s of g++ on the H200) and, before the precompiled header exists, the
    light glue, each in its folder with torch's command line for it, so that the build, once torch is imported,
    finds them made or being made. A worker's warm-up imports torch for 3-5 s first; this runs beside it
    (build_job.prepare). Returns what it started ([]: nothing to do, or nothing it can tell).

    The command line is the one torch's ninja writer gave the last build of these flags with this torch and
    environment (remembered by `_compile_objects`), or, the first time, the one it would give (`_guess_cpp_variables`).
    ninja keeps an object only when its command line is the one it was made with, so a wrong guess costs one more
    compile, never a wrong module; the build's log says so."""
    a = {**_LOAD_INLINE_DEFAULTS, **kwargs, "name": name}
    try:
        _check_arguments(a)
        sources = split_sources(a)
    except Declined:
        return []
    flags = build_flags(a)
    stable = module_name(a, sources, flags)
    root = build_root()
    build = root / stable
    if (_candidate(build, sources) / f"{stable}.so").exists():
        return []
    started = []
    bindings = build / "bindings"
    variables = _cpp_variables(flags, stable)
    if variables and not (bindings / "main.o.done").exists() and _start_compile(
            bindings, {"main.cpp": sources.light_bindings or sources.bindings}, "main.o", variables):
        started.append("bindings")
    torch_dir = torch_install.folder()
    variables = _cpp_variables(glue_flags(flags), stable)
    # with the header precompiled, the glue takes a second over it once torch is imported
    if variables and torch_dir and not any(root.glob("pch/*/cudalens_torch_lite.h.gch")):
        lane = build / "lane0"
        light = light_glue.prelude(sources.glue, torch_dir / "include")
        files = {"cuda.cu": sources.cuda, "glue.cpp": glue_text(sources, None, lane / "cuda.cu", light)}
        if _start_compile(lane, files, "glue.o", variables):
            started.append("glue")
    if started:
        LOG.append(f"early {stable}: {' and '.join(started)} compiling before torch's import")
    return started


def _start_compile(folder: Path, files: dict[str, str], obj: str, variables: dict[str, str]) -> bool:
    """`obj` compiled from `files` (the first one named after it) in `folder` by ninja, under the folder's lock
    (the one its build takes), in the background; False where another build holds the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    handle = open(folder / ".lock", "a")  # released by the thread that waits for ninja
    if not _try_flock(handle):
        handle.close()
        return False
    try:
        for file, text in files.items():
            _write_if_changed(folder / file, text)
        source = next(f for f in files if f.endswith(".cpp"))
        # the rule and build line as torch writes them, so that ninja's record of the command is torch's
        (folder / _EARLY_NINJA).write_text("\n".join([
            "ninja_required_version = 1.3", *(f"{k} = {variables[k]}" for k in ("cxx", "cflags", "post_cflags")),
            "rule compile", f"  command = {variables['command']}", "  depfile = $out.d", "  deps = gcc",
            f"build {obj}: compile {os.path.abspath(folder / source)}", ""]))
        began = time.perf_counter()
        ninja = subprocess.Popen(["ninja", "-C", str(folder), "-f", _EARLY_NINJA, obj],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()
        return False

    def finish() -> None:
        code = ninja.wait()
        with _EARLY_LOCK:
            if code == 0:
                _EARLY_BUILT[str(folder)] = [obj]
        LOG.append(f"early {obj} of {folder.parent.name} {'in' if code == 0 else 'failed after'} "
                   f"{time.perf_counter() - began:.1f} s")
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()

    thread = threading.Thread(target=finish, name=f"cudalens-early-{obj}", daemon=True)
    with _EARLY_LOCK:
        _EARLY[str(folder)] = thread
    thread.start()
    return True


def _await_early(folder: Path) -> None:
    """Waits for the early compile in `folder`, if one was started in this process (its lock is then free)."""
    with _EARLY_LOCK:
        thread = _EARLY.pop(str(folder), None)
    if thread is not None:
        thread.join()


def _cpp_variables(flags: dict[str, list[str]], name: str) -> dict[str, str] | None:
    """cxx, cflags, post_cflags and the compile rule's command of torch's ninja file for a `.cpp` file of module
    `name` built with `flags`: remembered from the last build, else guessed; None: neither."""
    try:
        variables = json.loads(_remembered_path(flags).read_text())
    except (OSError, ValueError):
        variables = _guess_cpp_variables(flags)
    if not isinstance(variables, dict) or not all(isinstance(variables.get(k), str) for k in
                                                  ("cxx", "cflags", "post_cflags", "command")):
        return None
    return {**variables, "cflags": variables["cflags"].replace(_NAME, name)}


def _remembered_path(flags: dict[str, list[str]]) -> Path:
    """Where torch's command line for these flags is kept: per torch (the root), interpreter and what torch reads
    from the environment to make it."""
    env = [os.environ.get(k) for k in ("CXX", "CUDA_HOME", "CUDA_PATH", "CUDA_INC_PATH", "CUDNN_HOME", "CUDNN_PATH",
                                        "TORCH_NO_COMPILER_WRAPPER", "PATH")]
    key = repr((sys.executable, env, flags.get("extra_cflags"), flags.get("extra_include_paths")))
    return build_root() / "torch-flags" / f"{_digest(key)}.json"


def _remember_cpp_variables(ninja: str, name: str, flags: dict[str, list[str]]) -> None:
    """Keeps what torch's ninja file `ninja` says a `.cpp` file of module `name` compiles with, for start_early."""
    variables = _ninja_variables(ninja, raw=True)
    command = re.search(r"^rule compile\n  command = (.*)$", ninja, re.M)
    if command is None or not all(k in variables for k in ("cxx", "cflags", "post_cflags")):
        return
    kept = {"cxx": variables["cxx"], "cflags": variables["cflags"].replace(f"-DTORCH_EXTENSION_NAME={name}", f"-DTORCH_EXTENSION_NAME={_NAME}"),
            "post_cflags": variables["post_cflags"], "command": command.group(1)}
    path = _remembered_path(flags)
    text = json.dumps(kept, indent=1)
    if not path.exists() or path.read_text(errors="replace") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        tmp.write_text(text)
        os.replace(tmp, path)


def _guess_cpp_variables(flags: dict[str, list[str]]) -> dict[str, str] | None:
    """What torch's ninja writer (`_write_ninja_file_to_build_library`, with_cuda, on Linux) gives a `.cpp` file,
    worked out without importing torch: the compiler (CXX, behind ccache or sccache where torch's writer wraps
    it), the module's defines, the include folders (yours, torch's, CUDA's as torch finds it, Python's), -fPIC
    and the C++ standard its writer names. None where torch adds flags only its import can tell (the pybind11
    and libstdc++ ABI flags of torch ≤ 2.9)."""
    import shlex
    import shutil
    import sysconfig

    torch_dir = torch_install.folder()
    try:
        writer = (torch_dir / "utils" / "cpp_extension.py").read_text(encoding="utf-8") if torch_dir else ""
    except OSError:
        return None
    std = re.search(r"cflags = common_cflags \+ \['-fPIC', '(-std=c\+\+\w+)'\] \+ extra_cflags", writer)
    if std is None or re.search(r"\+=?\s*_get_(?:pybind11|glibcxx)_abi_build_flags\(\)", writer):
        return None
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if cuda_home is None:
        nvcc = shutil.which("nvcc")
        cuda_home = os.path.dirname(os.path.dirname(nvcc)) if nvcc else "/usr/local/cuda"
        if not nvcc and not os.path.exists(cuda_home):
            return None
    system = [str(torch_dir / "include"), str(torch_dir / "include" / "torch" / "csrc" / "api" / "include")]
    system += [p for p in (os.path.join(cuda_home, "include"), os.environ.get("CUDA_INC_PATH")) if p and p != "/usr/include"]
    cudnn = os.environ.get("CUDNN_HOME") or os.environ.get("CUDNN_PATH")
    system += [os.path.join(cudnn, "include")] if cudnn else []
    system.append(sysconfig.get_path("include", scheme="posix_prefix"))
    cflags = [f"-DTORCH_EXTENSION_NAME={_NAME}", "-DTORCH_API_INCLUDE_EXTENSION_H",
              *(f"-I{shlex.quote(os.path.abspath(p.strip()))}" for p in flags.get("extra_include_paths") or []),
              *(f"-isystem {shlex.quote(p)}" for p in system), "-fPIC", std.group(1),
              *(f.strip() for f in flags.get("extra_cflags") or [])]
    compiler = [os.environ.get("CXX", "c++")]
    if "def _wrap_compiler" in writer and not os.environ.get("TORCH_NO_COMPILER_WRAPPER"):
        compiler = [*(w for w in ("ccache", "sccache") if shutil.which(w))][:1] + compiler
    return {"cxx": shlex.join(compiler), "cflags": " ".join(cflags), "post_cflags": "", "command": _COMPILE_COMMAND}


def _precompile(command: list[str], shared: Path) -> None:
    with _locked(shared / ".lock"):
        if (shared / "cudalens_torch_lite.h.gch").exists():
            return
        tmp = shared / f"cudalens_torch_lite.h.gch.{os.getpid()}"
        run = subprocess.run(
            [*command, "-x", "c++-header", str(shared / "cudalens_torch_lite.h"), "-o", str(tmp)],
            capture_output=True, text=True, check=False,
        )
        if run.returncode != 0:
            LOG.append(f"no precompiled header: {(run.stderr.strip().splitlines() or ['?'])[-1][:200]}")
            tmp.unlink(missing_ok=True)
            (shared / "failed.txt").write_text(run.stderr[-4000:])
            return
        os.replace(tmp, shared / "cudalens_torch_lite.h.gch")


def _ninja_variables(text: str, raw: bool = False) -> dict[str, str]:
    """A ninja file's top-level variables, unescaped (`$$` is `$`), or as written (`raw`)."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)\s*=\s*(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2) if raw else m.group(2).replace("$$", "$")
    return out


def _torch_call(fn: Any, **kwargs: Any) -> Any:
    """Calls one of torch's private build helpers with the arguments this torch version takes."""
    params = inspect.signature(fn).parameters
    missing = [p for p, v in params.items() if v.default is inspect.Parameter.empty and p not in kwargs]
    if missing:
        raise Declined(f"torch's {fn.__name__} wants {missing}")
    return fn(**{k: v for k, v in kwargs.items() if k in params})


def _import(stable: str, library: Path) -> ModuleType:
    """Every candidate shares its bindings' module name (`PyInit_<stable>`), but pybind11 ≥ 3 returns a module
    it already made for the same spec name: a package-qualified name unique to the candidate keeps them apart
    (CPython looks the init function up by the last component)."""
    return load_by_path(f"cudalens_{library.parent.name}.{stable}", library)


@contextlib.contextmanager
def _free_lane(build: Path) -> Iterator[Path]:
    """A folder of `build` that no other build uses now: candidates of one set of declarations build at once,
    one a lane (a search builds several ahead of their GPU time), and a file saved again and again keeps using
    lane 0, where its unchanged glue object is still up to date. All busy: wait for one."""
    lanes = max(2, os.cpu_count() or 2)
    for i in range(lanes):
        lane = build / f"lane{i}"
        lane.mkdir(parents=True, exist_ok=True)
        with open(lane / ".lock", "a") as handle:
            if not _try_flock(handle):
                continue
            try:
                yield lane
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
            return
    lane = build / f"lane{os.getpid() % lanes}"
    with _locked(lane / ".lock"):
        yield lane


def _held_elsewhere(path: Path) -> bool:
    """Whether another process holds the lock `_locked(path)` takes (probed, not kept)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        if not _try_flock(handle):
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def _try_flock(handle: Any) -> bool:
    """Takes the exclusive lock of an open file now, or says it is held."""
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Across processes: the worker and an ncu or sanitizer child may build the same thing at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def _write_if_changed(path: Path, text: str) -> None:
    """An unchanged file keeps its time stamp, so ninja keeps its object (the bindings' above all)."""
    if not path.exists() or path.read_text(encoding="utf-8", errors="replace") != text:
        path.write_text(text, encoding="utf-8")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


