"""Profiles a file's kernels with Nsight Compute: one ncu run over the profile target, its report read back,
per-line counters mapped to the user's lines; results cached by source hash."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from cudalens.profiler import processes
from cudalens.profiler.ncu import csv_pages, line_map, locate, standby
from cudalens.profiler.ncu.metrics import METRICS, SOURCE_METRICS, kernel_filter
from cudalens.profiler.processes import CancelToken, Finished
from cudalens.worker.child.lib import problem_loader
from cudalens.worker.child.results import KernelMetrics, LineCounters, NcuProfile
from cudalens.worker.jobs import child_command
from cudalens.workspace.user_cache import cache_home

_UNKNOWN_METRIC = re.compile(r"(?:Failed to find metric|[Mm]etric)\s+['\"]?([A-Za-z0-9_.]+__[A-Za-z0-9_.]+)")
_PERMISSION = "ERR_NVGPUCTRPERM"


@dataclass(frozen=True)
class ProfileRequest:
    path: str
    reference: str | None = None
    kernels: tuple[str, ...] = ()  # empty: every __global__ of the file
    python: str = sys.executable  # the interpreter with CUDA torch that runs the target
    timeout: float = 300.0
    launch_count: int = 8
    use_cache: bool = True  # read a cached profile of the same sources
    cache_dir: str | None = None
    standby: bool = False  # run in (and leave behind) a warm ncu target: for long-lived callers, the server
    standby_owner: str = ""  # whose warm targets these are (standby.drop_owner ends them); "" the server's
    device: str | None = None  # the one GPU the target sees (CUDA_VISIBLE_DEVICES), as the search leases it


def cache_dir(request: ProfileRequest) -> Path:
    if request.cache_dir:
        return Path(request.cache_dir)
    return cache_home() / "ncu"


def cache_key(text: str, reference_text: str, kernels: tuple[str, ...], ncu: str, path: str = "") -> str:
    """The sources, the filter, the metric set and the ncu; and the path, which the cached lines carry."""
    h = hashlib.sha256()
    for part in (text, reference_text, ",".join(sorted(kernels)), ",".join(METRICS), ncu, path):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def target_env(path: str, text: str) -> dict[str, str] | None:
    """What a profiled or sanitized target gets on top of the clean environment (`child_env`). A Python file
    whose own `load_inline` flags lack `-lineinfo` gets it through nvcc's `NVCC_APPEND_FLAGS`, built into a
    separate extensions folder so that the user's normal builds stay as they are (one extra cold build, then
    cached)."""
    if not path.endswith(".py") or "-lineinfo" in text:
        return None
    return {
        "NVCC_APPEND_FLAGS": " ".join(filter(None, [os.environ.get("NVCC_APPEND_FLAGS"), "-lineinfo"])),
        "TORCH_EXTENSIONS_DIR": str(cache_home() / "torch_extensions_lineinfo"),
    }


def request_env(request: ProfileRequest, path: str, text: str) -> dict[str, str] | None:
    """`target_env`, and the request's GPU: a profile runs on the GPU its candidate holds the lease of."""
    env = target_env(path, text)
    if request.device is None:
        return env
    return {**(env or {}), "CUDA_VISIBLE_DEVICES": request.device}


def profile_file(request: ProfileRequest, cancel: CancelToken | None = None) -> NcuProfile:
    """`cancel` kills the running ncu (`processes.Cancelled` is raised)."""
    path = Path(request.path).resolve()
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return NcuProfile(error=f"{path}: {exc.strerror}")
    ncu = locate.find_ncu()
    if ncu is None:
        return NcuProfile(error="Nsight Compute (ncu) not found: install the CUDA toolkit or set CUDALENS_NCU")
    kernels = request.kernels or tuple(problem_loader.kernel_names(text))
    reference = problem_loader.reference_for(path, text, request.reference)
    ref_text = reference.read_text(errors="replace") if reference and reference.exists() else ""
    key = cache_key(text, ref_text, kernels, ncu, str(path))
    cached = cache_dir(request) / f"{key}.json"
    if request.use_cache and cached.exists():
        try:
            return replace(NcuProfile.from_json(json.loads(cached.read_text())), source="cache")
        except (ValueError, KeyError):
            pass
    with tempfile.TemporaryDirectory(prefix="cudalens-ncu-") as tmp:
        profile = _run(request, path, text, kernels, ncu, Path(tmp), cancel)
    if profile.error is None:  # written even when not read: the next unchanged run is free
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(profile.to_json()))
    return profile


def ncu_command(ncu: str, kernels: tuple[str, ...], metrics: list[str], report: Path, target: list[str], launch_count: int) -> list[str]:
    cmd = [
        ncu, "--target-processes", "application-only", "--clock-control", "none",
        "--kernel-name-base", "function",
    ]
    filt = kernel_filter(kernels)
    if filt:
        cmd += ["--kernel-name", filt]
    cmd += [
        "--launch-count", str(launch_count),
        "--section", "SourceCounters",
        "--metrics", ",".join(metrics),
        "--import-source", "yes",
        "--export", str(report), "--force-overwrite",
    ]
    return cmd + target


def standby_command(ncu: str, metrics: list[str], report: Path, python: str, launch_count: int) -> list[str]:
    """A standby's ncu: no kernel filter (it does not know the next file's kernels), profiling only between the
    target's cudaProfilerStart/Stop."""
    cmd = ncu_command(ncu, (), metrics, report, child_command(python, "jobs.profile_target", "--standby"), launch_count)
    return [*cmd[:1], "--profile-from-start", "off", *cmd[1:]]


def prepare_standby(request: ProfileRequest, path: str, text: str, count: int = 1) -> None:
    """Starts warm ncu targets for `request` until `count` are up. A save that will profile asks for 2 when it
    begins: one for its own profile, a spare warming for the save after it."""
    found = _standby_for(request, path, text)
    if found is not None and request.standby:
        key, command_for, env = found
        standby.start(key, command_for, env, count, request.standby_owner)


def _standby_for(
    request: ProfileRequest, path: str, text: str
) -> tuple[str, Callable[[Path], list[str]], dict[str, str] | None] | None:
    """The key, command and environment of the standby `request` on this file uses; None without ncu."""
    ncu = locate.find_ncu()
    if ncu is None:
        return None
    env = request_env(request, path, text)
    return (*_standby_key(request, ncu, env), env)


def _standby_key(request: ProfileRequest, ncu: str, env: dict[str, str] | None) -> tuple[str, Callable[[Path], list[str]]]:
    def command_for(report: Path) -> list[str]:
        return standby_command(ncu, list(METRICS), report, request.python, request.launch_count)

    return standby.key_for(command_for(Path("REPORT")), env, request.standby_owner), command_for


def _run(
    request: ProfileRequest, path: Path, text: str, kernels: tuple[str, ...], ncu: str, tmp: Path,
    cancel: CancelToken | None,
) -> NcuProfile:
    payload = tmp / "payload.json"
    payload.write_text(json.dumps({"path": str(path), "reference": request.reference, "reps": 1}))
    env = request_env(request, str(path), text)
    if request.standby:
        key, command_for = _standby_key(request, ncu, env)
        warm = standby.take(key)
        try:
            if warm is not None:
                run = standby.run(warm, payload, request.timeout, cancel)
                if warm.report.exists() and run.returncode == 0:
                    profile = _only(_read(request, path, text, ncu, warm.report, list(METRICS), [], run), kernels)
                    if profile.kernels or profile.error is None:
                        return profile
                    # none of the file's kernels among the launches it profiled (torch's took the launch
                    # count, say): the filtered run below finds them
        finally:
            if warm is not None:
                warm.discard()
            # one kept warm for the next save: the spare, or a new one
            standby.start(key, command_for, env, owner=request.standby_owner)
    target = child_command(request.python, "jobs.profile_target", str(payload))
    report = tmp / "profile.ncu-rep"
    metrics = list(METRICS)
    warnings: list[str] = []
    # a metric this ncu or GPU lacks fails the run: drop it and go again (ncu may name one a run; the roofline's
    # tensor-path counters are the likeliest to be missing on an older part)
    for _ in range(8):
        run = processes.run(
            ncu_command(ncu, kernels, metrics, report, target, request.launch_count), timeout=request.timeout, env=env,
            cancel=cancel,
        )
        if run.timed_out:
            return NcuProfile(error=f"ncu exceeded {request.timeout:.0f} s")
        unknown = [m for m in _UNKNOWN_METRIC.findall(run.output) if m in metrics]
        if run.returncode != 0 and unknown:
            metrics = [m for m in metrics if m not in unknown]
            warnings.append(f"ncu does not know {', '.join(unknown)} here: left out")
            continue
        break
    if not report.exists() and "No kernels were profiled" in run.output and _PERMISSION not in run.output:
        return NcuProfile(error=f"no kernel matched {kernel_filter(kernels)}", warnings=tuple(warnings))
    return _read(request, path, text, ncu, report, metrics, warnings, run)


def _read(
    request: ProfileRequest, path: Path, text: str, ncu: str, report: Path, metrics: list[str], warnings: list[str],
    run: Finished,
) -> NcuProfile:
    if _PERMISSION in run.output:
        return NcuProfile(error="GPU performance counters are restricted to admin users (ERR_NVGPUCTRPERM): "
                          "see https://developer.nvidia.com/ERR_NVGPUCTRPERM")
    if not report.exists():
        return NcuProfile(error=f"ncu exited {run.returncode} without a report: {_tail(run)}", warnings=tuple(warnings))
    version = _ncu_version(ncu)
    data = _read_with_ncu_report(ncu, report, metrics, request)
    if data is not None:
        kernels_out = [KernelMetrics.from_json(k) for k in data["kernels"]]
        raw_lines = [LineCounters.from_json(x) for x in data["lines"]]
        files, source = data.get("files", {}), "ncu_report"
    else:
        kernels_out, raw_lines = _read_with_csv(ncu, report, request)
        files, source = {}, "csv"
    lines = line_map.map_lines(raw_lines, str(path), text, files)
    if kernels_out and not raw_lines:
        warnings.append("ncu reported no source lines: build the kernels with -lineinfo")
    elif raw_lines and not lines:
        warnings.append("no profiled line maps to this file: was it compiled with -lineinfo?")
    return NcuProfile(tuple(kernels_out), tuple(lines), source, version, tuple(warnings))  # type: ignore[arg-type]


def _only(profile: NcuProfile, kernels: tuple[str, ...]) -> NcuProfile:
    """A standby profiled every kernel the candidate launched (torch's too): keep the file's."""
    filt = kernel_filter(kernels)
    if filt is None or profile.error:
        return profile
    wanted = re.compile(filt.removeprefix("regex:"))
    kept = tuple(k for k in profile.kernels if wanted.search(k.name) or wanted.search(k.base_name))
    lines = tuple(c for c in profile.lines if not c.kernel or wanted.search(c.kernel))
    if not kept:
        return replace(profile, kernels=(), lines=(), error=f"no kernel matched {filt}")
    return replace(profile, kernels=kept, lines=lines)


def _read_with_ncu_report(ncu: str, report: Path, metrics: list[str], request: ProfileRequest) -> dict | None:
    extras = locate.ncu_python_dir(ncu)
    if extras is None:
        return None
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [extras, os.environ.get("PYTHONPATH")]))}
    source_metrics = ",".join(f"{k}={v}" for k, v in SOURCE_METRICS.items())
    run = processes.run(
        child_command(sys.executable, "jobs.ncu_report_dump", str(report), ",".join(metrics), source_metrics),
        timeout=request.timeout, env=env,
    )
    if run.returncode != 0:
        return None
    try:
        return json.loads(run.stdout)
    except ValueError:
        return None


def _read_with_csv(ncu: str, report: Path, request: ProfileRequest) -> tuple[list[KernelMetrics], list[LineCounters]]:
    raw = processes.run([ncu, "--import", str(report), "--csv", "--page", "raw", "--print-units", "base"], timeout=request.timeout)
    lines: list[LineCounters] = []
    for view in ("cuda", "cuda,sass"):  # views differ across versions; the line rows parse the same way
        source = processes.run(
            [ncu, "--import", str(report), "--csv", "--page", "source", "--print-source", view], timeout=request.timeout
        )
        lines = csv_pages.parse_source(source.stdout)
        if lines:
            break
    return csv_pages.parse_raw(raw.stdout), lines


@functools.lru_cache(maxsize=8)
def _ncu_version(ncu: str) -> str:
    run = processes.run([ncu, "--version"], timeout=30)
    m = re.search(r"Version\s+(\S+)", run.output)
    return m.group(1) if m else ""


def _tail(run: Finished, n: int = 600) -> str:
    return " ".join(run.output.strip().split())[-n:]
