"""Where two folders exchange a value, the two sides agree: the analyzer's features are the ones the Judge reads,
the metrics the Judge reads are the ones the profiler requests, and every code shown is in the registry."""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from pathlib import Path

from cudalens import PARTS
from cudalens.agents.evaluation import CorrectnessOutcome, ProfileMetrics
from cudalens.agents.gpu_specs import DEFAULT_GPU
from cudalens.agents.judge import JudgeInput, judge
from cudalens.agents.judge.metrics import Derived, derive
from cudalens.agents.judge.roofline import roofline
from cudalens.analysis.api import analyze_text
from cudalens.analysis.codes import REGISTRY, rule_class
from cudalens.analysis.features import KernelFeatures
from cudalens.profiler.ncu import metrics as ncu_metrics
from cudalens.profiler.ncu.metrics import METRICS

ROOT = Path(__file__).resolve().parents[2]
NCU_NAME = re.compile(r"^[a-z0-9]+__[a-z0-9_]+(\.[a-z0-9_]+)*$")
READERS = ("agents", "server", "cli")


def _sources(*folders: str):
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path, ast.parse(path.read_text(encoding="utf-8"))


def test_no_reader_spells_an_ncu_metric_name_itself() -> None:
    """Readers take names from profiler/ncu/metrics.py; a literal is a name the request may not contain."""
    spelled = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value}"
        for path, tree in _sources(*READERS)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and NCU_NAME.match(node.value)
    ]
    assert spelled == []


def _names_in(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if NCU_NAME.match(value) else []
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in (*_names_in(k), *_names_in(v))]
    if isinstance(value, (tuple, list)):
        return [n for v in value for n in _names_in(v)]
    return []


def test_every_metric_a_reader_imports_is_requested() -> None:
    imported = set()
    for _, tree in _sources(*READERS):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "cudalens.profiler.ncu.metrics":
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "M":
                imported.add(node.attr)  # `from cudalens.profiler.ncu import metrics as M`
    imported &= set(vars(ncu_metrics))
    assert imported, "the Judge reads its metric names from profiler/ncu/metrics.py"
    missing = {name: n for name in imported for n in _names_in(getattr(ncu_metrics, name)) if n not in METRICS}
    assert missing == {}


def test_a_profile_of_exactly_the_request_fills_every_derived_quantity() -> None:
    """What ncu returns for the request is enough for every quantity the Judge derives (FLOPs included: the
    arithmetic intensity and the roofline are measured, never None on a real run)."""
    profile = ProfileMetrics.of("k", dict.fromkeys(METRICS, 2.0))
    derived = derive(profile)
    empty = [f.name for f in fields(Derived) if getattr(derived, f.name) is None]
    assert empty == []
    r = roofline(profile, DEFAULT_GPU)
    assert r is not None and set(r.point.flops) == {"fp32", "fp16", "tensor"} and r.point.intensity


KERNELS = """
__global__ void transpose(const float* in, float* out, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    out[x * n + y] = in[y * n + x];
}
__global__ void conflicted(float* out) {
    __shared__ float tile[32][32];
    tile[threadIdx.x][0] = out[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x][0];
}
__global__ void count(int* total, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.f) atomicAdd(total, 1);
}
void launch(const float* in, float* out, int* total, int n) {
    transpose<<<dim3(n / 32, n / 32), dim3(32, 32)>>>(in, out, n);
    conflicted<<<1024, 32>>>(out);
    count<<<n / 256, 256>>>(total, in, n);
}
"""


def test_the_analyzer_fills_the_features_the_judge_predicts_from() -> None:
    report = analyze_text("k.cu", KERNELS)
    expected = {"transpose": "coalesce-global-access", "conflicted": "pad-shared-memory", "count": "use-warp-shuffles"}
    got = {}
    for info in report.kernels:
        assert isinstance(info.features, KernelFeatures)
        own = tuple(f for f in report.findings if f.kernel == info.name)
        got[info.name] = judge(JudgeInput(info.name, own, info)).method
    assert got == expected


def test_every_feature_the_readers_name_is_one_the_analyzer_produces() -> None:
    known = {f.name for f in fields(KernelFeatures)} | {n for n in dir(KernelFeatures) if not n.startswith("_")}
    readers = [(p, t) for p, t in _sources(*READERS) if "KernelInfo" in p.read_text(encoding="utf-8")]
    named = {
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.attr}"
        for path, tree in readers
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, (ast.Name, ast.Attribute))
        and (node.value.id if isinstance(node.value, ast.Name) else node.value.attr) == "features"
        and node.attr not in known
    }
    assert named == set()


def test_a_measured_verdict_on_a_correct_kernel_is_from_requested_metrics_only() -> None:
    v = judge(JudgeInput("k", correctness=CorrectnessOutcome("passed", 5, 5),
                         metrics=ProfileMetrics.of("k", dict.fromkeys(METRICS, 50.0))))
    assert v.status == "measured"
    assert all(e.metric in METRICS or not NCU_NAME.match(e.metric) for e in v.evidence)


# Loaded by path in the worker, which imports nothing of cudalens: their codes are literals, checked below.
WORKER_SIDE = ("worker/child/anti_cheat.py", "worker/child/jobs/", "worker/child/lib/")


def test_codes_outside_analysis_come_from_the_registry() -> None:
    """profiler/ and agents/ produce CL8xx/CL9xx findings through the rules' classes (`RegisterSpills.code`); the
    worker's literals are codes of the registry's run-time rules; every code they read is a registry code."""
    literal, worker, read = [], set(), set()
    for path, tree in _sources("profiler", "worker", "model", "agents"):
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"CL\d{3}", node.value):
                read.add(node.value)
                if not node.value.startswith(("CL8", "CL9")):
                    continue
                if where.startswith(WORKER_SIDE):
                    worker.add(node.value)
                else:
                    literal.append(f"{where}:{node.lineno}: {node.value}")
    assert literal == []
    assert worker and {rule_class(code).source for code in worker} == {"runtime"}
    assert read - set(REGISTRY) == set()


OURS = PARTS


def test_setup_maps_the_packages_parts() -> None:
    # setup.py runs before cudalens is importable, so it keeps its own tuple: the same as the package's
    tree = ast.parse((Path(__file__).resolve().parents[2] / "setup.py").read_text())
    declared = [node.value for node in tree.body if isinstance(node, ast.Assign)
                and any(isinstance(target, ast.Name) and target.id == "PARTS" for target in node.targets)]
    assert [ast.literal_eval(value) for value in declared] == [PARTS]


def _class_homes() -> dict[str, list[str]]:
    homes: dict[str, list[str]] = {}
    for path, tree in _sources(*OURS):
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                homes.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    return homes


def test_a_value_crossing_folders_has_one_definition() -> None:
    """Measurement and KernelResources are the profiler's: agents/ import them rather than mirror them."""
    homes = _class_homes()
    assert homes["Measurement"] == ["worker/child/results.py"]
    assert homes["KernelResources"] == ["profiler/ptxas.py"]


def test_no_class_name_is_defined_twice() -> None:
    """A second definition of a name is a second copy of a concept (and of its fields, which drift), or two
    concepts under one name (a reader cannot tell which one an import means): either way, one must go."""
    twice = {name: where for name, where in _class_homes().items() if len(where) > 1}
    assert twice == {}
