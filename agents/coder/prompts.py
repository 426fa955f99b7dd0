"""The Coder's prompts. Templates are data (`{{name}}` placeholders, so CUDA braces need no escaping); the
builders only choose a template and fill it."""

from __future__ import annotations

import json
from dataclasses import dataclass

from cudalens.agents.gpu_specs import GpuSpecs
from cudalens.agents.judge.render import render_markdown
from cudalens.agents.judge.verdict import Verdict
from cudalens.analysis.positions import split_lines

SYSTEM = """You are an expert CUDA engineer who writes fast, correct custom CUDA kernels for PyTorch models.
You answer with ONE complete Python file in a single ```python code fence and nothing after it.
The file keeps the reference `Model`, `get_inputs` and `get_init_inputs` unchanged and defines `ModelNew`, whose
forward does the main work in CUDA kernels built with torch.utils.cpp_extension.load_inline.
Never fall back to PyTorch ops for the main computation, never use try/except fallbacks, side streams, threads,
cached or constant outputs, and never touch timing functions: such candidates are rejected."""

CONTEXT = """## Target GPU
{{gpu}}

## PyTorch reference (the ground truth; do not change it)
```python
{{reference}}
```
"""

OPTIMIZE = (
    """Make this kernel faster while keeping it correct.

"""
    + CONTEXT
    + """
## Current candidate{{speed}}
```python
{{source}}
```

## The Judge's verdict on the current candidate
{{verdict}}

```json
{{judge_json}}
```

Apply exactly the Judge's method ({{method}}) following its plan. Keep everything else as it is.
Reply with the complete new Python file in one ```python fence."""
)

REPAIR = (
    """This candidate is wrong. Fix it with the smallest change that makes it correct; do not optimize.

"""
    + CONTEXT
    + """
## Failing candidate
```python
{{source}}
```

## The Judge's diagnosis
{{verdict}}
{{details}}
Reply with the complete corrected Python file in one ```python fence."""
)

FIRST = """Write a CUDA implementation of this PyTorch model as `ModelNew`.

## Target GPU
{{gpu}}

## PyTorch reference
```python
{{reference}}
```

Reply with the complete Python file (the reference plus `ModelNew`) in one ```python fence."""

NO_CODE = """Your last reply contained no code I could use ({{error}}). Reply with the complete Python file in one
```python fence."""

ASK = """A CUDA developer asks about one spot of their code. Give one targeted suggestion: a short explanation
(at most five sentences) and a proposed replacement for the lines shown, in one code fence.

## Target GPU
{{gpu}}

## The finding or verdict
{{finding}}

## The code around it (lines {{first_line}}-{{last_line}} of {{path}})
```{{language}}
{{code}}
```"""

def fill(template: str, **values: str) -> str:
    out = template
    for name, value in values.items():
        out = out.replace("{{" + name + "}}", value)
    return out


@dataclass(frozen=True)
class PromptContext:
    reference: str
    source: str | None  # None: no candidate yet (the file has only the reference)
    gpu: GpuSpecs
    verdict: Verdict | None = None
    details: str = ""  # compiler log or traceback excerpt for repairs


def optimize_messages(ctx: PromptContext) -> list[dict[str, str]]:
    if ctx.source is None or ctx.verdict is None:
        user = fill(FIRST, gpu=ctx.gpu.describe(), reference=ctx.reference.strip())
    else:
        speed = f" ({ctx.verdict.speedup:.2f}× the reference)" if ctx.verdict.speedup else ""
        user = fill(
            OPTIMIZE,
            gpu=ctx.gpu.describe(),
            reference=ctx.reference.strip(),
            source=ctx.source.strip(),
            verdict=render_markdown(ctx.verdict),
            judge_json=json.dumps(ctx.verdict.judge_json(), indent=2, ensure_ascii=False),
            method=ctx.verdict.method_title or "its method",
            speed=speed,
        )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def repair_messages(ctx: PromptContext) -> list[dict[str, str]]:
    assert ctx.source is not None and ctx.verdict is not None
    details = f"\n## Details\n```\n{ctx.details.strip()[-4000:]}\n```\n" if ctx.details.strip() else ""
    user = fill(
        REPAIR,
        gpu=ctx.gpu.describe(),
        reference=ctx.reference.strip(),
        source=ctx.source.strip(),
        verdict=render_markdown(ctx.verdict),
        details=details,
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def no_code_followup(messages: list[dict[str, str]], reply: str, error: str) -> list[dict[str, str]]:
    return [
        *messages,
        {"role": "assistant", "content": reply},
        {"role": "user", "content": fill(NO_CODE, error=error)},
    ]


def ask_messages(
    gpu: GpuSpecs, finding: str, code: str, path: str, first_line: int, language: str
) -> list[dict[str, str]]:
    last = first_line + max(len(split_lines(code)), 1) - 1  # `code` ends with a line end or not: the same lines
    user = fill(
        ASK,
        gpu=gpu.describe(),
        finding=finding,
        code=code,
        path=path,
        first_line=str(first_line),
        last_line=str(last),
        language=language,
    )
    return [{"role": "user", "content": user}]

