"""Extracting the new source from Coder replies."""

from __future__ import annotations

import pytest

from cudalens.agents.coder.extract import NoCodeError, extract_source

FILE = '''import torch
from torch.utils.cpp_extension import load_inline

cuda_src = """
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x;  // one block per element: slow
    if (i < n) { y[i] = x[i] > 0.f ? x[i] : 0.f; }
}
"""

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return ext.relu(x)
'''

NEW_KERNEL = """__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = fmaxf(x[i], 0.f); }
}"""


@pytest.mark.parametrize("fence", ["```python", "```py", "```", "~~~python", "```Python"])
def test_whole_file_in_a_fence_with_or_without_language(fence: str) -> None:
    close = "~~~" if fence.startswith("~") else "```"
    r = extract_source(f"Here is the file:\n\n{fence}\n{FILE}{close}\n\nThis is faster.", None)
    assert r.kind == "file" and r.source == FILE


def test_several_fences_pick_the_complete_file() -> None:
    reply = (
        f"First the kernel:\n```cuda\n{NEW_KERNEL}\n```\nThen usage:\n```bash\npython run.py\n```\n"
        f"And the file:\n```python\n{FILE}```\nA shorter sketch:\n```python\nx = 1\n```\n"
    )
    assert extract_source(reply, FILE).source == FILE


def test_two_complete_files_take_the_last() -> None:
    second = FILE.replace("slow", "fixed")
    reply = f"```python\n{FILE}```\nWait, better:\n```python\n{second}```"
    assert extract_source(reply, None).source == second


def test_unfenced_whole_file() -> None:
    assert extract_source(FILE, None).source == FILE


def test_truncated_final_fence_still_counts() -> None:
    assert extract_source(f"```python\n{FILE}", None).source == FILE


@pytest.mark.parametrize("lang", ["cuda", "cpp", "c++", "cu", ""])
def test_single_kernel_replaces_the_kernel_of_the_same_name(lang: str) -> None:
    r = extract_source(f"Use this kernel:\n```{lang}\n{NEW_KERNEL}\n```", FILE)
    assert r.kind == "kernel" and r.kernel == "relu_kernel"
    assert "blockIdx.x * blockDim.x + threadIdx.x" in r.source and "one block per element" not in r.source
    assert r.source.startswith("import torch") and r.source.endswith("return ext.relu(x)\n")


def test_kernel_for_an_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(NoCodeError, match=r"other_kernel.*relu_kernel"):
        extract_source("```cuda\n__global__ void other_kernel(float* y) { y[0] = 1; }\n```", FILE)


@pytest.mark.parametrize(
    "text", ["I think the kernel is already optimal.", "", "```bash\nnvcc -O3 k.cu\n```"]
)
def test_no_code_is_a_clear_error(text: str) -> None:
    with pytest.raises(NoCodeError, match=r"no ModelNew file and no kernel|empty"):
        extract_source(text, FILE)


def test_python_that_does_not_parse_is_named() -> None:
    with pytest.raises(NoCodeError, match="does not parse"):
        extract_source("```python\nclass ModelNew(torch.nn.Module:\n    pass\n```", FILE)
