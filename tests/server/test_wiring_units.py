"""The plain functions behind the GPU and Coder wiring, without a server."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cudalens.server.coder_setup import kernelbench_problem
from cudalens.server.edit_check import EditRefused
from cudalens.server.last_run import badge
from cudalens.server.offers import Offer, reply_offer, stale_reason
from cudalens.server.pipeline_on_save import LastRun, plan_for
from cudalens.server.settings import OnSave, parse_settings
from cudalens.worker.child.results import Measurement, TestResult, TimingResult, TrialResult

KB = "class Model:\n    pass\ndef get_inputs():\n    return []\nclass ModelNew:\n    pass\n"


def test_plan_needs_something_to_test_and_cuda_to_compile(tmp_path):
    on = OnSave(compile=True, test=True, time=True, profile=True)
    py = str(tmp_path / "m.py")
    assert plan_for(on, py, KB) == plan_for(on, py, KB).__class__(compile=False, test=True, time=True, profile=False)
    cu = str(tmp_path / "k.cu")
    plan = plan_for(on, cu, "__global__ void k() {}\n")  # no reference: compile only
    assert (plan.compile, plan.test, plan.profile) == (True, False, False)
    (tmp_path / "k_ref.py").write_text("")
    assert plan_for(on, cu, "__global__ void k() {}\n").profile
    assert not plan_for(OnSave(compile=False), cu, "").anything


def test_nothing_runs_on_save_by_default_whether_or_not_nvcc_is_there(monkeypatch, tmp_path):
    cu = str(tmp_path / "k.cu")
    (tmp_path / "k_ref.py").write_text("")
    for nvcc in (None, "/usr/bin/nvcc"):
        monkeypatch.setattr("shutil.which", lambda name, nvcc=nvcc: nvcc)
        assert OnSave() == OnSave(compile=False, test=False, time=False, profile=False)
        assert not plan_for(OnSave(), cu, "__global__ void k() {}\n").anything


def test_badge_shows_the_verdict_and_the_speedup():
    trials = tuple(TrialResult(i, i, True) for i in range(5))
    run = LastRun(1, [], test=TestResult("passed", trials))
    assert badge(run) == "✓ 5/5"
    m = lambda ms: Measurement("x", (ms,) * 5)  # noqa: E731
    run.timing = TimingResult(m(1.0), m(1.8))
    assert badge(run) == "✓ 5/5 · 1.8× vs PyTorch"
    failed = LastRun(1, [], test=TestResult("failed", (*trials[:3], TrialResult(3, 3, False), TrialResult(4, 4, False))))
    assert badge(failed) == "✗ failed 3/5" and badge(None) is None


def test_an_offer_replaces_exactly_its_lines_and_checks_the_version():
    text = "a\nb\nc\n"
    offer = Offer("x", "file:///m.py", "/m.py", 4, text, 1, 2, "B\nB2\n", "s")
    assert offer.new_document() == "a\nB\nB2\nc\n"
    [change] = offer.edit(PositionCodec(), True).document_changes
    assert change.text_document.version == 4
    assert change.edits[0].range == types.Range(types.Position(1, 0), types.Position(2, 0))
    assert "-b\n+B\n+B2\n" in offer.diff()
    whole = Offer("y", "file:///m.py", "/m.py", 4, "a\nlast", 0, 2, "new\n", "s")
    assert whole.edit(PositionCodec(), True).document_changes[0].edits[0].range.end == types.Position(1, 4)
    assert stale_reason(offer, 4, text) is None
    assert "changed since" in stale_reason(offer, 5, text)
    assert "no longer open" in stale_reason(offer, None, None)


def test_coder_settings_parse_and_kernelbench_files_are_recognised():
    parsed = parse_settings({"coder": {"baseUrl": "http://h/v1", "apiKeyEnv": "K", "priceOutPer1k": 0.5}})
    assert not parsed.errors and not parsed.unknown
    agent = parsed.settings.coder
    assert (agent.base_url, agent.model, agent.api_key_env, agent.temperature, agent.price_out_per_1k) == (
        "http://h/v1", "o3", "K", None, 0.5)
    assert kernelbench_problem("/m.py", KB) is None
    assert "KernelBench-style" in kernelbench_problem("/k.cu", "__global__ void k() {}")


def test_a_kernel_without_a_run_gets_a_predicted_verdict_in_its_hover():
    from cudalens.analysis.api import analyze_text
    from cudalens.server.verdicts import hover

    text = (
        "__global__ void strided(const float* in, float* out, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) out[i] = in[i * 32];\n"
        "}\n"
    )
    report = analyze_text("/k.cu", text)
    [kernel] = report.kernels
    markdown = hover(None, kernel, report.findings)
    assert markdown is not None and "Judge (predicted" in markdown
    run = LastRun(1, [], verdicts={"strided": "**Judge** measured"})
    assert hover(run, kernel, report.findings) == "**Judge** measured"


def test_ask_coder_sees_the_whole_kernel_around_a_finding():
    from cudalens.analysis.api import analyze_text
    from cudalens.server.optimize_commands import widen_to_kernel

    text = "// k\n__global__ void k(float* x, int n) {\n    int i = threadIdx.x;\n    x[i * 32] = 0;\n}\n"
    kernels = analyze_text("/k.cu", text).kernels
    assert widen_to_kernel(kernels, 3, 3) == (1, 4)
    assert widen_to_kernel(kernels, 0, 0) == (0, 0)  # outside any kernel: as asked


KERNEL_FILE = ("#include <cuda_runtime.h>\n\n"
               "__global__ void scale(float* out, const float* in, int n) {\n"
               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "    out[i] = 2.0f * in[i];\n"
               "}\n\n"
               "int main() { return 0; }\n")
GUARDED = ("__global__ void scale(float* out, const float* in, int n) {\n"
           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "    if (i < n) out[i] = 2.0f * in[i];\n"
           "}\n")


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
@pytest.mark.parametrize("block", [GUARDED, GUARDED + "\n", "\n" + GUARDED + "\n\n", GUARDED.rstrip("\n")])
def test_a_coder_reply_changes_the_kernels_lines_only(block, eol):
    """A code block with blank lines around the kernel (or none after it), in a file with `\\n` or `\\r\\n`:
    the file outside the kernel's lines stays byte-identical; only the guarded line changes."""
    text = KERNEL_FILE.replace("\n", eol)
    offer = reply_offer("file:///k.cu", "/k.cu", 1, text, 2, 5, block, "s", "/k.cu")
    offer.check(PositionCodec(), "/k.cu")
    new = offer.new_document()
    assert new == text.replace("    out[i] =", "    if (i < n) out[i] =")


def test_a_kernel_at_the_end_of_a_file_without_a_line_end_keeps_it_without_one():
    text = KERNEL_FILE[: KERNEL_FILE.index("\nint main")].rstrip("\n")  # ends with "}"
    offer = reply_offer("file:///k.cu", "/k.cu", 1, text, 2, 5, GUARDED + "\n", "s", "/k.cu")
    offer.check(PositionCodec(), "/k.cu")
    assert offer.new_document() == text.replace("    out[i] =", "    if (i < n) out[i] =")


def test_a_reply_that_changes_nothing_or_breaks_the_file_is_not_offered():
    same = reply_offer("file:///k.cu", "/k.cu", 1, KERNEL_FILE, 2, 5, "\n" + "".join(KERNEL_FILE.splitlines(True)[2:6]),
                       "s", "/k.cu")
    with pytest.raises(EditRefused, match="changes nothing"):
        same.check(PositionCodec(), "/k.cu")
    broken = reply_offer("file:///k.cu", "/k.cu", 1, KERNEL_FILE, 2, 5, GUARDED.replace("}\n", ""), "s", "/k.cu")
    with pytest.raises(EditRefused, match="would not parse"):
        broken.check(PositionCodec(), "/k.cu")
