"""The readable record of one optimize run: `.cudalens/runs/<timestamp>-<kernel>/`.

Each round gets a folder with its source, the Coder's reply, the verdict (JSON and markdown) and the evaluation;
the run gets `summary.json` and a README-like `summary.md`. Every text written passes through `redact`, so an API
key that leaked into an error message or a reply never lands on disk.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from cudalens.workspace.state import ignored


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {k: _jsonable(v) for k, v in asdict(value).items()}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    return value


class RunLog:
    def __init__(self, root: Path, kernel: str, secrets: tuple[str, ...] = (), suffix: str = ".py") -> None:
        ignored(root)  # `.cudalens/runs/`: git ignores the folder by itself
        stamp = time.strftime("%Y%m%d-%H%M%S")
        safe = re.sub(r"[^\w.-]+", "_", kernel)[:60] or "kernel"
        folder = root / f"{stamp}-{safe}"
        n = 1
        while folder.exists():
            n += 1
            folder = root / f"{stamp}-{safe}-{n}"
        folder.mkdir(parents=True)
        self.folder = folder
        self.suffix = suffix
        self._secrets = tuple(s for s in secrets if s)

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        return text

    def write(self, relative: str, content: str | dict | list) -> Path:
        path = self.folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(_jsonable(content), indent=2, default=str)
        path.write_text(self.redact(text), encoding="utf-8")
        return path

    def round_folder(self, index: int) -> str:
        return f"round-{index:02d}"

    def write_round(self, index: int, files: dict[str, str | dict | list]) -> None:
        for name, content in files.items():
            self.write(f"{self.round_folder(index)}/{name}", content)
