"""A realistic ~3,000-line .cu file for speed benchmarks: the rule fixtures' kernels repeated with unique names."""

from __future__ import annotations

import re
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "analysis" / "fixtures"


def big_cuda_source(target_lines: int = 3000) -> str:
    # not CL0xx's: code too deep or too long to analyse, which no realistic file is made of
    parts = [p.read_text() for p in sorted(FIXTURES.glob("CL*.cu"))
             if "nocompile" not in p.name and not p.name.startswith("CL0")]
    out: list[str] = []
    lines = copy = 0
    while lines < target_lines:
        for text in parts:
            if lines >= target_lines:  # every fixture added grows the set: the file stays the size it says
                break
            names = re.findall(r"__global__\s+void\s+(\w+)|__device__\s+\w+\s+(\w+)\s*\(|^void\s+(\w+)", text, re.M)
            renamed = text
            for name in {n for group in names for n in group if n}:
                renamed = re.sub(rf"\b{name}\b", f"{name}_{copy}", renamed)
            renamed = re.sub(r"^#define\s+(\w+)", lambda m: f"#undef {m.group(1)}\n#define {m.group(1)}", renamed,
                             flags=re.M)
            out.append(renamed.replace("// expect:", "// was:"))
            lines += renamed.count("\n")
        copy += 1
    return "\n".join(out)


if __name__ == "__main__":
    print(big_cuda_source())
