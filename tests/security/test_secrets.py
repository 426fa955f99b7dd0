"""The Coder's key and every other secret of the user's environment never reach code that cudalens runs: not
the user's file under test (the worker), not an LLM's candidate (the optimize loop), not a profiled or sanitized
target (ncu, compute-sanitizer, a warm standby), not through the environment block or argv of any ancestor.

Each test starts the real entry point (`cudalens test`, `cudalens optimize`, `cudalens profile`, `cudalens
serve`) with secrets in its environment, and the code it runs is `leak_probe.probe`, which looks everywhere it
can and reports what it read and found."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cudalens.profiler.ncu import locate
from tests.agents.fake_openai import FakeOpenAI, reply
from tests.agents.kernelbench_cpu import FAST, START, fenced
from tests.security.leak_probe import Sighting, probe, secret_values, sightings
from tests.security.lsp_wire import WAIT_S, Server

NAMED = "TEAM_LLM"  # the variable `coder.apiKeyEnv` / `--api-key-env` names


@pytest.fixture
def secrets() -> dict[str, str]:
    return secret_values()


def _env(secrets: dict[str, str], **extra: str) -> dict[str, str]:
    return {**os.environ, **secrets, **extra}


def _cli(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cudalens", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def _spy(tmp_path: Path, secrets: dict[str, str], body: str = FAST, name: str = "spy.py") -> tuple[Path, Path]:
    report = tmp_path / f"{name}.report"
    path = tmp_path / name
    path.write_text(probe(report, list(secrets.values())) + body)
    return path, report


def _assert_clean(found: list[Sighting], ancestor: int | None, what: str) -> None:
    assert found, f"the probe never ran in {what}"
    leaks = [place for s in found for place in s.found]
    assert not leaks, f"{what}: the secrets were found at {leaks}"
    if ancestor is not None:  # the probe did read the process that held the key at start-up
        assert any(s.read_environ_of(ancestor) for s in found), f"the probe could not read /proc/{ancestor}/environ"


def _ancestor_pid(found: list[Sighting], command_word: str) -> int | None:
    """The pid among the probe's ancestors whose argv contains `command_word` (the CLI that started it)."""
    for s in found:
        for pid, part in s.read:
            if part == "cmdline" and pid != s.pid:
                try:
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if command_word.encode() in argv:
                    return pid
    return None


def test_the_users_file_under_cudalens_test_finds_no_secret(tmp_path: Path, secrets: dict[str, str]):
    spy, report = _spy(tmp_path, secrets)
    cli = subprocess.Popen([sys.executable, "-m", "cudalens", "test", str(spy), "--device", "cpu"],
                           env=_env(secrets), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = cli.communicate(timeout=300)
    assert cli.returncode == 0, err.decode()[-2000:]
    _assert_clean(sightings(report), cli.pid, "cudalens test's worker")


def test_the_users_file_under_cudalens_test_warm_finds_no_secret(tmp_path: Path, secrets: dict[str, str]):
    """The warm server outlives the command that started it: it starts from the clean environment too."""
    import signal
    import tempfile

    cache = Path(tempfile.mkdtemp(prefix="clw-", dir="/tmp"))  # a socket's path fits in 107 bytes
    spy, report = _spy(tmp_path, secrets)
    try:
        for _ in range(2):  # the first starts the server, the second only talks to it
            cli = subprocess.Popen([sys.executable, "-m", "cudalens", "test", str(spy), "--device", "cpu", "--warm"],
                                   env=_env(secrets, XDG_CACHE_HOME=str(cache)), cwd=tmp_path,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            _, err = cli.communicate(timeout=300)
            assert cli.returncode == 0 and b"no warm worker" not in err, err.decode()[-2000:]
        _assert_clean(sightings(report), None, "cudalens test --warm's worker")
    finally:
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                argv = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if b"cudalens.worker.warm" in argv and str(cache).encode() in argv:
                os.kill(int(proc.name), signal.SIGTERM)
        shutil.rmtree(cache, ignore_errors=True)


def test_an_llm_candidate_in_cudalens_optimize_finds_no_secret(tmp_path: Path, secrets: dict[str, str]):
    (tmp_path / "row_sum.py").write_text(START)
    report = tmp_path / "candidate.report"
    candidate = probe(report, list(secrets.values())) + FAST
    with FakeOpenAI([reply(fenced(candidate))]) as fake:
        cli = subprocess.Popen(
            [sys.executable, "-m", "cudalens", "optimize", "row_sum.py", "--base-url", fake.base_url,
             "--api-key-env", NAMED, "--allow-torch-ops", "--rounds", "1", "--quiet"],
            env=_env(secrets), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        _, err = cli.communicate(timeout=300)
    assert fake.requests, err.decode()[-2000:]
    # the Coder itself still has the key it was told to use
    assert fake.requests[0].headers.get("authorization") == f"Bearer {secrets[NAMED]}"
    _assert_clean(sightings(report), cli.pid, "an optimize candidate")


def _has(tool: str | None) -> bool:
    return tool is not None and Path(tool).is_file()


@pytest.mark.gpu
@pytest.mark.skipif(not _has(locate.find_ncu()), reason="Nsight Compute (ncu) is not installed here")
def test_a_target_under_ncu_finds_no_secret(tmp_path: Path, secrets: dict[str, str]):
    spy, report = _spy(tmp_path, secrets)
    result = _cli(["profile", str(spy), "--no-cache"], _env(secrets), tmp_path)
    assert sightings(report), result.stderr[-2000:]
    _assert_clean(sightings(report), None, "a target under ncu")


@pytest.mark.gpu
@pytest.mark.skipif(not _has(locate.find_sanitizer()), reason="compute-sanitizer is not installed here")
def test_a_target_under_compute_sanitizer_finds_no_secret(tmp_path: Path, secrets: dict[str, str]):
    spy, report = _spy(tmp_path, secrets)
    result = _cli(["profile", str(spy), "--no-ncu", "--sanitizer", "memcheck"], _env(secrets), tmp_path)
    assert sightings(report), result.stderr[-2000:]
    _assert_clean(sightings(report), None, "a target under compute-sanitizer")


LAUNCHER = """#!/bin/sh
# Stands in for ncu / compute-sanitizer where they are not installed: runs the target (the arguments from the
# interpreter on) in the environment cudalens gave the tool.
while [ $# -gt 0 ] && [ "$1" != "{python}" ]; do shift; done
exec "$@"
"""

# Stands in for the driver on a machine without one: `cudalens profile` asks nvidia-smi first, and says "no GPU"
# before it looks for the tool.
NVIDIA_SMI = """#!/bin/sh
echo "NVIDIA H200, 9.0, 143771, 1980, 580.00"
"""


@pytest.mark.parametrize("tool", ["ncu", "sanitizer"])
def test_a_profiled_target_finds_no_secret_on_any_machine(tmp_path: Path, secrets: dict[str, str], tool: str):
    """The same, with a launcher standing in for the tool: what cudalens hands a tool's target, checked here."""
    launcher = tmp_path / "launcher"
    launcher.write_text(LAUNCHER.format(python=sys.executable))
    launcher.chmod(0o755)
    spy, report = _spy(tmp_path, secrets)
    driver = tmp_path / "driver"
    driver.mkdir()
    (driver / "nvidia-smi").write_text(NVIDIA_SMI)
    (driver / "nvidia-smi").chmod(0o755)
    path = {"PATH": f"{driver}{os.pathsep}{os.environ.get('PATH', '')}"} if shutil.which("nvidia-smi") is None else {}
    if tool == "ncu":
        args, extra = ["profile", str(spy), "--no-cache"], {"CUDALENS_NCU": str(launcher)}
    else:
        args, extra = ["profile", str(spy), "--no-ncu", "--sanitizer", "memcheck"], {
            "CUDALENS_COMPUTE_SANITIZER": str(launcher)}
    cli = subprocess.Popen([sys.executable, "-m", "cudalens", *args], env=_env(secrets, **extra, **path), cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = cli.communicate(timeout=300)
    assert sightings(report), err.decode()[-2000:]
    _assert_clean(sightings(report), cli.pid, f"a target under {tool}")


def _saved_in_server(root: Path, secrets: dict[str, str], path: Path, report: Path, on_save: dict,
                     under: str | None = None) -> None:
    """Save `path` in a server started with the secrets, then wait for the probe (run by a process with `under`
    among its ancestors, if given) and check what it found."""
    server = Server(_env(secrets), root)
    try:
        server.initialize(root, {"onSave": on_save, "coder": {"apiKeyEnv": NAMED}})
        server.save(server.open(path, "cuda" if path.suffix == ".cu" else "python"))
        deadline = time.monotonic() + WAIT_S * 3
        while not [s for s in sightings(report) if under is None or any(under in n for n in s.names)]:
            assert server.proc.poll() is None, "the server died"
            assert time.monotonic() < deadline, f"the probe never ran {f'under {under}' if under else ''}"
            time.sleep(0.1)
        _assert_clean(sightings(report), server.pid, f"a process of the server {under or ''}")
    finally:
        server.kill()


def test_the_users_file_tested_on_save_by_the_server_finds_no_secret(tmp_path: Path, secrets: dict[str, str]):
    spy, report = _spy(tmp_path, secrets)
    _saved_in_server(tmp_path, secrets, spy, report, {"test": True, "compile": False})


@pytest.mark.gpu
@pytest.mark.skipif(not _has(locate.find_ncu()), reason="Nsight Compute (ncu) is not installed here")
def test_the_standby_started_at_initialize_finds_no_secret(tmp_path: Path, secrets: dict[str, str]):
    """With `onSave.profile` a warm ncu target starts at initialize, before any save; the first saved `.cu`
    is profiled in it (its reference, the probe, runs there)."""
    data = Path(__file__).resolve().parents[1] / "runtime" / "data"
    kernel = tmp_path / "transpose.cu"
    kernel.write_text((data / "transpose.cu").read_text())
    _, report = _spy(tmp_path, secrets, (data / "transpose_ref.py").read_text(), name="transpose_ref.py")
    _saved_in_server(tmp_path, secrets, kernel, report, {"test": True, "profile": True}, under="ncu")


def test_the_key_is_gone_from_the_clis_own_environment_block(secrets: dict[str, str]):
    """What any process of the user reads at /proc/<cli>/environ while the CLI runs a command."""
    script = ("import sys; from cudalens.cli.main import main; main(['rules']);"
              "sys.stderr.write(open('/proc/self/environ', 'rb').read().hex())")
    result = subprocess.run([sys.executable, "-c", script], env=_env(secrets), capture_output=True, text=True,
                            timeout=WAIT_S)
    block = bytes.fromhex(result.stderr.strip().splitlines()[-1])
    assert b"PATH=" + os.environ["PATH"].encode() in block  # what is not secret stays
    for name, value in secrets.items():  # TEAM_LLM too: not named by anything, but on no allow-list either
        assert value.encode() not in block, name


def test_the_clean_environment_is_built_from_an_allow_list():
    from cudalens.profiler.child_env import clean_env, hide

    hide("TEAM_LLM")
    base = {
        "PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "CUDA_VISIBLE_DEVICES": "0",
        "TORCH_EXTENSIONS_DIR": "/x", "CUDALENS_NCU": "/ncu", "LD_LIBRARY_PATH": "/lib",
        "OPENAI_API_KEY": "k", "CUDALENS_API_KEY": "k", "HF_TOKEN": "t", "TEAM_LLM": "k",
        "CUDALENS_SECRET_SAUCE": "k", "TORCH_HUB_TOKEN": "t", "AWS_SECRET_ACCESS_KEY": "k", "GITHUB_TOKEN": "t",
        "SOME_TOOL_SETTING": "v", "SSH_AUTH_SOCK": "/s", "DB_PASSWORD": "p",
    }
    env = clean_env({"PYTHONUNBUFFERED": "1"}, base=base)
    assert env == {
        "PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "CUDA_VISIBLE_DEVICES": "0",
        "TORCH_EXTENSIONS_DIR": "/x", "CUDALENS_NCU": "/ncu", "LD_LIBRARY_PATH": "/lib", "PYTHONUNBUFFERED": "1",
    }


def test_an_owners_secrets_are_replaced_not_added_to():
    from cudalens.profiler import child_env

    os.environ["CUDALENS_TEST_SHOWN_AGAIN"] = "visible"
    try:
        assert child_env.hide_only("test owner", ("CUDALENS_TEST_SHOWN_AGAIN",)) is True  # it was reaching children
        assert "CUDALENS_TEST_SHOWN_AGAIN" not in child_env.clean_env()
        assert child_env.hide_only("test owner", ("OTHER_VAR_NAME",)) is True  # given back: restart the children
        assert child_env.clean_env()["CUDALENS_TEST_SHOWN_AGAIN"] == "visible"
        assert child_env.hide_only("test owner", ("OTHER_VAR_NAME",)) is False  # nothing changed
    finally:
        child_env.hide_only("test owner", ())
        del os.environ["CUDALENS_TEST_SHOWN_AGAIN"]
