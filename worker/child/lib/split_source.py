"""Splits load_inline's CUDA source into a torch-free device unit and a small host "glue" unit, so that a fresh
candidate compiles in seconds instead of the ~60 s torch's headers cost nvcc (docs/fast-builds.md).

The device unit (nvcc) gets the kernels, `__device__` code, types, macros and one launcher per launched kernel;
the glue unit (g++, over a precompiled ATen header) gets the host functions that use torch, their `<<<…>>>`
launches replaced by calls to those launchers. Items keep their text and their line numbers (`#line`), so
compiler messages, `-lineinfo` and ncu's source view still point into load_inline's `cuda.cu`.

Anything this splitter is not sure about (namespaces, `#if` blocks, a kernel named outside a launch, a template
launch whose arguments depend on the glue, torch types in device code) makes it decline with a reason; the
caller then builds the way load_inline does. Standard library only (a job module); the lexing is
worker/child/cpp_source.py's, shared with device_only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import cpp_source

# the file name the launchers' `#line` gives them (there is no such source): nvcc's dependency file lists it, so
# the build writes a file of this name where nvcc runs (fast_inline._build), or ninja takes the kernels' object
# for out of date every time and compiles it again before each link (the H200: a 0.3 s link took 1.6 s)
LAUNCHERS_FILE = "cudalens_launchers"
_DEVICE_WORDS = re.compile(r"\b__(?:device|constant|shared|managed|host|forceinline|noinline)__\b")
_GLOBAL = re.compile(r"\b__global__\b")
_HOST_SIDE_HELPER = re.compile(r"^(?=.*\b__host__\b)(?=.*\b(?:inline|__forceinline__|static|constexpr|template)\b)", re.S)
_TYPE_ITEM = re.compile(r"^\s*(?:template\s*<[^{;]*>\s*)?(?:typedef|using|struct|class|union|enum|static_assert)\b")
_CONST_ITEM = re.compile(r"^\s*(?:static\s+)?(?:inline\s+)?(?:constexpr|const)\b[^(]*[=;{]")
_LAUNCH = re.compile(r"\b([A-Za-z_]\w*)\s*(<(?:[^<>;]|<[^<>;]*>)*>)?\s*<<<")
_TORCH_HEADERS = ("torch/extension.h", "torch/torch.h", "torch/all.h", "torch/types.h", "torch/python.h")
_GLUE_SAFE_HEADER = re.compile(
    r"^(?:torch|ATen|c10)/|^cuda(?:_runtime|_runtime_api|_fp16|_bf16|_fp8)?\.h$|^[a-z_]+$"
    r"|^(?:std\w+|math|string|assert|limits|float)\.h$|^(?:cublas\w*|curand|cusparse|cufft|cudnn|cusolver\w*)\.h$"
)
_BUILTIN_TYPES = {
    "float", "double", "int", "unsigned", "signed", "long", "short", "char", "bool", "void", "const", "half",
    "__half", "__nv_bfloat16", "float2", "float4", "int2", "int4", "size_t", "int64_t", "int32_t", "uint32_t",
    "uint64_t", "true", "false",
}


class Unsplittable(Exception):
    """The source has something the split cannot carry over faithfully; the message says what."""


@dataclass(frozen=True)
class Item:
    text: str
    line: int  # 1-based line of the item's first character in the source
    kind: str  # "pp" (a preprocessor line) or "decl"


@dataclass(frozen=True)
class KernelSignature:
    name: str
    template: tuple[str, ...]  # template parameter names, () for a plain kernel
    params: tuple[tuple[str, str], ...]  # (declaration text, name)


@dataclass
class SplitUnits:
    device: str  # the nvcc unit, with #line directives into `source_name`
    glue: str  # the g++ unit's body (after the precompiled header), with #line directives
    glue_prototypes: list[str] = field(default_factory=list)  # functions of the glue the bindings may call
    bindings: list[str] = field(default_factory=list)  # PYBIND11_MODULE blocks found in the CUDA source
    launchers: int = 0


def split_cuda(source: str, source_name: str, prelude_lines: int = 0) -> SplitUnits:
    """`source` as it stands in load_inline's `cuda.cu` after `prelude_lines` lines of implicit headers (a
    launch clang-format spaced out, `<< <grid, block>> >(`, is read as `<<<`: the same offsets and lines)."""
    items = top_level_items(cpp_source.joined_launches(source))
    kernels = {k.name: k for k in (_kernel(i.text) for i in items if i.kind == "decl" and _GLOBAL.search(i.text)) if k}
    device: list[str] = []
    glue: list[str] = []
    bindings: list[str] = []
    device_only_names: set[str] = set()
    shared_names: set[str] = set(_BUILTIN_TYPES)  # what a launch's template arguments may name
    glue_items: list[Item] = []

    def place(out: list[str], item: Item, text: str | None = None) -> None:
        out.append(f'#line {item.line + prelude_lines} "{source_name}"\n{item.text if text is None else text}\n')

    for item in items:
        if item.kind == "pp":
            units = _preprocessor_units(item.text)
            for out in units:
                place(device if out == "device" else glue, item)
            m = re.match(r"\s*#\s*define\s+([A-Za-z_]\w*)", item.text)
            if m and len(units) == 2:
                shared_names.add(m.group(1))
            continue
        text = item.text
        head = text.split("{", 1)[0]
        torchy = bool(cpp_source.TORCH_MARKERS.search(text))
        if re.match(r"\s*(?:namespace\b|extern\s+\"C\"\s*\{)", text):
            raise Unsplittable('a namespace or extern "C" block')
        if re.match(r"\s*PYBIND11_MODULE\b", text):
            bindings.append(text)
            continue
        if re.match(r"\s*TORCH_LIBRARY", text):
            raise Unsplittable("a TORCH_LIBRARY registration")
        if _TYPE_ITEM.match(text) or _CONST_ITEM.match(text):
            if not torchy:
                place(device, item)
                shared_names.update(re.findall(r"\b(?:struct|class|union|enum)\s+([A-Za-z_]\w*)", head))
                shared_names.update(_declared_names(head))
            place(glue, item)
            continue
        if _GLOBAL.search(text) or _DEVICE_WORDS.search(text):
            if torchy:
                raise Unsplittable("device code uses torch types")
            place(device, item)
            if _HOST_SIDE_HELPER.search(head) and not _GLOBAL.search(text):
                place(glue, item)  # `__host__ __device__ inline` helpers (cdiv…) serve the launch code too
            if not ("{" in text and _function_head(head)) and "(" not in head.split("=", 1)[0]:
                device_only_names.update(_declared_names(head))  # a __device__/__constant__ variable
            continue
        shared = re.match(r"\s*(?:template\b|inline\b|static\b|constexpr\b)", text)
        if shared and not torchy and "<<<" not in text:
            place(device, item)  # inline helpers may serve both sides (constexpr ones device code too)
            place(glue, item)
            continue
        glue_items.append(item)  # host code: torch glue, launch helpers, plain functions and variables

    launchers: dict[tuple[str, str], str] = {}
    launcher_defs: list[str] = []
    glue_functions: list[str] = []
    for item in glue_items:
        rewritten = _rewrite_launches(item.text, kernels, launchers, launcher_defs, shared_names)
        used = [n for n in [*kernels, *device_only_names] if re.search(rf"\b{re.escape(n)}\b", rewritten)]
        if used:
            raise Unsplittable(f"host code names {used[0]} outside a <<<…>>> launch")
        place(glue_functions, item, rewritten)

    launcher_prototypes = "".join(_prototype(t) + "\n" for t in launcher_defs)
    return SplitUnits(
        device="".join(device) + f'#line 1 "{LAUNCHERS_FILE}"\n' + "".join(d + "\n" for d in launcher_defs),
        glue="".join(glue) + f'#line 1 "{LAUNCHERS_FILE}"\n' + launcher_prototypes + "".join(glue_functions),
        glue_prototypes=[_prototype(i.text) for i in glue_items if "{" in i.text and _function_head(i.text.split("{", 1)[0])],
        bindings=bindings,
        launchers=len(launcher_defs),
    )


def _preprocessor_units(text: str) -> list[str]:
    """Which units a top-level preprocessor line goes to: "device", "glue", both, or neither."""
    words = text.lstrip("# \t").split(None, 1)
    directive = words[0] if words else ""
    if directive in ("if", "ifdef", "ifndef", "elif", "else", "endif"):
        raise Unsplittable("a conditional (#if) at top level")
    if directive == "pragma" and "once" in text:
        return []
    if directive != "include":
        return ["device", "glue"]  # #define, #undef, #pragma
    header = text.split("include", 1)[1].strip().strip('<>"')
    if header in _TORCH_HEADERS:
        return []  # the glue's precompiled header stands in for them; device code must not need torch
    if re.match(r"(?:torch|ATen|c10)/", header):
        return ["glue"]
    return ["device", "glue"] if _GLUE_SAFE_HEADER.match(header) else ["device"]


# --- scanning ------------------------------------------------------------------------------------------------


def top_level_items(source: str) -> list[Item]:
    """Preprocessor lines and declarations at brace depth 0, comments and literals skipped over."""
    items: list[Item] = []
    i, n = 0, len(source)
    start = None
    depth = 0
    line = 1
    start_line = 1
    at_line_start = True
    while i < n:
        c = source[i]
        if c == "\n":
            line += 1
            at_line_start = True
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == "#" and at_line_start and depth == 0 and start is None:
            k = cpp_source.directive_end(source, i)
            text = _strip_comment(source[i:k])
            items.append(Item(text, line, "pp"))
            line += source.count("\n", i, k)
            i = k
            continue
        at_line_start = False
        k = cpp_source.skip_comment_or_literal(source, i)
        if k != i:
            if start is None and c in "\"'":  # a literal is part of an item; a comment is not
                start, start_line = i, line
            line += source.count("\n", i, k)
            i = k
            continue
        if start is None:
            start, start_line = i, line
        if source.startswith('R"', i):
            raise Unsplittable("a raw string literal")
        if c in "{(":
            depth += 1
        elif c in "})":
            depth -= 1
            if depth < 0:
                raise Unsplittable("unbalanced braces")
            if depth == 0 and c == "}":
                rest = source[i + 1 :].lstrip()
                head = source[start : i + 1].split("{", 1)[0]
                if not (rest.startswith(";") or _needs_semicolon(head)):
                    items.append(Item(source[start : i + 1], start_line, "decl"))
                    start = None
        elif c == ";" and depth == 0:
            items.append(Item(source[start : i + 1], start_line, "decl"))
            start = None
        i += 1
    if start is not None and source[start:].strip():
        raise Unsplittable("the source ends inside a declaration")
    if depth:
        raise Unsplittable("unbalanced braces")
    return items


def _strip_comment(line: str) -> str:
    return re.sub(r"//[^\n]*$", "", line).rstrip()


def _needs_semicolon(head: str) -> bool:
    """A class/struct/union/enum body (or `= {…}` initialiser) ends at its `;`, not at its `}`."""
    return bool(re.search(r"\b(?:struct|class|union|enum)\b", head) and "(" not in head) or head.rstrip().endswith("=")


def _function_head(head: str) -> bool:
    return bool(re.search(r"\)\s*(?:const\s*)?(?:noexcept\s*)?(?:->\s*[\w:<>,\s*&]+)?\s*$", head))


def _declared_names(head: str) -> list[str]:
    head = head.split("=", 1)[0].split("[", 1)[0].split("(", 1)[0]
    words = re.findall(r"[A-Za-z_]\w*", head)
    return words[-1:] if words else []


# --- kernels and launches ------------------------------------------------------------------------------------


def _kernel(text: str) -> KernelSignature | None:
    head = text.split("{", 1)[0] if "{" in text else text.rstrip(";")
    template: tuple[str, ...] = ()
    m = re.match(r"\s*template\s*<(.*?)>\s*(?=[_A-Za-z])", head, re.S)
    if m:
        template = tuple(re.findall(r"(?:typename|class|int|unsigned|bool|size_t|int64_t)\s+([A-Za-z_]\w*)", m.group(1)))
        head = head[m.end() :]
    m = re.search(r"([A-Za-z_]\w*)\s*\((.*)\)\s*$", head, re.S)
    if not m:
        return None
    params = []
    for raw in _split_top(m.group(2)):
        decl = re.sub(r"\s*=.*$", "", raw, flags=re.S).strip()
        if not decl or decl == "void":
            continue
        names = re.findall(r"[A-Za-z_]\w*", decl)
        if len(names) < 2 or "(" in decl or "[" in decl:
            return KernelSignature(m.group(1), template, (("?", "?"),))  # a parameter form the launcher cannot repeat
        params.append((" ".join(decl.split()), names[-1]))
    return KernelSignature(m.group(1), template, tuple(params))


def _split_top(text: str) -> list[str]:
    """Splits at commas outside (), <> and {} nesting."""
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "(<{[":
            depth += 1
        elif c in ")>}]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _rewrite_launches(text: str, kernels: dict[str, KernelSignature], launchers: dict, defs: list[str], shared: set[str]) -> str:
    out, pos = [], 0
    for m in _LAUNCH.finditer(text):
        if m.start() < pos:
            continue
        name, targs = m.group(1), (m.group(2) or "")
        kernel = kernels.get(name)
        if kernel is None:
            raise Unsplittable(f"a launch of {name}, which is no kernel of this source")
        if any(p == ("?", "?") for p in kernel.params):
            raise Unsplittable(f"{name} has a parameter the launcher cannot repeat")
        config_end = text.find(">>>", m.end())
        if config_end < 0:
            raise Unsplittable("a launch without >>>")
        config = [c.strip() for c in _split_top(text[m.end() : config_end])]
        j = config_end + 3
        while j < len(text) and text[j].isspace():
            j += 1
        if j >= len(text) or text[j] != "(":
            raise Unsplittable("a launch without arguments")
        close = cpp_source.closing_bracket(text, j)
        if close >= len(text):
            raise Unsplittable("unbalanced parentheses in a launch")
        args = text[j + 1 : close]
        key = (name, " ".join(targs.split()))
        if key not in launchers:
            launchers[key] = f"cudalens_launch_{name}_{len(launchers)}"
            defs.append(_launcher(launchers[key], kernel, targs, shared))
        padded = config + ["0"] * (4 - len(config))
        if len(config) < 2 or len(config) > 4:
            raise Unsplittable("a launch configuration of other than 2–4 values")
        call = (f"{launchers[key]}(dim3({padded[0]}), dim3({padded[1]}), (size_t)({padded[2]}), "
                f"(cudaStream_t)({padded[3]}){', ' if args.strip() else ''}{args})")
        out.append(text[pos : m.start()] + call)
        pos = close + 1
    out.append(text[pos:])
    return "".join(out)


def _launcher(function: str, kernel: KernelSignature, targs: str, shared: set[str]) -> str:
    values = [a.strip() for a in _split_top(targs.strip()[1:-1])] if targs else []
    if kernel.template and len(values) != len(kernel.template):
        raise Unsplittable(f"a launch of template {kernel.name} without all its arguments")
    for value in values:
        for word in re.findall(r"[A-Za-z_]\w*", value):
            if word not in shared:
                raise Unsplittable(f"template argument {value} of {kernel.name} may depend on the host code")
    params = []
    for decl, _name in kernel.params:
        for tparam, value in zip(kernel.template, values, strict=False):
            decl = re.sub(rf"\b{re.escape(tparam)}\b", value, decl)
        params.append(decl)
    names = ", ".join(p for _, p in kernel.params)
    head = f"void {function}(dim3 cudalens_grid, dim3 cudalens_block, size_t cudalens_smem, cudaStream_t cudalens_stream"
    head += "".join(f", {p}" for p in params) + ")"
    return f"{head} {{ {kernel.name}{targs}<<<cudalens_grid, cudalens_block, cudalens_smem, cudalens_stream>>>({names}); }}"


def _prototype(definition: str) -> str:
    return definition.split("{", 1)[0].rstrip() + ";"
