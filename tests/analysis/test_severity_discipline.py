"""Severity is a claim of proof (DESIGN.md): every static rule goes through the one mechanism that demotes a
finding resting on an assumption (analysis/assumptions.py). For each rule a kernel that triggers it, launched
with constants: proven. The same kernel as a template that nothing instantiates: every rule that depends on
template arguments reports it as info, naming the assumption in its message and in `evidence["assumed"]`;
rules that read only what is written keep their severity. Without any launch, a finding is info naming the
assumed block, or stays proven and says that it held for every block shape tried."""

from __future__ import annotations

import re
from functools import partial

import pytest

from cudalens.analysis.api import analyze_text
from cudalens.analysis.assumptions import NO_FACTS, Fact
from cudalens.analysis.codes import REGISTRY, rule_class, static_rules
from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule

# code -> (kernel `k` that triggers it, the host code that launches it with constants)
CASES: dict[str, tuple[str, str]] = {
    "CL002": ("__global__ void k(float* out) { out[threadIdx.x] = " + "(" * 300 + "1.0f" + ")" * 300 + "; }",
              "k<<<1, 256>>>(b);"),
    "CL101": ("__global__ void k(const float* in, float* out) { out[threadIdx.x * 32] = in[threadIdx.x]; }",
              "k<<<64, 256>>>(a, b);"),
    "CL102": ("struct P { float x, y, z, w; };\n"
              "__global__ void k(const P* p, float* o) { int i = blockIdx.x * blockDim.x + threadIdx.x; "
              "o[i] = p[i].x; }", "k<<<64, 256>>>((const P*)a, b);"),
    "CL103": ("__global__ void k(const float* in, float* out, int n) {\n"
              "  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n"
              "  if (x < n && y < n) out[x * n + y] = in[y * n + x]; }", "k<<<dim3(32, 32), dim3(32, 8)>>>(a, b, 1024);"),
    "CL104": ("__global__ void k(const float* in, const int* idx, float* out) { out[threadIdx.x] = in[idx[threadIdx.x]]; }",
              "k<<<1, 256>>>(a, (const int*)b, b);"),
    "CL201": ("__global__ void k(float* out) {\n  float v = out[threadIdx.x];\n"
              "  if (threadIdx.x % 2) { for (int r = 0; r < 64; ++r) v = v * 0.999f + 1.0f; out[threadIdx.x + 256] = v; }\n"
              "  out[threadIdx.x] = v; }", "k<<<1, 256>>>(b);"),
    "CL202": ("__global__ void k(const float* in, float* out) { float acc = 0.0f;\n"
              "  for (int j = 0; j <= threadIdx.x; ++j) acc += in[j];\n  out[threadIdx.x] = acc; }",
              "k<<<1, 256>>>(a, b);"),
    "CL203": ("__global__ void k(const float* in, float* out) { float v = in[threadIdx.x];\n"
              "  if (v > 0.0f) { v = v * in[(int)v & 255]; v = v + 1.0f; v = v * v; v = v - 3.0f; v = v / 7.0f; out[256] = v; }\n"
              "  out[threadIdx.x] = v; }", "k<<<1, 256>>>(a, b);"),
    "CL204": ("__global__ void k(const float* in, float* out) { __shared__ float s[256];\n"
              "  s[threadIdx.x] = in[threadIdx.x];\n  __syncthreads();\n"
              "  if (threadIdx.x == 0) { float t = 0.0f; for (int i = 0; i < blockDim.x; ++i) t += s[i]; out[0] = t; }\n}",
              "k<<<1, 256>>>(a, b);"),
    "CL301": ("__global__ void k(const float* in, float* out) { __shared__ float t[32][32];\n"
              "  for (int r = 0; r < 32; ++r) t[r][threadIdx.x] = in[r * 32 + threadIdx.x];\n  __syncthreads();\n"
              "  float s = 0.0f; for (int r = 0; r < 32; ++r) s += t[threadIdx.x][r];\n  out[threadIdx.x] = s; }",
              "k<<<1, 32>>>(a, b);"),
    "CL302": ("__global__ void k(float* out) { __shared__ float s[256];\n  s[threadIdx.x] = out[threadIdx.x];\n"
              "  if (threadIdx.x < 128) { __syncthreads(); }\n  __syncthreads();\n"
              "  out[threadIdx.x] = s[255 - threadIdx.x]; }", "k<<<1, 256>>>(b);"),
    "CL303": ("__global__ void k(const float* in, float* out) { __shared__ float s[256];\n"
              "  s[threadIdx.x] = in[threadIdx.x];\n  out[threadIdx.x] = s[(threadIdx.x + 1) % 256]; }",
              "k<<<1, 256>>>(a, b);"),
    "CL401": ("__launch_bounds__(100) __global__ void k(float* out) { out[threadIdx.x] = 1.0f; }",
              "k<<<1, 100>>>(b);"),
    "CL402": ("__launch_bounds__(2048) __global__ void k(float* out) { out[threadIdx.x] = 1.0f; }",
              "k<<<1, 2048>>>(b);"),
    "CL403": ("__global__ void k(float* out) { __shared__ float big[13000];\n  big[threadIdx.x] = 1.0f;\n"
              "  __syncthreads();\n  out[threadIdx.x] = big[threadIdx.x]; }", "k<<<1, 256>>>(b);"),
    "CL404": ("__global__ void k(float* out) { extern __shared__ float dyn[];\n  dyn[threadIdx.x] = 1.0f;\n"
              "  __syncthreads();\n  out[threadIdx.x] = dyn[threadIdx.x]; }", "k<<<1, 256, 65536>>>(b);"),
    "CL405": ("__global__ void k(float* out) { float local[512];\n  for (int i = 0; i < 512; ++i) local[i] = i;\n"
              "  out[threadIdx.x] = local[threadIdx.x % 512]; }", "k<<<1, 256>>>(b);"),
    "CL501": ("__global__ void k(float* out) { out[threadIdx.x] = out[threadIdx.x] * 0.1; }", "k<<<1, 256>>>(b);"),
    "CL502": ("__global__ void k(float* out) { out[threadIdx.x] = pow(out[threadIdx.x], 3); }", "k<<<1, 256>>>(b);"),
    "CL503": ("__global__ void k(float* out, int n, int m) {\n  for (int i = 0; i < n; ++i) out[i] += i % m; }",
              "k<<<1, 256>>>(b, 16, 3);"),
    "CL601": ("__global__ void k(float* out) { out[threadIdx.x] = 1.0f; }",
              "for (int i = 0; i < 10; ++i) { k<<<1, 256>>>(b); cudaDeviceSynchronize(); }"),
    "CL602": ("__global__ void k(float* out) { out[threadIdx.x] = 1.0f; }", "k<<<1, 256>>>(b);"),
    "CL701": ("__global__ void k(const float* in, float* total) { atomicAdd(&total[0], in[threadIdx.x]); }",
              "k<<<64, 256>>>(a, b);"),
}
HOST = "void host(float* a, float* b) {{\n  {}\n}}\n"


def _findings(source: str, code: str):
    report = analyze_text("k.cu", source, AnalysisConfig(min_severity="hint"))
    assert not report.errors, report.errors
    return [f for f in report.findings if f.code == code]


def _template(kernel: str) -> str:
    """The kernel as a template of an integer that nothing instantiates."""
    at = min(i for i in (kernel.find("__launch_bounds__"), kernel.find("__global__")) if i >= 0)
    return kernel[:at] + "template <int UNUSED>\n" + kernel[at:]


def _declared(rule: type[Rule]) -> bool:
    return any("depends_on" in vars(c) for c in rule.__mro__ if c is not Rule and issubclass(c, Rule))


def test_every_static_rule_states_what_it_depends_on_and_has_a_case() -> None:
    static = {type(r).code for r in static_rules()}
    assert static <= set(REGISTRY)
    assert not [c for c in static if not _declared(rule_class(c))], "a static rule without depends_on"
    # CL103 is CL101's subclass: one case for each code the analyzer reports
    assert static - set(CASES) == set(), f"no case for {sorted(static - set(CASES))}"


@pytest.mark.parametrize("code", sorted(CASES))
def test_a_constant_launch_makes_it_proven_and_an_assumption_makes_it_info(code: str) -> None:
    kernel, launch = CASES[code]
    rule = rule_class(code)
    launched = _findings(kernel + "\n" + HOST.format(launch), code)
    assert launched, f"{code} does not fire on its case"
    assert all("assuming" not in f.message and "assumed" not in f.evidence_dict() for f in launched)
    assert max(f.severity.rank for f in launched) == rule.default_severity.rank or code in ("CL402", "CL502")

    templated = _findings(_template(kernel) + "\n" + HOST.format(launch.replace("k<<<", "k<1><<<")), code)
    assert {f.severity for f in templated} == {f.severity for f in launched}, "an instantiation is a fact"
    unfixed = _findings(_template(kernel), code)
    if Fact.TEMPLATE not in rule.depends_on:
        assert all("assuming" not in f.message for f in unfixed)
        return
    assert unfixed, f"{code} does not fire on its template case"
    for f in unfixed:
        assert f.severity.rank <= Severity.INFO.rank, f.message
        assert "assuming UNUSED = 32: no instantiation of `k` found" in f.message, f.message
        assert f.evidence_dict()["assumed"]["UNUSED"] == 32


@pytest.mark.parametrize("code", sorted(c for c in CASES if rule_class(c).depends_on == NO_FACTS))
def test_rules_that_read_only_the_text_keep_their_severity_without_a_launch(code: str) -> None:
    kernel, launch = CASES[code]
    launched = _findings(kernel + "\n" + HOST.format(launch), code)
    alone = _findings(kernel, code)
    if code in ("CL401", "CL402", "CL404", "CL601", "CL602"):
        return  # these read the launch sites themselves: without one there is nothing to report
    assert [(f.line, f.severity, f.message) for f in alone] == [(f.line, f.severity, f.message) for f in launched]


@pytest.mark.parametrize("code", sorted(c for c in CASES if Fact.BLOCK in rule_class(c).depends_on))
def test_without_a_launch_a_finding_names_the_assumed_block_or_holds_for_every_block_tried(code: str) -> None:
    kernel, _ = CASES[code]
    for f in _findings(kernel, code):
        evidence = f.evidence_dict()
        if f.severity.rank > Severity.INFO.rank:
            assert re.search(r"no launch of `k` found; it holds alike for blocks of \S+ and \S+\)$", f.message)
            assert "holds_for_blocks" in evidence and "assumed" not in evidence
        else:
            assert "assuming" in f.message and "no launch of `k` found" in f.message, f.message
            assert "assumed" in evidence


def test_a_threshold_on_the_block_is_info_without_a_launch_and_proven_with_one() -> None:
    kernel, launch = CASES["CL302"]
    [alone] = _findings(kernel, "CL302")
    assert alone.severity == Severity.INFO
    assert alone.message.endswith("(assuming a 256-thread block: no launch of `k` found)")
    assert alone.evidence_dict()["assumed"] == {"block": "256×1×1"}
    [launched] = _findings(kernel + "\n" + HOST.format(launch), "CL302")
    assert launched.severity == Severity.ERROR and launched.evidence_dict()["block"] == "256×1×1"
    assert [r.message for r in launched.related][-1] == "`k` is launched here with block 256×1×1"


def test_sizes_no_launch_fixes_are_named_where_the_conclusion_depends_on_them() -> None:
    source = ("__global__ void k(float* out, int n) { if (threadIdx.x < n) { float v = out[threadIdx.x];\n"
              "  v = v * 2.0f; v = v + 1.0f; v = v * v; out[threadIdx.x] = v; }\n"
              "  else { float w = out[threadIdx.x + 1]; w = w * 3.0f; w = w - 1.0f; out[threadIdx.x] = w; } }\n")
    [f] = _findings(source + HOST.format("k<<<1, 256>>>(b, m);").replace("float* b)", "float* b, int m)"),
                    "CL201") or [None]
    assert f is None or ("assuming n = 4096" in f.message and f.severity == Severity.INFO)
    [proven] = _findings(source + HOST.format("k<<<1, 256>>>(b, 100);"), "CL201")
    assert proven.severity == Severity.WARNING and "assuming" not in proven.message
    assert proven.message.startswith("Divergent branch: 4 of 32 lanes")


def test_every_rule_that_judges_runs_says_which_figures_its_message_states() -> None:
    """A conclusion that held in every run proves its figures only when the runs found the same ones (and none
    follows a size an assumed block gives): each rule that passes `holds` passes `stated` too, by construction,
    so no rule can state a tried value's figure as proof (an empty `stated` says its message states none)."""
    import ast
    from pathlib import Path

    import cudalens.analysis.rules as rules_package

    missing = []
    for path in sorted(Path(rules_package.__file__).parent.glob("*.py")):
        for call in ast.walk(ast.parse(path.read_text())):
            if isinstance(call, ast.Call) and {"holds"} <= {k.arg for k in call.keywords} \
                    and "stated" not in {k.arg for k in call.keywords}:
                missing.append(f"{path.name}:{call.lineno}")
    assert not missing, f"findings judged by their runs without the figures they state: {missing}"


def test_figures_that_differ_between_runs_or_follow_an_assumed_block_are_info() -> None:
    from pathlib import Path

    path = Path(__file__).parent / "fixtures" / "CL3_tied_figures.cu"
    findings = {f.kernel: f for f in _findings(path.read_text(), "CL301")}
    tied = findings["scatter_heads"]  # 8-way for heads = 8 and 16 alike: not for odd heads
    assert tied.severity == Severity.INFO and tied.message.startswith("8-way")
    assert tied.message.endswith("(assuming a 32×8 block: not fixed by its launch; assuming heads = 8: the sizes "
                                 "its launch computes that block from)")
    assert dict(tied.evidence_dict()["assumed"])["heads"] == 8
    unlaunched = findings["column_read"]  # 32-way with 32×8, 16-way with 16×16
    assert unlaunched.severity == Severity.INFO
    assert unlaunched.message.endswith("(assuming a 32×8 block: no launch of `column_read` found)")
    launched = findings["column_read_launched"]
    assert launched.severity == Severity.WARNING and "assuming" not in launched.message


def test_runs_that_agree_on_the_figures_keep_the_finding_proven() -> None:
    from cudalens.analysis.assumptions import Assumption, Premises

    sizes = Assumption(Fact.SIZES, "n", 4096, "n = 4096", "no launch of `k` found")
    premises = Premises((256, 1, 1), (sizes,), (frozenset(), frozenset({Fact.SIZES})), ((256, 1, 1),) * 2)
    judge = partial(premises.judge, frozenset({Fact.SIZES}), Severity.WARNING, "32 sectors", {}, None, [True, True])
    assert judge(stated=[32, 32])[0] == Severity.WARNING
    severity, message, evidence = judge(stated=[32, 16])
    assert severity == Severity.INFO and message == "32 sectors (assuming n = 4096: no launch of `k` found)"
    assert evidence["assumed"] == (("n", 4096),)
