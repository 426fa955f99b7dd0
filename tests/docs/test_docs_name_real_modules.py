"""Every path and module the docs name exists: a renamed or deleted module must take its docs with it.

Paths under the project's folders (`worker/child/jobs/test_job.py`, `benchmarks/server_latency.py`) and dotted
modules (`cudalens.profiler.run_findings`) in README.md, vscode-client/README.md and docs/**.md.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("analysis", "workspace", "profiler", "agents", "server", "cli", "vscode-client", "tests", "benchmarks",
           "examples", "docs", ".ci")
_FOLDER = "|".join(re.escape(f) for f in FOLDERS)
PATH = re.compile(rf"(?<![\w./-])((?:{_FOLDER})/[\w./-]+\.(?:py|ts|md|cu|cuh|json|sh|toml|mjs))")
MODULE = re.compile(r"\bcudalens\.((?:analysis|workspace|profiler|agents|server|cli)(?:\.\w+)+)")
PLACEHOLDERS = {"worker/child/jobs/foo_job.py", "worker/child/lib/name.py"}  # how a job author names their own file


def documents() -> list[Path]:
    return [ROOT / "README.md", ROOT / "vscode-client" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _module_exists(parts: list[str]) -> bool:
    # `cudalens.profiler.run_findings.outcome_findings`: the longest prefix that is a module or a package
    for k in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:k])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return True
    return False


def test_every_named_path_and_module_exists():
    missing = []
    for doc in documents():
        text = doc.read_text(encoding="utf-8")
        for m in PATH.finditer(text):
            path = m.group(1).rstrip(".")
            if path not in PLACEHOLDERS and not (ROOT / path).exists():
                missing.append(f"{doc.relative_to(ROOT)}: {path}")
        for m in MODULE.finditer(text):
            if not _module_exists(m.group(1).split(".")):
                missing.append(f"{doc.relative_to(ROOT)}: cudalens.{m.group(1)}")
    assert not missing, "\n".join(missing)


IMAGE = re.compile(r"\]\((?:docs/)?(images/[\w.-]+\.png)\)")
MAX_IMAGE_BYTES = 150_000  # screenshots palette-quantised: a clone should not carry megabytes of pictures


def test_every_screenshot_is_shown_and_small() -> None:
    shown = {m for doc in documents() for m in IMAGE.findall(doc.read_text(encoding="utf-8"))}
    stored = {f"images/{p.name}" for p in (ROOT / "docs" / "images").glob("*.png")}
    assert shown <= stored, f"named in the docs but missing: {sorted(shown - stored)}"
    assert stored <= shown, f"in docs/images but shown nowhere: {sorted(stored - shown)}"
    large = {p.name: p.stat().st_size for p in (ROOT / "docs" / "images").glob("*.png")
             if p.stat().st_size > MAX_IMAGE_BYTES}
    assert not large, f"over {MAX_IMAGE_BYTES // 1000} KB: {large}"
