""""Ask Coder about this": one targeted suggestion for one spot (a finding or a verdict)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from cudalens.agents.coder.client import CoderClient
from cudalens.agents.coder.extract import code_blocks, explanation_around
from cudalens.agents.coder.prompts import ask_messages
from cudalens.agents.coder.usage import Usage
from cudalens.agents.gpu_specs import DEFAULT_GPU, GpuSpecs


@dataclass(frozen=True)
class Suggestion:
    explanation: str  # the reply's prose: all of it but the code block proposed (before it and after it)
    code: str | None  # the proposed replacement for the lines shown, when the reply has one
    usage: Usage


def ask_coder(
    client: CoderClient,
    about: str,
    code: str,
    path: str,
    first_line: int,
    language: str = "cuda",
    gpu: GpuSpecs = DEFAULT_GPU,
    cancel: threading.Event | None = None,
) -> Suggestion:
    """An explanation and a proposed edit for the lines shown."""
    reply = client.complete(ask_messages(gpu, about, code, path, first_line, language), cancel=cancel)
    blocks = code_blocks(reply.text)
    if not blocks:
        return Suggestion(reply.text.strip(), None, reply.usage)
    return Suggestion(explanation_around(reply.text, blocks[-1]), blocks[-1].text, reply.usage)
