"""The accuracy corpus as data: which files, which kernels span which lines, and the labels each kernel was
written to show (`// expect: uncoalesced, bank_conflict` at the end of a line).

Standard library only: `measure.py` imports this on the GPU machine, where cudalens need not be installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CATEGORIES = ("uncoalesced", "divergence", "bank_conflict", "sync", "race")
_EXPECT = re.compile(r"//\s*expect:\s*([a-z_, ]+)")
# `__launch_bounds__(...)` may stand before `void` or after it (llm.c: `__global__ void __launch_bounds__(16*16)
# matmul_forward_kernel4(`), with one level of parentheses inside
_BOUNDS = r"(?:__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)\s*)?"
_KERNEL = re.compile(rf"__global__\s+{_BOUNDS}void\s+{_BOUNDS}(\w+)\s*\(")


@dataclass(frozen=True)
class KernelSpan:
    name: str
    first_line: int  # 1-based, the line of `__global__` (or of the `template` before it)
    last_line: int  # the line of the closing brace


def corpus_files(root: Path = HERE) -> list[Path]:
    """Our kernels, then the fetched public ones when `fetch_public.py` has been run."""
    files = sorted((root / "kernels").glob("*.cu"))
    files += sorted((root / "public").glob("*.cu"))
    return files


def relative_name(path: Path, root: Path = HERE) -> str:
    return path.resolve().relative_to(root).as_posix()


def kernel_spans(text: str) -> list[KernelSpan]:
    """Each `__global__` function's line range, by brace matching (comments and strings are rare enough here)."""
    lines = text.splitlines()
    spans = []
    for match in _KERNEL.finditer(text):
        start_line = text.count("\n", 0, match.start()) + 1
        depth, opened, end_line = 0, False, start_line
        for number in range(start_line, len(lines) + 1):
            code = re.sub(r"//.*", "", lines[number - 1])
            if number == start_line:
                code = code[code.find("__global__") :] if "__global__" in code else code
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                end_line = number
                break
        spans.append(KernelSpan(match.group(1), start_line, end_line))
    return spans


def kernel_at(spans: list[KernelSpan], line: int) -> str | None:
    for span in spans:
        if span.first_line <= line <= span.last_line:
            return span.name
    return None


def expected_labels(text: str) -> dict[str, dict[str, list[int]]]:
    """kernel → category → lines, from the `// expect:` comments; every kernel appears, even with no label."""
    spans = kernel_spans(text)
    result: dict[str, dict[str, list[int]]] = {s.name: {c: [] for c in CATEGORIES} for s in spans}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _EXPECT.search(line)
        kernel = kernel_at(spans, number)
        if match is None or kernel is None:
            continue
        for label in (part.strip() for part in match.group(1).split(",")):
            if label in CATEGORIES:
                result[kernel][label].append(number)
    return result
