"""ptxas's resource report (`-Xptxas -v` / `--resource-usage`) → one `KernelResources` per kernel.

The report, per entry function:

    ptxas info    : Compiling entry function '_Z5spillPfPKfi' for 'sm_90'
    ptxas info    : Function properties for _Z5spillPfPKfi
        976 bytes stack frame, 864 bytes spill stores, 968 bytes spill loads
    ptxas info    : Used 24 registers, used 1 barriers, 1024 bytes smem, 360 bytes cmem[0]

Names are mangled; they are demangled in one call to `cu++filt` (ships with nvcc) or, failing that, `c++filt`
(the same Itanium scheme for everything a kernel name uses).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from cudalens.profiler import processes

_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>[^']+)'")
_PROPERTIES = re.compile(r"Function properties for (?P<name>\S+)")
_FRAME = re.compile(
    r"(?P<stack>\d+) bytes stack frame, (?P<stores>\d+) bytes spill stores, (?P<loads>\d+) bytes spill loads"
)
_USED = re.compile(r"Used (?P<regs>\d+) registers(?P<rest>.*)$")
_ITEM = re.compile(r"(?P<n>\d+) (?:bytes )?(?P<what>barriers|smem|cmem\[\d+\]|textures|samplers|surfaces|bytes cumulative stack size|cumulative stack size)")


@dataclass(frozen=True)
class KernelResources:
    """What ptxas allotted one kernel (one template instantiation) for one architecture."""

    name: str  # demangled, e.g. "tk<float>(float*)"
    mangled: str
    arch: str  # "sm_90"
    registers: int  # per thread
    shared_static_bytes: int = 0  # __shared__ arrays of fixed size (dynamic shared memory comes at launch)
    spill_stores_bytes: int = 0
    spill_loads_bytes: int = 0
    stack_frame_bytes: int = 0
    constant_bytes: int = 0  # all cmem banks together (kernel parameters live in bank 0)
    barriers: int = 0

    @property
    def spills(self) -> bool:
        return self.spill_stores_bytes > 0 or self.spill_loads_bytes > 0

    @property
    def display_name(self) -> str:
        """The name with template arguments, without return type or parameters: `tk<float>`."""
        base = self.short_name
        start = self.name.find(base)
        if start < 0 or self.name[start + len(base) : start + len(base) + 1] != "<":
            return base
        depth, i = 0, start + len(base)
        while i < len(self.name):
            depth += {"<": 1, ">": -1}.get(self.name[i], 0)
            i += 1
            if depth == 0:
                break
        return self.name[start:i]

    @property
    def short_name(self) -> str:
        """The name without parameters or template arguments: what the source calls the kernel."""
        return kernel_base_name(self.name)


def kernel_base_name(demangled: str) -> str:
    """`void ns::tk<float>(float*)` → `tk`; a mangled or plain name comes back as it is."""
    depth = 0
    cut = len(demangled)
    for i, ch in enumerate(demangled):
        if ch == "<":
            if depth == 0:
                cut = min(cut, i)
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = min(cut, i)
            break
    head = demangled[:cut].split()  # a template's demangled name starts with its return type
    return head[-1].rsplit("::", 1)[-1] if head else demangled


def parse_resource_usage(output: str) -> list[KernelResources]:
    """The kernels in ptxas's verbose output, in the order reported, with mangled names (see `demangle_all`)."""
    kernels: list[KernelResources] = []
    current: dict | None = None
    in_entry_properties = False
    for line in output.splitlines():
        m = _ENTRY.search(line)
        if m:
            if current:
                kernels.append(KernelResources(**current))
            current = {"name": m.group("name"), "mangled": m.group("name"), "arch": m.group("arch"), "registers": 0}
            in_entry_properties = False
            continue
        if current is None:
            continue
        m = _PROPERTIES.search(line)
        if m:
            # device functions called by the kernel get their own "Function properties" blocks
            in_entry_properties = m.group("name") == current["mangled"]
            continue
        m = _FRAME.search(line)
        if m and in_entry_properties:
            current["stack_frame_bytes"] = int(m.group("stack"))
            current["spill_stores_bytes"] = int(m.group("stores"))
            current["spill_loads_bytes"] = int(m.group("loads"))
            continue
        m = _USED.search(line)
        if m:
            current["registers"] = int(m.group("regs"))
            for item in _ITEM.finditer(m.group("rest")):
                n, what = int(item.group("n")), item.group("what")
                if what == "barriers":
                    current["barriers"] = n
                elif what == "smem":
                    current["shared_static_bytes"] = n
                elif what.startswith("cmem"):
                    current["constant_bytes"] = current.get("constant_bytes", 0) + n
    if current:
        kernels.append(KernelResources(**current))
    return kernels


def find_demangler(nvcc: str | None = None) -> str | None:
    """cu++filt next to nvcc, in $CUDA_HOME/bin or on PATH; else c++filt; else None."""
    folders = [Path(nvcc).resolve().parent] if nvcc else []
    folders += [Path(os.environ[v]) / "bin" for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    for folder in folders:
        if (folder / "cu++filt").is_file():
            return str(folder / "cu++filt")
    return processes.which("cu++filt") or processes.which("c++filt")


def demangle_all(names: list[str], demangler: str | None) -> dict[str, str]:
    """mangled → demangled for every name, in one process call; names it cannot demangle map to themselves."""
    result = {n: n for n in names}
    if not demangler or not names:
        return result
    out = processes.run([demangler], input="\n".join(names) + "\n", timeout=30).stdout.splitlines()
    if len(out) == len(names):
        result.update({n: d.strip() or n for n, d in zip(names, out, strict=True)})
    return result


def demangled(kernels: list[KernelResources], nvcc: str | None = None) -> list[KernelResources]:
    names = demangle_all([k.mangled for k in kernels], find_demangler(nvcc))
    return [replace(k, name=names.get(k.mangled, k.mangled)) for k in kernels]
