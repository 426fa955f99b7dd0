"""`cudalens test --warm` for real (worker/warm.py): two commands of one terminal session share one warm worker,
which no secret of theirs reaches; a command killed mid-job takes its job with it, not the warm worker; the end
of the session ends the server and its worker; a cache folder others may enter gets no socket."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

CANDIDATE = '''import json
import os
import time
import torch
import torch.nn as nn

with open({record!r}, "a") as f:
    f.write(json.dumps({{"pid": os.getpid(), "secret": "CUDALENS_TEST_TOKEN" in os.environ}}) + "\\n")
{extra}

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=0)

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
'''


def _file(tmp_path: Path, name: str, extra: str = "") -> Path:
    path = tmp_path / name
    path.write_text(CANDIDATE.format(record=str(tmp_path / "record.jsonl"), extra=extra))
    return path


@pytest.fixture
def cache():
    """A short cache folder: a socket's path must fit in 107 bytes, and pytest's folders are long."""
    folder = Path(tempfile.mkdtemp(prefix="clw-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(cache), "CUDALENS_TEST_TOKEN": "sk-not-for-the-worker",
            "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}


def _command(path: Path) -> list[str]:
    return [sys.executable, "-m", "cudalens", "test", str(path), "--device", "cpu", "--allow-torch-ops", "--warm",
            "--format", "json"]


def _records(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "record.jsonl").read_text().splitlines()]


def _servers(cache: Path) -> list[int]:
    """The warm servers whose socket lies under this test's cache folder."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"cudalens.worker.warm" in args and any(str(cache).encode() in a for a in args):
            found.append(int(entry.name))
    return found


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


def test_two_commands_of_a_session_share_one_warm_worker_which_dies_with_the_session(tmp_path, cache):
    first, second = _file(tmp_path, "first.py"), _file(tmp_path, "second.py", "x = 1")
    script = (f"{' '.join(_command(first))} > {tmp_path / 'out1.json'}; "
              f"{' '.join(_command(second))} > {tmp_path / 'out2.json'}; touch {tmp_path / 'done'}; sleep 300")
    # the session: a shell of its own, as a terminal's
    shell = subprocess.Popen(["sh", "-c", script], env=_env(cache), start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not (tmp_path / "done").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        outs = [json.loads((tmp_path / f"out{i}.json").read_text()) for i in (1, 2)]
        assert [o["test"]["status"] for o in outs] == ["passed", "passed"]
        records = _records(tmp_path)
        # both candidates loaded in one worker (the second reused it), and the key never reached it
        assert len({r["pid"] for r in records}) == 1 and not any(r["secret"] for r in records), records
        [server] = _servers(cache)
        warm = cache / "cudalens" / "warm"
        [sock] = warm.glob("*.sock")
        assert warm.stat().st_mode & 0o777 == 0o700 and sock.stat().st_mode & 0o777 == 0o600
    finally:
        os.killpg(shell.pid, signal.SIGKILL)  # the terminal closes
        shell.wait()
    assert _gone(server) and _gone(records[0]["pid"])  # the server and its worker, no orphan
    assert not list(warm.glob("*.sock"))


def _unshare_works() -> bool:
    try:
        return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.skipif(not _unshare_works(), reason="needs `unshare --pid` (root or user namespaces)")
def test_where_the_session_leader_is_outside_the_pid_namespace_a_shells_commands_still_share_one(tmp_path, cache):
    """A container's or CI's shell: `getsid` says 0 and there is no /proc/0. The shell that ran the commands
    anchors the server instead, and the server dies with it (CI failed here: every server left at once)."""
    first, second = _file(tmp_path, "first.py"), _file(tmp_path, "second.py", "x = 1")
    script = (f"{' '.join(_command(first))} > {tmp_path / 'out1.json'}; "
              f"{' '.join(_command(second))} > {tmp_path / 'out2.json'}")
    run = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", script], env=_env(cache),
                         capture_output=True, text=True, timeout=300)
    assert "no warm worker" not in run.stderr, run.stderr
    outs = [json.loads((tmp_path / f"out{i}.json").read_text()) for i in (1, 2)]
    assert [o["test"]["status"] for o in outs] == ["passed", "passed"]
    assert len({r["pid"] for r in _records(tmp_path)}) == 1  # the second command reused the first's worker
    assert not _servers(cache)  # the namespace's first process ended: everything in it went too


def test_a_command_killed_mid_job_kills_its_job_and_the_warm_worker_serves_the_next(tmp_path, cache):
    env = _env(cache)
    hung = subprocess.Popen(_command(_file(tmp_path, "hung.py", "time.sleep(120)")), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "record.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        [stuck] = _records(tmp_path)
        hung.kill()  # Ctrl-C's harder cousin
        hung.wait()
        assert _gone(stuck["pid"])  # the job's worker was killed with the job
        after = subprocess.run(_command(_file(tmp_path, "after.py")), env=env, capture_output=True, text=True,
                               timeout=180)
        assert json.loads(after.stdout)["test"]["status"] == "passed", after.stderr
        assert len(_servers(cache)) == 1  # the same server, with a fresh worker
    finally:
        for pid in _servers(cache):
            os.kill(pid, signal.SIGTERM)


def test_a_cache_folder_others_may_enter_gets_no_socket_and_the_test_runs_alone(tmp_path, cache):
    warm = cache / "cudalens" / "warm"
    warm.mkdir(parents=True)
    warm.chmod(0o755)
    run = subprocess.run(_command(_file(tmp_path, "plain.py")), env=_env(cache), capture_output=True, text=True,
                         timeout=180)
    assert json.loads(run.stdout)["test"]["status"] == "passed", run.stderr
    assert "cudalens test: no warm worker (" in run.stderr and "only you may enter (chmod 700)" in run.stderr
    assert not list(warm.iterdir()) and not _servers(cache)


@pytest.mark.gpu
@pytest.mark.timeout(600)
def test_on_a_gpu_the_warm_worker_times_a_cu_file_for_every_command_of_the_session(tmp_path, cache):
    """Its warm-up made the CUDA context and started CUPTI; the test job's timing (kernel_ms, the attribution)
    works in it for the session's later commands as in a worker of their own."""
    import shutil

    data = ROOT / "tests" / "runtime" / "data"
    for name in ("transpose.cu", "transpose_ref.py"):
        shutil.copy(data / name, tmp_path / name)
    command = [sys.executable, "-m", "cudalens", "test", str(tmp_path / "transpose.cu"), "--time", "--warm",
               "--format", "json"]
    script = "; ".join(f"{' '.join(command)} > {tmp_path / f'out{i}.json'} 2> {tmp_path / f'err{i}'}"
                       for i in range(3)) + f"; touch {tmp_path / 'done'}; sleep 300"
    shell = subprocess.Popen(["sh", "-c", script], env=_env(cache), start_new_session=True)
    try:
        deadline = time.monotonic() + 500
        while not (tmp_path / "done").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        for i in range(3):
            out = json.loads((tmp_path / f"out{i}.json").read_text())
            assert out["test"]["status"] == "passed" and out["timing"]["speedup"] > 0, out
            assert "no warm worker" not in (tmp_path / f"err{i}").read_text()
        [server] = _servers(cache)
    finally:
        os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()
    assert _gone(server)


def test_a_warm_server_without_a_job_leaves_after_its_idle_time(cache):
    """`--idle` (15 minutes for the CLI's): the server closes its socket and kills its worker."""
    warm = cache / "cudalens" / "warm"
    warm.mkdir(parents=True, mode=0o700)
    sock = warm / f"{os.getpid()}-idle.sock"
    server = subprocess.Popen(
        [sys.executable, "-m", "cudalens.worker.warm", "--socket", str(sock), "--python", sys.executable, "--cwd",
         str(cache), "--session", str(os.getpid()), "--idle", "2"], env=_env(cache))
    try:
        deadline = time.monotonic() + 30
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sock.exists()
        assert server.wait(timeout=30) == 0
    finally:
        server.kill()
    assert not sock.exists() and not _servers(cache)
