"""`--ray`: evaluations in Ray actors on a real local Ray cluster — a head and a second node on loopback, CPU-only,
CPU-torch candidates — started here with `ray start`, no mock of Ray."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.gpu_specs import DEFAULT_GPU
from cudalens.agents.optimize_loop import LoopSettings
from cudalens.agents.optimize_run import OptimizeRun, OptimizeSpec
from cudalens.agents.profiler_evaluator import ProfilerEvaluatorSettings
from cudalens.agents.search.ray_backend import RaySettings, connect
from cudalens.worker.child.anti_cheat import AntiCheatPolicy
from tests.agents.fake_openai import FakeOpenAI, Scripted, reply
from tests.agents.kernelbench_cpu import START, fenced, model_new

RAY = str(Path(sys.executable).with_name("ray"))


def _tree_of(folder: str) -> list[int]:
    """The processes of this cluster: those naming its temp folder, and their descendants (Ray's agents rename
    themselves), gathered before anything is killed."""
    parents: dict[int, int] = {}
    roots = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if folder.encode() in cmdline:
            roots.append(int(entry.name))
    found, frontier = set(roots), list(roots)
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in found:
                found.add(child)
                frontier.append(child)
    return sorted(found)


@pytest.fixture(scope="module")
def cluster():
    folder = tempfile.mkdtemp(prefix="clray", dir="/tmp")  # short: Ray's socket paths have a length limit
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--num-gpus=0", "--disable-usage-stats"]
    port = "6393"
    try:
        subprocess.run([RAY, "start", "--head", f"--port={port}", "--include-dashboard=false",
                        f"--temp-dir={folder}", *common], env=env, check=True, capture_output=True, timeout=120)
        subprocess.run([RAY, "start", f"--address=127.0.0.1:{port}", *common], env=env, check=True,
                       capture_output=True, timeout=120)
        yield f"127.0.0.1:{port}"
    finally:
        import ray

        ray.shutdown()
        pids = _tree_of(folder)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            time.sleep(2)


def test_evaluations_run_in_ray_actors_on_both_nodes(cluster: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CUDALENS_RAY_KEY", "sk-ray-SECRET-0000")
    ray_settings = RaySettings(cluster, gpus_per_task=0, cpus_per_task=1, node_ip="127.0.0.1")
    assert connect(ray_settings) == 2

    count = itertools.count(1)

    def respond(body: dict) -> Scripted:  # every candidate different, so that two tasks run at once
        return reply(fenced(model_new(f"return x.sum(dim=1) + {next(count)} * 0.0")))

    with FakeOpenAI(responder=respond) as fake:
        spec = OptimizeSpec(
            str(tmp_path / "row_sum.py"), START, "row_sum",
            CoderSettings(base_url=fake.base_url, model="fake", api_key_env="CUDALENS_RAY_KEY"),
            LoopSettings(rounds=3, search="beam", width=2, patience=10,
                         anti_cheat=AntiCheatPolicy(require_custom_kernel=False, allow_torch_compute=True)),
            ProfilerEvaluatorSettings(device="cpu", timeout_s=120, budget_ms=30, profile=False),
            gpu=DEFAULT_GPU, runs_dir=tmp_path / "runs", ray=ray_settings,
        )
        run = OptimizeRun(spec)
        try:
            result = run.run()
        finally:
            run.close()
    assert run.devices == ["ray0", "ray1"]
    evaluated = [n for n in result.rounds if n.evaluation is not None and n.duplicate_of is None]
    nodes = {note for n in evaluated for note in n.evaluation.notes if note.startswith("ray node ")}
    assert len(nodes) == 2  # the tasks ran on the head and on the second node
    assert len(evaluated) == 4 and result.stop_reason == "rounds" and result.best_source is not None


def test_a_cancel_reaches_the_candidate_running_in_a_ray_actor(cluster: str) -> None:
    """A slot is an actor on a node, kept for the run: a cancel from here kills the candidate it is running (a
    hang), the actor lives on and evaluates the next candidate, and close ends it."""
    import threading

    from cudalens.agents.search.ray_backend import RayEvaluator

    ray_settings = RaySettings(cluster, gpus_per_task=0, cpus_per_task=1, node_ip="127.0.0.1")
    connect(ray_settings)
    settings = ProfilerEvaluatorSettings(device="cpu", timeout_s=600, budget_ms=30, profile=False)
    evaluator = RayEvaluator(START, settings, ray_settings)
    try:
        assert evaluator.evaluate(START, "test").correct  # the actor is up, torch imported in its worker
        done: list = []
        hang = threading.Thread(target=lambda: done.append(evaluator.evaluate(
            model_new("import time\ntime.sleep(3600)\nreturn x.sum(dim=1)"), "test")))
        hang.start()
        time.sleep(2)
        deadline = time.monotonic() + 120
        while hang.is_alive() and time.monotonic() < deadline:  # pressed again until it lands, as the loop does
            evaluator.cancel()
            hang.join(timeout=0.5)
        # killed by the cancel, not by the call's own limit (20× the reference's, floor 10 s: a "timeout")
        assert not hang.is_alive() and done and done[0].correctness.status == "crashed", done
        assert evaluator.evaluate(START, "test").correct  # the same actor, a new worker
    finally:
        evaluator.close()


def test_a_candidate_is_built_ahead_on_every_node(cluster: str) -> None:
    """Whichever node's actor gets a candidate finds it built there: the build ahead is a task on each node
    (asking for no CPU: the actors hold them), not on the GPU an actor holds."""
    from cudalens.agents.search.ray_backend import RayEvaluator, build_on_every_node

    ray_settings = RaySettings(cluster, gpus_per_task=0, cpus_per_task=1, node_ip="127.0.0.1")
    connect(ray_settings)
    settings = ProfilerEvaluatorSettings(device="cpu", timeout_s=300, budget_ms=30, profile=False)
    holding = RayEvaluator(START, settings, ray_settings)
    try:
        assert holding.evaluate(START, "test").correct  # an actor holds one node's only CPU
        built = build_on_every_node(START, ray_settings, timeout=300)
    finally:
        holding.close()
    assert len({node for node, _ in built}) == 2 and all(ok for _, ok in built), built


def test_a_cancel_stops_the_builds_ahead_on_the_nodes(cluster: str) -> None:
    import threading

    from cudalens.agents.search.ray_backend import build_on_every_node
    from cudalens.profiler.processes import Cancelled, CancelToken

    ray_settings = RaySettings(cluster, gpus_per_task=0, cpus_per_task=1, node_ip="127.0.0.1")
    connect(ray_settings)
    slow = "import time\ntime.sleep(120)\n" + START  # its module takes two minutes to load
    cancel, raised = CancelToken(), []

    def build() -> None:
        try:
            build_on_every_node(slow, ray_settings, timeout=300, cancel=cancel)
        except Cancelled:
            raised.append(True)

    branch = threading.Thread(target=build)
    branch.start()
    time.sleep(3)
    cancel.cancel()
    branch.join(timeout=60)
    assert not branch.is_alive() and raised == [True]


def test_a_cancel_lets_go_of_an_actor_the_cluster_cannot_place(cluster: str) -> None:
    """An actor that asks for more than any node has waits to be placed; a cancel still ends the evaluation
    waiting on it (the run stops), and close ends the actor."""
    import threading

    from cudalens.agents.search.ray_backend import RayEvaluator

    connect(RaySettings(cluster, gpus_per_task=0, cpus_per_task=1, node_ip="127.0.0.1"))
    too_big = RaySettings(cluster, gpus_per_task=0, cpus_per_task=64, node_ip="127.0.0.1")
    settings = ProfilerEvaluatorSettings(device="cpu", timeout_s=300, budget_ms=30, profile=False)
    evaluator = RayEvaluator(START, settings, too_big)
    out: list = []
    waiting = threading.Thread(target=lambda: out.append(evaluator.evaluate(START, "test")))
    try:
        waiting.start()
        time.sleep(2)
        evaluator.cancel()
        waiting.join(timeout=60)
    finally:
        evaluator.close()
    assert not waiting.is_alive() and out and "cancelled before the Ray actor began" in out[0].correctness.message
