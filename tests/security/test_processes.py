"""Every child process dies with its parent, on every way out: the server's (its editor dies during a compile,
SIGTERM, SIGHUP, SIGINT, shutdown/exit and end of file with an `nvcc --version` that hangs), `cudalens check`'s
(SIGTERM, SIGKILL, Ctrl-C), and no child that exits stays a zombie. Real processes throughout; nvcc is a
stand-in script that hangs, so that a compile is in flight for as long as the test needs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.security.lsp_wire import Server, frame, server_command
from tests.security.process_tree import (
    WAIT_S,
    descendants,
    fake_nvcc,
    gone,
    recorded,
    wait_for,
    zombie,
)

KERNEL = """__global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a;
}
"""
COMPILE = {"onSave": {"compile": True}}


def _env(nvcc_dir: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{nvcc_dir}{os.pathsep}{os.environ['PATH']}"}


def _compiling(server: Server, root: Path, pids: Path, process_id: int | None = None) -> list[int]:
    """Open and save a kernel, and wait until the (hanging) nvcc and its child run: their pids."""
    server.initialize(root, COMPILE, process_id)
    kernel = root / "kernel.cu"
    kernel.write_text(KERNEL)
    server.save(server.open(kernel, "cuda"))
    wait_for(lambda: len(recorded(pids)) >= 2, "nvcc to start")
    return recorded(pids)


def _all_gone(pids: list[int], what: str) -> None:
    wait_for(lambda: all(gone(p) for p in pids), what)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signalled_server_takes_its_compile_with_it(tmp_path: Path, sig: signal.Signals):
    nvcc_dir, pids = fake_nvcc(tmp_path / "bin")
    server = Server(_env(nvcc_dir), tmp_path)
    try:
        running = _compiling(server, tmp_path, pids)
        server.proc.send_signal(sig)
        assert server.proc.wait(timeout=WAIT_S) == 128 + sig
        _all_gone(running, f"nvcc and its child to die with the server ({sig.name})")
    finally:
        server.kill()


def test_ctrl_c_during_a_compile_ends_the_server_at_once(tmp_path: Path):
    nvcc_dir, pids = fake_nvcc(tmp_path / "bin")
    server = Server(_env(nvcc_dir), tmp_path)
    try:
        running = _compiling(server, tmp_path, pids)
        server.proc.send_signal(signal.SIGINT)
        # Python's default waited for the compile's thread: here nvcc hangs for 600 s
        assert server.proc.wait(timeout=WAIT_S) == 128 + signal.SIGINT
        _all_gone(running, "nvcc to die with the server (SIGINT)")
    finally:
        server.kill()


# The "editor": starts the server on a pipe it does not own (so only its death, not end of file, can tell the
# server), says the server's pid, and exits when told to.
EDITOR = """
import os, subprocess, sys
fd = int(sys.argv[1])
server = subprocess.Popen(sys.argv[2:], stdin=fd, stdout=subprocess.DEVNULL, pass_fds=(fd,))
print(server.pid, flush=True)
sys.stdin.readline()
"""


def test_the_editor_dying_during_a_compile_takes_the_compile_along(tmp_path: Path):
    nvcc_dir, pids = fake_nvcc(tmp_path / "bin")
    read_end, write_end = os.pipe()
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(read_end), *server_command()],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(read_end,),
                              env=_env(nvcc_dir), cwd=tmp_path)
    os.close(read_end)  # the server's stdin stays open (we hold its other end): only the editor's death tells
    try:
        server_pid = int(editor.stdout.readline())
        kernel = tmp_path / "kernel.cu"
        kernel.write_text(KERNEL)
        uri = kernel.as_uri()
        for message in (
            {"id": 1, "method": "initialize", "params": {
                "processId": editor.pid, "rootUri": tmp_path.as_uri(), "capabilities": {},
                "initializationOptions": COMPILE}},
            {"method": "initialized", "params": {}},
            {"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "cuda", "version": 1, "text": KERNEL}}},
            {"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}},
        ):
            os.write(write_end, frame({"jsonrpc": "2.0", **message}))
        wait_for(lambda: len(recorded(pids)) >= 2, "nvcc to start")
        running = recorded(pids)
        editor.stdin.write(b"bye\n")
        editor.stdin.flush()
        editor.wait(timeout=WAIT_S)
        wait_for(lambda: gone(server_pid), "the server to notice its editor is gone")
        _all_gone(running, "nvcc to die with the server (its editor died)")
    finally:
        os.close(write_end)
        editor.kill()


@pytest.mark.parametrize("how", ["shutdown and exit", "end of file"])
def test_a_hanging_nvcc_version_does_not_keep_the_server_alive(tmp_path: Path, how: str):
    nvcc_dir, pids = fake_nvcc(tmp_path / "bin", hang_version=True)
    server = Server(_env(nvcc_dir), tmp_path)
    try:
        running = _compiling(server, tmp_path, pids)  # here: `nvcc --version`, asked before the compile
        if how == "shutdown and exit":
            server.request("shutdown", None)
            server.notify("exit", None)
            expected = 0
        else:
            expected = 1  # the editor vanished without a shutdown
        server.close_stdin()
        assert server.proc.wait(timeout=WAIT_S) == expected
        _all_gone(running, f"nvcc --version to die with the server ({how})")
    finally:
        server.kill()


def test_children_that_exit_are_reaped_not_left_as_zombies():
    """A warm ncu target that ends by itself (its target failed to start, say) is reaped at once, not when the
    next profile happens to look at it."""
    from cudalens.profiler.ncu import standby

    def command_for(report: Path) -> list[str]:
        return [sys.executable, "-c", "import sys; sys.exit(3)"]

    key = standby.key_for(command_for(Path("ZOMBIE")), None, owner="zombie-test")
    standby.start(key, command_for, None, owner="zombie-test")
    (short_lived,) = standby._STANDBYS[key]
    pid = short_lived.proc.pid
    wait_for(lambda: not Path(f"/proc/{pid}").exists(), f"the exited child {pid} to be reaped")
    assert not zombie(pid)
    standby.drop_owner("zombie-test")


def test_an_idle_worker_that_dies_is_reaped():
    from cudalens.worker.pool import Worker

    worker = Worker()
    worker.start()
    pid = worker.pid
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not Path(f"/proc/{pid}").exists(), "the dead worker to be reaped")
    worker.close()


# --- cudalens check ----------------------------------------------------------------------------------------

CHECKED = """__global__ void k{i}(float* x, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i * 2] = 1.0f;
}}
"""


@pytest.fixture(scope="module")
def many_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough files that a check over them with 2 processes runs for a minute or more here."""
    folder = tmp_path_factory.mktemp("many")
    for i in range(6000):
        (folder / f"f{i}.cu").write_text(CHECKED.format(i=i))
    return folder


def _start_check(folder: Path, *extra: str) -> subprocess.Popen:
    check = subprocess.Popen([sys.executable, "-m", "cudalens", "check", str(folder), "--jobs", "2", *extra],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    wait_for(lambda: len(descendants(check.pid)) >= 2, "the pool's processes to start")
    time.sleep(1.0)  # they are working on files now
    return check


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_check_killed_leaves_no_pool_process(many_files: Path, sig: signal.Signals):
    check = _start_check(many_files)
    pool = descendants(check.pid)
    check.send_signal(sig)
    check.wait(timeout=WAIT_S)
    _all_gone(pool, f"the pool's processes to die with cudalens check ({sig.name})")
    assert check.returncode == (128 + sig if sig == signal.SIGTERM else -sig)


@pytest.mark.parametrize("to", ["the process", "its terminal's group"])
def test_ctrl_c_interrupts_check(many_files: Path, to: str):
    check = _start_check(many_files)
    pool = descendants(check.pid)
    if to == "the process":  # `kill -INT`: the pool processes do not see it
        check.send_signal(signal.SIGINT)
    else:  # Ctrl-C in a terminal: the whole foreground group gets it
        os.killpg(check.pid, signal.SIGINT)
    _, err = check.communicate(timeout=WAIT_S)  # the queued files are not waited for
    assert check.returncode == 130
    # neither a traceback (ours or the pool processes') nor one "worker failed" error per file left
    assert b"Traceback" not in err and b"worker failed" not in err, err.decode()[-2000:]
    _all_gone(pool, "the pool's processes to end with Ctrl-C")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_check_killed_during_its_compiles_leaves_no_nvcc(tmp_path: Path, sig: signal.Signals):
    nvcc_dir, pids = fake_nvcc(tmp_path / "bin")
    sources = tmp_path / "src"
    sources.mkdir()
    for i in range(20):
        (sources / f"f{i}.cu").write_text(CHECKED.format(i=i))
    check = subprocess.Popen([sys.executable, "-m", "cudalens", "check", "--compile", str(sources), "--jobs", "2"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(nvcc_dir))
    wait_for(lambda: len(recorded(pids)) >= 4, "both pool processes to be compiling")
    running = recorded(pids)
    check.send_signal(sig)
    check.wait(timeout=WAIT_S)
    _all_gone(running, f"every nvcc to die with cudalens check ({sig.name})")


def test_jobs_are_capped_at_the_core_count(tmp_path: Path):
    cores = len(os.sched_getaffinity(0))
    for i in range(40):
        (tmp_path / f"f{i}.cu").write_text(CHECKED.format(i=i))
    check = subprocess.Popen([sys.executable, "-m", "cudalens", "check", str(tmp_path), "--jobs", "100000"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    most = 0
    while check.poll() is None:
        most = max(most, len(descendants(check.pid)))
        time.sleep(0.02)
    err = check.stderr.read().decode()
    assert check.returncode == 1, err
    assert f"--jobs 100000 is more than the {cores} CPU cores here; using {cores}" in err
    assert most <= cores


HANGS_WHILE_UNWINDING = """
import signal, sys, time
from cudalens.cli import main
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(sig, main._interrupted)
try:
    print("ready", flush=True)
    time.sleep(600)
finally:
    time.sleep(600)  # a cleanup that never ends: what a thread left waiting by the interrupt does to shutdown
"""


def test_an_interrupted_command_leaves_even_when_unwinding_hangs():
    from cudalens.cli.main import LEAVE_AFTER_S

    command = subprocess.Popen([sys.executable, "-c", HANGS_WHILE_UNWINDING], stdout=subprocess.PIPE)
    assert command.stdout.readline() == b"ready\n"
    command.send_signal(signal.SIGTERM)
    assert command.wait(timeout=LEAVE_AFTER_S + WAIT_S) == 128 + signal.SIGTERM
