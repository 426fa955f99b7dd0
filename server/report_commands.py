"""`cudalens.showReport [uri]`: the report page of an open kernel file, with the document's last on-save profile
when there is one; answers its path (VS Code opens it in a webview, Neovim users open the file).

Writing the page runs nothing of the workspace: no trust needed. The page goes to the user's cache, never beside
the user's sources."""

from __future__ import annotations

import asyncio
import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cudalens.agents.gpu_specs import peaks_of
from cudalens.agents.profiler_evaluator import profile_metrics
from cudalens.agents.report import ReportError, write_report
from cudalens.workspace.user_cache import cache_home

if TYPE_CHECKING:
    from cudalens.server.app import CudalensServer


def report_path(source: str) -> Path:
    """`~/.cache/cudalens/reports/<digest>/<name>.report.html`: the digest is of the file's full path, so two
    projects' `kernel.cu` get two pages (by its name alone, the second overwrote the first)."""
    full = str(Path(source).resolve())
    digest = hashlib.sha256(full.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]
    name = re.sub(r"[^\w.-]+", "_", Path(full).name)
    return cache_home() / "reports" / digest / f"{name}.report.html"


async def show_report(server: CudalensServer, arguments: list[Any]) -> dict[str, Any]:
    uri = arguments[0] if arguments else None
    state = server.service.documents.get(uri) if isinstance(uri, str) else None
    if state is None:
        return {"ok": False, "message": "cudalens: Show report takes [uri] of an open CUDA or Python document"}
    run = server.service.last_run(state)
    profile = run.profile if run is not None else None
    measured = profile_metrics(profile) if profile is not None and not profile.error else ()
    gpu, why = peaks_of(await server.service.runtime.gpu())
    try:
        path = await asyncio.to_thread(write_report, Path(state.path), report_path(state.path), gpu, False, measured,
                                       why)
    except (ReportError, OSError) as exc:
        return {"ok": False, "message": f"cudalens: {exc}"}
    return {"ok": True, "message": f"cudalens: report written to {path}", "path": str(path)}
