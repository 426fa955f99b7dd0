"""The worker survives what user code does to it: hangs, segfaults, exits, protocol garbage, cancels."""

from __future__ import annotations

import asyncio
import concurrent.futures
import subprocess
import sys
import textwrap
import time

import pytest

from cudalens.worker.child.protocol import JobRequest, Progress, ProtocolError, decode
from cudalens.worker.jobs import child_command
from cudalens.worker.pool import WorkerPool


@pytest.fixture
def pool():
    p = WorkerPool()
    yield p
    p.close()


def job(payload: dict | None = None, timeout_s: float = 30.0, id: str = "j1") -> JobRequest:
    return JobRequest(id=id, kind="echo", payload=payload or {}, timeout_s=timeout_s)


def test_echo_job_round_trip_with_progress_and_prints(pool):
    seen: list[Progress] = []
    result = pool.run(job({"x": [1, 2.5, "s"], "print": "noise on stdout", "progress": True}), seen.append)
    assert result.status == "ok", result.error
    assert result.payload["echo"]["x"] == [1, 2.5, "s"]
    assert [p.message for p in seen] == ["echoing"]
    assert pool.handshake is not None
    assert pool.handshake.python == ".".join(map(str, sys.version_info[:3]))
    assert pool.handshake.gpu  # a name or "no GPU"


def test_job_exception_is_an_error_with_traceback_and_worker_survives(pool):
    first = pool.run(job({"action": "raise", "message": "boom"}))
    assert first.status == "error"
    assert "RuntimeError: boom" in first.error and "Traceback" in first.error
    assert not first.context_broken
    again = pool.run(job())
    assert again.status == "ok"
    assert again.payload["pid"] == pool.handshake.pid  # same worker


def test_unknown_job_kind_and_non_json_result_are_errors(pool):
    unknown = pool.run(JobRequest("u", "no_such", {}, 30))
    assert unknown.status == "error" and "no job module for kind 'no_such'" in unknown.error
    bad = pool.run(job({"action": "not_json"}))
    assert bad.status == "error" and "not JSON" in bad.error


def test_timeout_kills_the_process_group_including_grandchildren(pool, tmp_path, gone):
    pid_file = tmp_path / "grandchild.pid"
    result = pool.run(job({"action": "spawn_and_hang", "pid_file": str(pid_file)}, timeout_s=3))
    assert result.status == "timeout"
    assert "ran past its timeout of 3 s" in result.error
    grandchild = int(pid_file.read_text())
    assert gone(grandchild), "the job's child process survived the timeout"
    nxt = pool.run(job())
    assert nxt.status == "ok"


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"action": "segfault"}, "killed by SIGSEGV"),
        ({"action": "sys_exit", "code": 3}, "exited with code 3"),
        ({"action": "os_exit", "code": 4}, "exited with code 4"),
    ],
)
def test_crash_becomes_a_result_and_the_next_job_gets_a_fresh_worker(pool, payload, expected, gone):
    first = pool.run(job({"x": 1}))
    old_pid = first.payload["pid"]
    crashed = pool.run(job({**payload, "print": "last words"}))
    assert crashed.status == "crash"
    assert expected in crashed.error
    assert "last words" in crashed.error  # the worker's stderr tail
    assert gone(old_pid)
    nxt = pool.run(job())
    assert nxt.status == "ok" and nxt.payload["pid"] != old_pid


def test_broken_cuda_context_retires_the_worker(pool):
    msg = "CUDA error: an illegal memory access was encountered"
    broken = pool.run(job({"action": "raise", "message": msg}))
    assert broken.status == "error" and broken.context_broken
    old_pid = pool.handshake.pid if pool.handshake else None
    nxt = pool.run(job())
    assert nxt.status == "ok" and nxt.payload["pid"] != old_pid


def test_unknown_message_kind_is_an_error_both_ways():
    with pytest.raises(ProtocolError, match="unknown message kind 'zap'"):
        decode('{"kind": "zap", "payload": {}}')
    proc = subprocess.Popen(
        child_command(sys.executable, "worker_main"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert decode(proc.stdout.readline()).__class__.__name__ == "Hello"
        proc.stdin.write(b'{"kind": "zap", "payload": {}}\n')
        proc.stdin.flush()
        reply = decode(proc.stdout.readline())
        assert type(reply).__name__ == "Failure" and "unknown message kind 'zap'" in reply.message
        assert proc.wait(timeout=30) != 0
    finally:
        proc.kill()
        proc.wait()


async def test_cancelling_the_asyncio_task_kills_the_job(tmp_path, gone):
    pool = WorkerPool()
    try:
        pid_file = tmp_path / "grandchild.pid"
        task = asyncio.create_task(
            pool.run_async(job({"action": "spawn_and_hang", "pid_file": str(pid_file)}, timeout_s=600, id="c"))
        )
        for _ in range(600):
            if pid_file.exists() and pid_file.read_text():
                break
            await asyncio.sleep(0.05)
        worker_pid = pool.handshake.pid
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert gone(worker_pid) and gone(int(pid_file.read_text()))
        progress: list[Progress] = []
        result = await pool.run_async(job({"progress": True}, id="after"), progress.append)
        await asyncio.sleep(0)  # progress is delivered through the loop
        assert result.status == "ok" and result.payload["pid"] != worker_pid
        assert [p.message for p in progress] == ["echoing"]
    finally:
        pool.close()


def test_cancel_of_a_waiting_job_skips_it(pool):
    pool.cancel("later")
    assert pool.run(job(id="later")).status == "cancelled"
    assert pool.run(job(id="other")).status == "ok"


def test_a_bad_interpreter_is_a_clear_crash_result(tmp_path):
    pool = WorkerPool(python=str(tmp_path / "no-python"))
    try:
        result = pool.run(job())
        assert result.status == "crash"
        assert "cannot start the worker" in result.error
    finally:
        pool.close()


def test_close_leaves_no_processes_behind(gone):
    pool = WorkerPool()
    pid = pool.run(job()).payload["pid"]
    pool.close()
    assert gone(pid)


def test_worker_exits_when_its_parent_dies(tmp_path, gone):
    # A parent that starts a worker and dies without running atexit (os._exit).
    script = textwrap.dedent(
        """
        import os, sys
        from cudalens.worker.pool import Worker
        w = Worker()
        w.start()
        print(w.pid, flush=True)
        os._exit(0)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    pid = int(out.stdout.strip())
    assert gone(pid), "the worker outlived its parent"


def test_worker_runs_under_an_interpreter_without_cudalens(tmp_path):
    # A bare venv: the standard library only, no cudalens, no torch.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    bare = WorkerPool(python=str(tmp_path / "env" / "bin" / "python"))
    try:
        result = bare.run(job({"x": 1}))
        assert result.status == "ok", result.error
        assert bare.handshake.torch is None and bare.handshake.torch_cuda is None
    finally:
        bare.close()


@pytest.mark.gpu
def test_handshake_on_the_gpu_machine_names_the_device(pool):
    assert pool.run(job()).status == "ok"
    hello = pool.handshake
    assert hello.gpu != "no GPU" and hello.gpu_count >= 1 and hello.driver
    assert hello.torch and hello.torch_cuda


@pytest.mark.gpu
def test_device_side_assert_breaks_the_context_and_the_next_job_gets_a_working_one(pool):
    broken = pool.run(job({"action": "cuda_device_assert"}, timeout_s=120))
    assert broken.status == "error" and broken.context_broken, broken.error
    healthy = pool.run(job({"action": "cuda_ok"}, timeout_s=120))
    assert healthy.status == "ok" and healthy.payload["sum"] == 8.0


def test_warmup_runs_on_every_fresh_worker_and_keep_warm_replaces_a_crashed_one():
    pool = WorkerPool(warmup={"modules": ["json", "no_such_module_xyz"]}, keep_warm=True)
    try:
        first = pool.run(job())
        assert first.status == "ok"
        assert pool.warmup_result.status == "ok"
        assert "json" in pool.warmup_result.payload["seconds"]
        assert "no_such_module_xyz" in pool.warmup_result.payload["missing"]
        assert pool.run(job({"action": "segfault"})).status == "crash"
        # the replacement is started in the background; the next job waits for it, warm-up included
        again = pool.run(job())
        assert again.status == "ok" and again.payload["pid"] != first.payload["pid"]
        assert pool.warmup_result.status == "ok"
    finally:
        pool.close()


async def test_cancelling_a_queued_task_does_not_wait_for_the_running_one():
    pool = WorkerPool()
    try:
        running = asyncio.create_task(pool.run_async(job({"action": "hang"}, timeout_s=600, id="a")))
        while pool._running is None:
            await asyncio.sleep(0.02)
        queued = asyncio.create_task(pool.run_async(job(id="b")))
        await asyncio.sleep(0.1)
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        assert not running.done()  # the hanging job is untouched by the other's cancel
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        assert (await pool.run_async(job(id="c"))).status == "ok"
    finally:
        pool.close()


def test_a_job_reading_stdin_gets_nothing_and_the_protocol_survives(pool):
    result = pool.run(job({"action": "read_stdin"}))
    assert result.status == "ok" and result.payload == {"stdin": "", "child": "0"}
    assert pool.run(job(id="next")).status == "ok"


def test_jobs_run_in_the_pool_working_folder(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    p = WorkerPool(cwd=scratch)
    try:
        result = p.run(job({"action": "cwd"}))
    finally:
        p.close()
    assert result.status == "ok", result.error
    assert result.payload["cwd"] == str(scratch)


@pytest.mark.gpu
@pytest.mark.timeout(600)
def test_the_warm_up_starts_the_fast_builds_header_and_a_first_build_waits_for_no_second_one(tmp_path, monkeypatch):
    """The server's warm-up (worker_client.GPU_WARMUP) starts precompiling the header in the worker; it appears
    whole in the cache while the worker waits for its first job."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device here")
    from cudalens.worker.pool import GPU_WARMUP as WARMUP

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    pool = WorkerPool(warmup=WARMUP)
    try:
        assert pool.run(job()).status == "ok"
        assert pool.warmup_result.payload["precompiling"] is True
        assert pool.warmup_result.payload["profiling"] is True  # CUPTI starts, in a thread, for the first timing
        deadline = time.monotonic() + 300
        while not list(tmp_path.glob("cudalens/fast_builds/*/pch/*/cudalens_torch_lite.h.gch")):
            assert time.monotonic() < deadline and not list(tmp_path.glob("cudalens/fast_builds/*/pch/*/failed.txt"))
            time.sleep(1)
    finally:
        pool.close()


def test_a_build_runs_beside_the_warm_ups_threads_and_every_other_job_waits_for_them(tmp_path):
    """The warm-up's profiler session runs in a thread (jobs_lib/background.py): the build of a file that just
    opened starts beside it, a job that may launch work on the GPU starts only after it, and says how long it
    waited."""
    head = "import time\nfrom ..lib import background\n"  # a folder's jobs import the child's files as its own do
    (tmp_path / "warmup_job.py").write_text(head + textwrap.dedent("""
        BESIDE_WARM_UP = True
        def run(payload):
            background.start("slow", lambda: time.sleep(2))
            return {}
    """))
    for kind, beside in (("beside", True), ("after", False)):
        (tmp_path / f"{kind}_job.py").write_text(head + textwrap.dedent(f"""
            BESIDE_WARM_UP = {beside}
            def run(payload):
                return {{"slow_done": "slow" in background.seconds, "waited": background.last_wait_s}}
        """))
    pool = WorkerPool(jobs_dir=tmp_path, warmup={})
    try:
        beside = pool.run(JobRequest("b", "beside", {}, 30))
        after = pool.run(JobRequest("a", "after", {}, 30))
    finally:
        pool.close()
    assert beside.status == "ok" and after.status == "ok", (beside.error, after.error)
    assert beside.payload["slow_done"] is False
    assert after.payload["slow_done"] is True and after.payload["waited"] > 1.0


def test_the_build_job_builds_only_a_cu_file_and_runs_nothing_of_it(pool, tmp_path):
    """The job the server runs when a .cu file opens: a .py file is not built ahead (its builds run its code), a
    .cu file without a torch host function has nothing to bind."""
    script = tmp_path / "model.py"
    script.write_text("raise SystemExit('this must not run')\n")
    skipped = pool.run(JobRequest(id="b1", kind="build", payload={"path": str(script)}, timeout_s=60))
    assert skipped.status == "ok" and "a .py file's builds run its code" in skipped.payload["skipped"]
    kernel = tmp_path / "k.cu"
    kernel.write_text("__global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n")
    none = pool.run(JobRequest(id="b2", kind="build", payload={"path": str(kernel)}, timeout_s=60))
    assert none.status == "ok" and "has no torch host function" in none.payload["skipped"]


def test_a_job_submitted_while_the_worker_warms_up_is_prepared_beside_the_warm_up(tmp_path):
    """protocol.Prepare: a job asked for while the worker starts and warms up (torch's import) has its module's
    `prepare(payload)` run at once, beside the warm-up, and then runs as usual; a job asked for while the warm
    worker runs another is not prepared (its compilers would share the CPU with that job's timings). A kind with
    no `prepare`, or none at all, is only a hint: the worker goes on."""
    (tmp_path / "warmup_job.py").write_text(textwrap.dedent("""
        import time
        def run(payload):
            began = time.time()
            time.sleep(2)
            return {"began": began, "ended": time.time()}
    """))
    (tmp_path / "slow_job.py").write_text(textwrap.dedent("""
        import time
        PREPARED = []
        def prepare(payload):
            PREPARED.append((payload["n"], time.time()))
        def run(payload):
            time.sleep(payload.get("sleep", 0))
            return {"prepared": PREPARED}
    """))
    pool = WorkerPool(jobs_dir=tmp_path, warmup={})
    try:
        pool.prestart()
        time.sleep(0.5)  # the worker is up and warming up
        pool._prepare_while_warming(JobRequest("nothing", "no_such_kind", {}, 30))  # a hint the worker ignores
        first = pool.run(JobRequest("a", "slow", {"n": 1}, 30))
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            busy = ex.submit(pool.run, JobRequest("b", "slow", {"n": 2, "sleep": 1}, 30))
            time.sleep(0.3)  # "b" runs on the warm worker; "c" waits for it, and is not prepared meanwhile
            last = ex.submit(pool.run, JobRequest("c", "slow", {"n": 3}, 30)).result()
            busy.result()
    finally:
        pool.close()
    assert first.status == "ok" and last.status == "ok", (first.error, last.error)
    warm = pool.warmup_result.payload
    prepared = dict(first.payload["prepared"])
    assert list(prepared) == [1] and warm["began"] <= prepared[1] < warm["ended"]
    assert dict(last.payload["prepared"]) == prepared  # the same worker, and no prepare of "b" or "c"
