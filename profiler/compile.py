"""Compile CUDA source with nvcc for its diagnostics and ptxas's resource usage; no GPU, no host link.

`compile_cuda(path, text)` compiles the text of a `.cu`/`.cuh` file (the editor's buffer, saved or not) to a
cubin: `-cubin -lineinfo -arch=<arch> -Xptxas -v --resource-usage`. `compile_python(path, text)` does the same
for every CUDA source embedded in a `.py` file, the way `load_inline` would build it (its defines, and
`torch/types.h` pre-included when the device code needs torch), and maps every message back to the Python
lines. PyTorch host code is blanked out first (`device_only`) so that a kernel compiles in a second instead of
spending fifteen in the torch headers; only when device code itself uses torch are the headers used.

Results are cached by the content of the source, its local headers, the flags and the compiler version.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal

from cudalens.profiler import gpu_specs, processes
from cudalens.profiler.build_cache import BuildCache, cache_key
from cudalens.profiler.device_only import device_only
from cudalens.profiler.nvcc_diagnostics import CompilerMessage, parse_nvcc_output
from cudalens.profiler.processes import CancelToken
from cudalens.profiler.ptxas import KernelResources, demangled, kernel_base_name, parse_resource_usage

DEFAULT_ARCH = "sm_90"
# What torch.utils.cpp_extension adds to every nvcc command of load_inline / load.
LOAD_INLINE_FLAGS = (
    "-D__CUDA_NO_HALF_OPERATORS__",
    "-D__CUDA_NO_HALF_CONVERSIONS__",
    "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-D__CUDA_NO_HALF2_OPERATORS__",
    "--expt-relaxed-constexpr",
)
_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
_MAIN = "<main>"  # the compiled source's own path inside a cached result
# file: a .cu/.cuh on disk; load_inline: a torch extension source in a .py; cupy: RawKernel/RawModule code (NVRTC)
Flavor = Literal["file", "load_inline", "cupy"]


@dataclass(frozen=True)
class CompileOptions:
    arch: str | None = None  # "sm_90"; None, "auto" or "native": the detected GPU's, else sm_90
    include_dirs: tuple[str, ...] = ()
    extra_flags: tuple[str, ...] = ()
    torch_headers: Literal["auto", "never", "always"] = "auto"  # auto: only when device code needs them
    nvcc: str | None = None  # None: `nvcc` on PATH
    cache_dir: str | None = None  # None: the default (XDG); "" disables the cache
    timeout_s: float = 240.0


@dataclass(frozen=True)
class KernelSite:
    """Where a compiled kernel is defined in the user's file (1-based; end column exclusive)."""

    mangled: str
    line: int
    column: int
    end_column: int


@dataclass(frozen=True)
class CompileResult:
    path: str
    status: Literal["ok", "error", "skipped"]
    arch: str
    messages: tuple[CompilerMessage, ...] = ()
    kernels: tuple[KernelResources, ...] = ()
    sites: tuple[KernelSite, ...] = ()
    command: tuple[str, ...] = ()
    duration_s: float = 0.0
    cached: bool = False
    reason: str = ""  # why it was skipped
    cubin: str | None = None
    used_torch_headers: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def site_of(self, kernel: KernelResources) -> KernelSite | None:
        return next((s for s in self.sites if s.mangled == kernel.mangled), None)

    def kernel(self, name: str) -> list[KernelResources]:
        """The compiled kernels (all instantiations) whose source name is `name`."""
        return [k for k in self.kernels if k.short_name == name or k.name == name or k.mangled == name]


# -- tools -----------------------------------------------------------------------------------------------


def find_nvcc(explicit: str | None = None) -> str | None:
    if explicit:
        return explicit if Path(explicit).is_file() or processes.which(explicit) else None
    found = processes.which("nvcc")
    if found:
        return found
    for folder in sorted(Path("/usr/local").glob("cuda*/bin"), reverse=True):
        if (folder / "nvcc").is_file():
            return str(folder / "nvcc")
    return None


_VERSIONS: dict[str, str] = {}
_VERSIONS_LOCK = threading.Lock()


def nvcc_version(nvcc: str, cancel: CancelToken | None = None) -> str:
    """nvcc's version line, asked once per compiler ("unknown" when it fails or hangs past a minute)."""
    with _VERSIONS_LOCK:
        known = _VERSIONS.get(nvcc)
    if known is None:
        run = processes.run([nvcc, "--version"], timeout=60, cancel=cancel)
        lines = run.stdout.strip().splitlines()
        known = lines[-1] if lines and not run.timed_out else "unknown"
        with _VERSIONS_LOCK:
            _VERSIONS[nvcc] = known
    return known


def resolve_arch(arch: str | None) -> str:
    if arch in (None, "", "auto", "native"):
        return gpu_specs.detected_arch() or DEFAULT_ARCH
    return arch if arch.startswith("sm_") else f"sm_{arch.replace('.', '')}"


@functools.lru_cache(maxsize=1)
def torch_include_dirs() -> tuple[str, ...]:
    """torch's header folders for this interpreter, found without importing torch (that takes seconds)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return ()
    root = Path(next(iter(spec.submodule_search_locations))) / "include"
    if not (root / "torch").is_dir():
        return ()
    return (str(root), str(root / "torch" / "csrc" / "api" / "include"))


# -- the build ---------------------------------------------------------------------------------------------


def _local_headers(text: str, folders: list[Path], limit: int = 200) -> list[tuple[str, str]]:
    """(path, text) of the quoted #includes reachable from `text` (for the cache key), breadth first."""
    seen: dict[str, str] = {}
    queue = [(text, folders)]
    while queue and len(seen) < limit:
        source, where = queue.pop(0)
        for name in _QUOTED_INCLUDE.findall(source):
            for folder in where:
                candidate = (folder / name).resolve()
                if candidate.is_file():
                    key = str(candidate)
                    if key not in seen:
                        seen[key] = candidate.read_text(encoding="utf-8", errors="replace")
                        queue.append((seen[key], [candidate.parent, *where]))
                    break
    return sorted(seen.items())


def _file_lines(path: Path) -> list[str] | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None


def _kernel_sites(text: str, kernels: list[KernelResources]) -> list[KernelSite]:
    """Each kernel's name in `__global__ ... name(` of the source, by its source name."""
    lines = text.splitlines()
    sites = []
    for k in kernels:
        name = k.short_name
        pattern = re.compile(r"__global__[^;{}]*?\b(" + re.escape(name) + r")\s*\(", re.DOTALL)
        m = pattern.search(text)
        if not m:
            continue
        offset = m.start(1)
        line = text.count("\n", 0, offset) + 1
        col = offset - (text.rfind("\n", 0, offset) + 1) + 1
        if line <= len(lines):
            sites.append(KernelSite(k.mangled, line, col, col + len(name)))
    return sites


def _place_unlocated(messages: list[CompilerMessage], sites: list[KernelSite], source: str) -> list[CompilerMessage]:
    """ptxas and nvcc messages have no position: put them on the kernel they name, else on line 1."""
    placed = []
    for msg in messages:
        if msg.path is not None:
            placed.append(msg)
            continue
        site = next((s for s in sites if s.mangled == msg.symbol), None)
        if site is None and msg.symbol:
            name = kernel_base_name(demangled([KernelResources(msg.symbol, msg.symbol, "", 0)])[0].name)
            found = _kernel_sites(source, [KernelResources(name, msg.symbol, "", 0)])
            site = found[0] if found else None
        if site:
            placed.append(msg.moved(_MAIN, site.line, site.column, site.end_column))
        else:
            placed.append(msg.moved(_MAIN, 1, 1, 1))
    return placed


def _serialise(result: CompileResult) -> dict:
    return asdict(result)


def _deserialise(data: dict) -> CompileResult:
    return CompileResult(
        **{
            **data,
            "messages": tuple(CompilerMessage(**m) for m in data["messages"]),
            "kernels": tuple(KernelResources(**k) for k in data["kernels"]),
            "sites": tuple(KernelSite(**s) for s in data["sites"]),
            "command": tuple(data["command"]),
        }
    )


@dataclass(frozen=True)
class _Plan:
    """What to hand nvcc: the source (host code blanked or not) and the flags."""

    source: str
    flags: tuple[str, ...]
    use_torch: bool
    skip_reason: str = ""


def _plan(text: str, flavor: Flavor, options: CompileOptions, arch: str, folders: list[Path]) -> _Plan:
    embedded = flavor == "load_inline"
    stripped = device_only(text) if options.torch_headers != "always" else None
    use_torch = flavor != "cupy" and (
        options.torch_headers == "always" or (stripped is not None and stripped.needs_torch)
    )
    flags = ["-cubin", f"-arch={arch}", "-lineinfo", "-std=c++17", "-Xptxas", "-v", "--resource-usage"]
    if embedded or use_torch or (stripped is not None and stripped.stripped):
        flags += LOAD_INLINE_FLAGS  # torch extension code: build it the way torch's build would
    source = stripped.text if stripped is not None else text
    if use_torch:
        dirs = torch_include_dirs()
        if not dirs:
            reason = "the device code uses torch, whose headers are not installed for this interpreter"
            return _Plan(text, (), True, reason)
        flags += [f"-I{d}" for d in dirs]
        if embedded:
            flags += ["-include", "torch/types.h"]
        source = text
    if embedded:
        flags += ["-include", "cuda.h"]
    flags += [f"-I{f}" for f in folders]
    flags += list(options.extra_flags)
    return _Plan(source, tuple(flags), use_torch)


def _parse(
    text: str, output: str, returncode: int, src_name: str, work: Path, nvcc: str
) -> tuple[list[CompilerMessage], list[KernelResources], list[KernelSite]]:
    """nvcc's output → messages (the compiled file's as `_MAIN`, headers by absolute path), kernels, sites."""
    main_lines = text.splitlines()
    own = {src_name, str(work / src_name)}

    def source_line(path: str, line: int) -> str | None:
        lines = main_lines if path in own else _file_lines(work / path)  # an absolute path stays absolute
        return lines[line - 1] if lines and 0 < line <= len(lines) else None

    messages = parse_nvcc_output(output, source_line)
    kernels = demangled(parse_resource_usage(output), nvcc)
    sites = _kernel_sites(text, kernels)
    messages = [
        m.moved(_MAIN if m.path in own else str((work / m.path).resolve()), m.line, m.column, m.end_column)
        if m.path else m
        for m in messages
    ]
    messages = _place_unlocated(messages, sites, text)
    if not src_name.endswith(".cu"):  # a header compiled on its own is "the main file" to gcc
        messages = [m for m in messages if m.message != "#pragma once in main file"]
    # warnings inside torch's or the toolkit's own headers are theirs, not the user's
    foreign = (*torch_include_dirs(), str(Path(nvcc).resolve().parent.parent / "include"))
    messages = [m for m in messages if m.severity == "error" or not (m.path or "").startswith(foreign)]
    if returncode != 0 and not any(m.severity == "error" for m in messages):
        tail = output.strip().splitlines()[-1:] or [f"exit code {returncode}"]
        messages.append(CompilerMessage(_MAIN, 1, 1, 1, "error", f"nvcc failed: {tail[0]}", tool="nvcc"))
    return messages, kernels, sites


def _build(
    text: str,
    file_name: str,
    origin_dir: Path | None,
    options: CompileOptions,
    flavor: Flavor,
    cancel: CancelToken | None = None,
) -> CompileResult:
    """Compile `text` (named `file_name` in messages); positions stay in `text`'s coordinates, path `_MAIN`."""
    arch = resolve_arch(options.arch)
    nvcc = find_nvcc(options.nvcc)
    if nvcc is None:
        return CompileResult(_MAIN, "skipped", arch, reason="nvcc was not found (install the CUDA toolkit)")
    folders = [origin_dir] if origin_dir else []
    folders += [Path(d) for d in options.include_dirs]
    plan = _plan(text, flavor, options, arch, folders)
    if plan.skip_reason:
        return CompileResult(_MAIN, "skipped", arch, reason=plan.skip_reason)

    cache = None if options.cache_dir == "" else BuildCache(options.cache_dir)
    headers = _local_headers(text, folders)
    key = cache_key(nvcc_version(nvcc, cancel), file_name, plan.source, *plan.flags, *(p + "\0" + t for p, t in headers))
    hit = cache.get(key) if cache is not None else None
    if cache is not None and hit is not None:
        cubin = cache.entry_dir(key) / "kernel.cubin"
        return replace(_deserialise(hit), cached=True, duration_s=0.0, cubin=str(cubin) if cubin.is_file() else None)

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cudalens-nvcc-") as tmp:
        work = Path(tmp)
        (work / file_name).write_text(plan.source, encoding="utf-8")
        command = (nvcc, *plan.flags, "-x", "cu", "-o", "kernel.cubin", file_name)
        run = processes.run(command, cwd=work, timeout=options.timeout_s, cancel=cancel)
        returncode, output = run.returncode, run.stderr + run.stdout
        if returncode is None:
            message = f"nvcc took longer than {options.timeout_s:g} s and was stopped"
            timeout = CompilerMessage(_MAIN, 1, 1, 1, "error", message, tool="nvcc")
            return CompileResult(_MAIN, "error", arch, (timeout,), command=command, duration_s=options.timeout_s)
        messages, kernels, sites = _parse(text, output, returncode, file_name, work, nvcc)
        failed = returncode != 0 or any(m.severity == "error" for m in messages)
        result = CompileResult(
            _MAIN, "error" if failed else "ok", arch, tuple(messages), tuple(kernels), tuple(sites), command,
            time.monotonic() - start, used_torch_headers=plan.use_torch,
        )
        if cache is not None:
            try:
                entry = cache.put(key, _serialise(result), {"kernel.cubin": work / "kernel.cubin"})
            except OSError:  # a read-only or full cache folder costs speed, never the result
                return result
            if (entry / "kernel.cubin").is_file():
                result = replace(result, cubin=str(entry / "kernel.cubin"))
    return result


def _with_path(result: CompileResult, path: str) -> CompileResult:
    messages = tuple(replace(m, path=path) if m.path == _MAIN else m for m in result.messages)
    return replace(result, path=path, messages=messages)


def compile_cuda(
    path: str, text: str, options: CompileOptions | None = None, cancel: CancelToken | None = None
) -> CompileResult:
    """Compile one `.cu`/`.cuh` file's text; messages point into `path` (or the headers they are about)."""
    options = options or CompileOptions()
    origin = Path(path).resolve().parent
    return _with_path(_build(text, Path(path).name, origin, options, "file", cancel), path)


@dataclass(frozen=True)
class EmbeddedCompile:
    """One embedded source's build, with its messages already moved onto the `.py` file."""

    start_line: int
    result: CompileResult


@dataclass(frozen=True)
class PythonCompileResult:
    path: str
    parts: tuple[EmbeddedCompile, ...] = field(default_factory=tuple)

    @property
    def messages(self) -> tuple[CompilerMessage, ...]:
        return tuple(m for p in self.parts for m in p.result.messages)

    @property
    def kernels(self) -> tuple[KernelResources, ...]:
        return tuple(k for p in self.parts for k in p.result.kernels)

    @property
    def ok(self) -> bool:
        return all(p.result.status != "error" for p in self.parts)


def compile_python(
    path: str, text: str, options: CompileOptions | None = None, cancel: CancelToken | None = None
) -> PythonCompileResult:
    """Compile every CUDA source embedded in a Python file (load_inline strings, RawKernel code...)."""
    from cudalens.analysis.embedded import extract_cuda_sources

    options = options or CompileOptions()
    origin = Path(path).resolve().parent
    parts = []
    for index, source in enumerate(extract_cuda_sources(text)):
        if source.kind != "cuda":
            continue  # C++ declarations for pybind: host code, nothing for the GPU
        flavor: Flavor = "cupy" if source.origin in ("RawKernel", "RawModule") else "load_inline"
        built = _build(source.text, f"{Path(path).stem}_cuda{index}.cu", origin, options, flavor, cancel)
        moved = []
        for m in built.messages:
            if m.path != _MAIN:
                moved.append(m)
                continue
            line, col = source.to_file_position(m.line, m.column)
            end_line, end = source.to_file_position(m.line, max(m.end_column, m.column))
            moved.append(m.moved(path, line, col, end if end_line == line else col + 1))
        sites = []
        for s in built.sites:
            line, col = source.to_file_position(s.line, s.column)
            sites.append(KernelSite(s.mangled, line, col, col + (s.end_column - s.column)))
        result = replace(built, path=path, messages=tuple(moved), sites=tuple(sites))
        parts.append(EmbeddedCompile(source.start_line, result))
    return PythonCompileResult(path, tuple(parts))
