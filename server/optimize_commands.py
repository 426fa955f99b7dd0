"""`cudalens.optimizeKernel`, `cudalens.fixWithCoder` (`[uri, kernelName]`), `cudalens.askCoder`
(`[uri, range, code]`) and `cudalens.applyOptimization` (`[resultId]`).

The loop runs in the background with work-done progress (round k/N, best speedup so far) and a cancel button;
its best candidate is offered (`window/showMessageRequest`: Apply / Show diff / Discard) and written only
through a `workspace/applyEdit` the user asked for, against the document version the run started from.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from cudalens.agents.coder.ask import ask_coder as agents_ask_coder
from cudalens.agents.coder.client import CoderCancelled, CoderClient, CoderError
from cudalens.agents.machine_failures import machine_problem
from cudalens.agents.optimize_loop import LoopProgress
from cudalens.agents.optimize_run import OptimizeRun
from cudalens.analysis.api import KernelInfo
from cudalens.analysis.positions import split_lines
from cudalens.server.coder_setup import (
    coder_blocked,
    kernelbench_problem,
    missing_key,
    optimize_spec,
)
from cudalens.server.command_runs import stage
from cudalens.server.convert import path_uri
from cudalens.server.edit_check import EditRefused
from cudalens.server.gpu_commands import answer
from cudalens.server.offers import (
    SHOW_PROPOSAL_METHOD,
    Offer,
    new_id,
    reply_offer,
    shows_proposals,
    stale_reason,
    whole_document,
)
from cudalens.server.trust import coder_refusal

if TYPE_CHECKING:
    from cudalens.server.app import CudalensServer
    from cudalens.server.documents import DocState

logger = logging.getLogger("cudalens.server")

APPLY, SHOW_DIFF, DISCARD = "Apply", "Show diff", "Discard"
NO_WORDS = "(no explanation: only code)"
EXPLANATION_CHARS = 1200  # in a notification; the log has all of it


def _open_target(server: CudalensServer, arguments: list[Any]) -> tuple[DocState | None, str | None, str]:
    uri = arguments[0] if arguments else None
    kernel = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], str) and arguments[1] else None
    state = server.service.documents.get(uri) if isinstance(uri, str) else None
    if state is None:
        return None, None, "cudalens: this command takes [uri, kernelName] of an open document"
    return state, kernel, ""


async def optimize_kernel(server: CudalensServer, arguments: list[Any]) -> dict[str, Any]:
    return await _start(server, arguments, repair_only=False)


async def fix_with_coder(server: CudalensServer, arguments: list[Any]) -> dict[str, Any]:
    return await _start(server, arguments, repair_only=True)


async def _start(server: CudalensServer, arguments: list[Any], repair_only: bool) -> dict[str, Any]:
    state, kernel, why = _open_target(server, arguments)
    if state is None:
        return answer(server, False, why)
    settings, trust = server.service.settings, server.service.trust
    # Each refusal before a Coder round is paid for: the file, the workspace, the machine, the key.
    why = kernelbench_problem(state.path, state.text) or coder_refusal(settings, trust)
    if not why:
        why = machine_problem(state.path, state.text, settings.optimize.allow_torch_ops, await server.service.runtime.gpu())
    why = why or missing_key(settings)
    if why:
        return answer(server, False, why)  # shown, and logged by command_runs as every answer
    running = server.optimizing.get(state.uri)
    if running is not None and not running.done():
        return answer(server, False, f"cudalens: {Path(state.path).name} is already being optimized")
    run_id = new_id()
    server.optimizing[state.uri] = server.spawn(_optimize(server, state, kernel, run_id, repair_only))
    what = "repairing" if repair_only else "optimizing"
    message = f"cudalens: {what} {kernel or Path(state.path).stem} in the background (its own progress says how far)"
    return {"ok": True, "message": message, "runId": run_id}


async def _optimize(server: CudalensServer, state: DocState, kernel: str | None, run_id: str, repair_only: bool) -> None:
    version, source, name = state.version, state.text, kernel or Path(state.path).stem
    settings = server.service.settings
    task = asyncio.current_task()
    what = f"{'repairing' if repair_only else 'optimizing'} {name}"
    progress = server.work_done(f"cudalens: {what}", on_cancel=lambda: task is not None and task.cancel())
    await progress.begin("starting")
    loop = asyncio.get_running_loop()

    def on_progress(p: LoopProgress) -> None:
        best = f" (best {p.best_speedup:.2f}×, #{p.best_round})" if p.best_speedup else ""
        percentage = int(100 * min(p.round, p.rounds) / p.rounds) if p.rounds else None
        loop.call_soon_threadsafe(progress.report, p.message + best, percentage)  # it says "round k/N: ..."

    runs = Path(server.service.root or Path(state.path).parent) / ".cudalens" / "runs"
    spec = optimize_spec(settings, state.path, source, kernel, repair_only=repair_only, runs_dir=runs)
    built = await asyncio.to_thread(OptimizeRun, spec, on_progress)  # asks nvidia-smi for the GPU
    try:
        result = await built.run_async()
    except asyncio.CancelledError:
        progress.end("cancelled")
        logger.info("cudalens: %s was cancelled", what)
        server.show(f"cudalens: {what} was cancelled", types.MessageType.Info)
        raise
    except Exception as exc:
        logger.error("the optimize loop failed", exc_info=exc)
        progress.end("failed")
        server.show(f"cudalens: {what} failed: {exc}", types.MessageType.Error)
        return
    finally:
        await asyncio.to_thread(built.close)
    summary = result.summary_line()
    progress.end(summary)
    logger.info("cudalens: %s: %s%s", what, summary, f" (run log: {result.run_dir})" if result.run_dir else "")
    if not result.improved or result.best_source is None:
        # A Coder or machine failure is a warning, with its words (an APIConnectionError, "CUDA_HOME is not set").
        failed = result.stop_reason in ("coder-error", "machine")
        message = f"cudalens: {name}: no faster correct candidate — {summary}"
        server.show(message, types.MessageType.Warning if failed else types.MessageType.Info)
        return
    # under the id the command answered with
    offer = replace(whole_document(state.uri, state.path, version, source, result.best_source, summary), id=run_id)
    try:
        server.offers.add(offer, server.workspace.position_codec, state.analysis_path)  # under the command's id
    except EditRefused as exc:
        server.show(f"cudalens: {name}: the best candidate is not offered: {exc}", types.MessageType.Warning)
        return
    await _propose(server, offer, result.run_dir)


async def _propose(server: CudalensServer, offer: Offer, folder: Path | None, message: str = "") -> None:
    """Ask the user (`message`, else the offer's summary); apply only on "Apply". Without an answer the proposal
    stays for applyOptimization."""
    message = message or f"cudalens: {Path(offer.path).name}: {offer.summary}"
    choice = await _ask(server, message, (APPLY, SHOW_DIFF, DISCARD))
    if choice == SHOW_DIFF:
        await _show_diff(server, offer, folder)
        choice = await _ask(server, message, (APPLY, DISCARD))
    if choice == APPLY:
        await apply_offer(server, offer.id)
    elif choice == DISCARD:
        server.offers.drop(offer.id)


async def _show_diff(server: CudalensServer, offer: Offer, folder: Path | None) -> None:
    """The editor's own diff view of the document and the proposal where it has one (VS Code); else a unified
    diff in a `.diff` file it opens (in the run's folder when there is one)."""
    if shows_proposals(server.client_capabilities):
        try:
            await server.protocol.send_request_async(SHOW_PROPOSAL_METHOD, offer.show_params())
            return
        except Exception as exc:  # the diff file, then
            logger.info("%s failed: %s", SHOW_PROPOSAL_METHOD, exc)
    diff = offer.diff_file(folder)
    await server.window_show_document_async(types.ShowDocumentParams(path_uri(str(diff)), take_focus=True))


async def _ask(server: CudalensServer, message: str, titles: tuple[str, ...]) -> str | None:
    try:
        choice = await server.window_show_message_request_async(types.ShowMessageRequestParams(
            types.MessageType.Info, message, [types.MessageActionItem(t) for t in titles],
        ))
    except Exception as exc:  # a client without message requests: the command stays
        logger.info("window/showMessageRequest failed: %s", exc)
        return None
    return choice.title if choice is not None else None


async def apply_optimization(server: CudalensServer, arguments: list[Any]) -> dict[str, Any]:
    return await apply_offer(server, arguments[0] if arguments else None)


async def apply_offer(server: CudalensServer, offer_id: object) -> dict[str, Any]:
    offer = server.offers.get(offer_id)
    if offer is None:
        return answer(server, False, f"cudalens: no proposal {offer_id!r} (applied, discarded, or never made)")
    state = server.service.documents.get(offer.uri)
    why = stale_reason(offer, state.version if state else None, state.text if state else None,
                       state.in_sync if state else True)
    if why:
        return answer(server, False, why)
    edit = offer.edit(server.workspace.position_codec, server.document_changes())
    result = await server.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit, label=f"cudalens: {offer.summary}")
    )
    if not result.applied:
        return answer(server, False, f"cudalens: the editor did not apply the edit: {result.failure_reason or 'refused'}")
    server.offers.drop(offer.id)
    return answer(server, True, f"cudalens: applied to {Path(offer.path).name}: {offer.summary}")


async def ask_coder(server: CudalensServer, arguments: list[Any]) -> dict[str, Any]:
    """One suggestion for one spot: the explanation, and the proposed lines as an edit the user may apply."""
    uri = arguments[0] if arguments else None
    state = server.service.documents.get(uri) if isinstance(uri, str) else None
    rng = _range(arguments[1] if len(arguments) > 1 else None)
    if state is None or rng is None:
        return answer(server, False, "cudalens: askCoder takes [uri, range, code] of an open document")
    code = arguments[2] if len(arguments) > 2 and isinstance(arguments[2], str) else ""
    settings = server.service.settings
    if why := coder_blocked(settings, server.service.trust):
        return answer(server, False, why)
    lines = split_lines(state.text)
    first, last = max(rng.start.line, 0), min(max(rng.end.line, rng.start.line), len(lines) - 1)
    result = state.result
    if result is not None and result.version == state.version:  # the Coder sees (and rewrites) the whole kernel
        first, last = widen_to_kernel(result.kernels, first, last)
        last = min(last, len(lines) - 1)
    shown = "".join(lines[first : last + 1])
    about = _about(server, state, code, first, last)
    version, text = state.version, state.text
    language = "cuda" if state.kind == "cuda" else "python"
    cancel = threading.Event()
    stage(f"asking the Coder ({settings.coder.model}) about lines {first + 1}-{last + 1}")
    try:
        suggestion = await asyncio.to_thread(
            agents_ask_coder, CoderClient(settings.coder), about, shown, state.path, first + 1, language,
            cancel=cancel,
        )
    except asyncio.CancelledError:
        cancel.set()
        raise
    except (CoderError, CoderCancelled) as exc:
        return answer(server, False, str(exc))
    name, what = Path(state.path).name, f"the Coder's suggestion for {code or 'this'}"
    # all of it in the editor's log (VS Code: the cudalens output), a paragraph of it in the question
    logger.info("%s, lines %d-%d of %s:\n%s", what, first + 1, last + 1, name, suggestion.explanation or NO_WORDS)
    said = f"cudalens: {name}: {what}: {said_briefly(suggestion.explanation or NO_WORDS)}"
    result: dict[str, Any] = {"ok": True, "explanation": suggestion.explanation, "resultId": None,
                              "tokens": suggestion.usage.total_tokens, "costUsd": suggestion.usage.cost_usd,
                              "message": said}
    if suggestion.code is None:
        server.show(said, types.MessageType.Info)
        return result
    offer = reply_offer(state.uri, state.path, version, text, first, last, suggestion.code, what, state.analysis_path)
    try:
        server.offers.add(offer, server.workspace.position_codec, state.analysis_path)
    except EditRefused as exc:
        result.update(ok=False, message=f"cudalens: {what} is not offered: {exc}")
        server.show(result["message"], types.MessageType.Warning)
        return result
    result["resultId"] = offer.id
    result["diff"] = offer.diff()
    server.spawn(_propose(server, offer, None, said))
    return result


def said_briefly(explanation: str, limit: int = EXPLANATION_CHARS) -> str:
    """The explanation as one paragraph for a notification (which shows no line breaks), cut at `limit`."""
    flat = " ".join(explanation.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "… (the rest is in the cudalens log)"


def widen_to_kernel(kernels: Sequence[KernelInfo], first: int, last: int) -> tuple[int, int]:
    """0-based lines `first..last`, grown to the definition of the kernel that contains them (if one does)."""
    for k in kernels:
        if k.span.line - 1 <= first and last <= k.span.end_line - 1:
            return k.span.line - 1, k.span.end_line - 1
    return first, last


def _range(value: Any) -> types.Range | None:
    try:
        start, end = value["start"], value["end"]
        return types.Range(types.Position(int(start["line"]), int(start["character"])),
                           types.Position(int(end["line"]), int(end["character"])))
    except (TypeError, KeyError, ValueError):
        return None


def _about(server: CudalensServer, state: DocState, code: str, first: int, last: int) -> str:
    """The finding's own words when one with this code is on those lines."""
    for f in server.service.findings(state):
        if (not code or f.code == code) and first + 1 <= f.span.line <= last + 1:
            return f"{f.code} {f.rule}: {f.message}"
    return code or "this code"
