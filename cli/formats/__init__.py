"""Output formats of `cudalens check`: each module renders a sorted list of findings to one string."""

from __future__ import annotations

from collections.abc import Callable

from cudalens.analysis.findings import Finding
from cudalens.cli.formats import github, json, sarif, text

Renderer = Callable[[list[Finding]], str]

RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json.render,
    "sarif": sarif.render,
    "github": github.render,
}
