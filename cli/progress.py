"""A one-line `[3/40] path` counter on stderr, shown only when stderr is a terminal (never in pre-commit or
CI logs, never in piped output)."""

from __future__ import annotations

import sys
from typing import TextIO


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.total = total
        self.done = 0
        self.enabled = total > 1 and _is_terminal(self.stream)
        self._width = 0

    def step(self, label: str) -> None:
        self.done += 1
        if self.enabled:
            line = f"[{self.done}/{self.total}] {label}"[:120]
            self.stream.write("\r" + line.ljust(self._width))
            self.stream.flush()
            self._width = len(line)

    def clear(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
