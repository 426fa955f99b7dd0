"""A helper inlined into several kernels gives one finding per place and claim (pipeline.distinct), naming every
kernel that reaches it: `cudalens check` and the editor showed the same line once per kernel."""

from __future__ import annotations

from cudalens.analysis.api import analyze_text

SOURCE = """
__device__ void scatter(float* out, const float* in, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    out[i * 32] = in[i];
}
__global__ void first(float* out, const float* in, int n) { scatter(out, in, n); }
__global__ void second(float* out, const float* in, int n) { scatter(out, in, n); }
void host(float* o, const float* i, int n) {
    first<<<n / 256, 256>>>(o, i, n);
    second<<<n / 256, 256>>>(o, i, n);
}
"""


def test_a_helper_reached_from_two_kernels_is_reported_once_naming_both():
    findings = [f for f in analyze_text("k.cu", SOURCE).findings if f.code.startswith("CL10")]
    assert len(findings) == 1, [(f.code, f.line, f.kernel) for f in findings]
    [finding] = findings
    assert finding.line == 4
    assert dict(finding.evidence)["kernels"] == "first, second"


def test_one_kernel_alone_keeps_its_finding_as_it_was():
    one = SOURCE.replace("    second<<<n / 256, 256>>>(o, i, n);\n", "").replace(
        "__global__ void second(float* out, const float* in, int n) { scatter(out, in, n); }\n", "")
    [finding] = [f for f in analyze_text("k.cu", one).findings if f.code.startswith("CL10")]
    assert finding.kernel == "first" and "kernels" not in dict(finding.evidence)
