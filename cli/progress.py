"""Progress on stderr, one rewritten line, shown only when stderr is a terminal: never in pre-commit or CI logs,
never in piped output, never on stdout (JSON output stays clean).

`FileProgress` counts files (`[3/40] path`) for `check`; `StageProgress` names the stage of a GPU command
(`test: [####....] building (12 s)`)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from cudalens.cli.escape import printable


class StatusLine:
    """One line of stderr that is rewritten in place and wiped at the end."""

    def __init__(self, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled and _is_terminal(self.stream)
        self._width = 0

    def show(self, line: str) -> None:
        if self.enabled:
            line = printable(line)[:120]
            self.stream.write("\r" + line.ljust(self._width))
            self.stream.flush()
            self._width = len(line)

    def clear(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


class FileProgress(StatusLine):
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        super().__init__(stream, enabled=total > 1)
        self.total = total
        self.done = 0

    def step(self, label: str) -> None:
        self.done += 1
        self.show(f"[{self.done}/{self.total}] {label}")


class StageProgress(StatusLine):
    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        self.label = label
        self.started = time.monotonic()

    def __call__(self, message: str, fraction: float | None = None) -> None:
        bar = ""
        if fraction is not None:
            filled = int(max(0.0, min(1.0, fraction)) * 20)
            bar = "[" + "#" * filled + "." * (20 - filled) + "] "
        self.show(f"{self.label}: {bar}{message} ({time.monotonic() - self.started:.0f} s)")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
