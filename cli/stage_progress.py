"""A one-line `[stage] message` indicator on stderr for the GPU commands (test, profile, validate), shown only
when stderr is a terminal; it never writes to stdout, so JSON output stays clean."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class StageProgress:
    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.label = label
        self.started = time.monotonic()
        try:
            self.enabled = self.stream.isatty()
        except (AttributeError, ValueError):
            self.enabled = False
        self._width = 0

    def __call__(self, message: str, fraction: float | None = None) -> None:
        if not self.enabled:
            return
        bar = ""
        if fraction is not None:
            filled = int(max(0.0, min(1.0, fraction)) * 20)
            bar = "[" + "#" * filled + "." * (20 - filled) + "] "
        line = f"{self.label}: {bar}{message} ({time.monotonic() - self.started:.0f} s)"[:120]
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def clear(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
