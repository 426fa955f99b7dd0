"""Static anti-cheat checks on candidates: each cheat is flagged by its check; an honest kernel is not."""

from __future__ import annotations

import pytest

from cudalens.worker.child.anti_cheat import AntiCheatPolicy, check_candidate, rejected

HEADER = '''import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cuda_src = """
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.f);
}
torch::Tensor relu(torch::Tensor x) { auto y = torch::empty_like(x); return y; }
"""
ext = load_inline("relu_ext", "torch::Tensor relu(torch::Tensor x);", cuda_src, functions=["relu"])

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''

HONEST = (
    HEADER
    + """
class ModelNew(nn.Module):
    def forward(self, x):  # torch.relu(x) in a comment is fine
        return ext.relu(x)
"""
)

CHEATS = {
    "try-except-fallback": "class ModelNew(nn.Module):\n    def forward(self, x):\n        try:\n"
    "            return ext.relu(x)\n        except Exception:\n            return torch.relu(x)\n",
    "torch-fallback": "class ModelNew(nn.Module):\n    def forward(self, x):\n        return F.relu(x)\n",
    "inherits-reference": "class ModelNew(Model):\n    pass\n",
    "calls-reference": "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.ref = Model()\n    def forward(self, x):\n        return self.ref(x)\n",
    "returns-input": "class ModelNew(nn.Module):\n    def forward(self, x):\n        ext.relu(x)\n        return x\n",
    "returns-constant": "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.zeros_like(x)\n",
    "side-stream": "class ModelNew(nn.Module):\n    def forward(self, x):\n        s = torch.cuda.Stream()\n"
    "        with torch.cuda.stream(s):\n            y = ext.relu(x)\n        return y\n",
    "timing-patch": "torch.cuda.synchronize = lambda *a: None\nclass ModelNew(nn.Module):\n"
    "    def forward(self, x):\n        return ext.relu(x)\n",
    "cached-output": "class ModelNew(nn.Module):\n    def forward(self, x):\n        if getattr(self, 'out', None)"
    " is None:\n            self.out = ext.relu(x)\n        return self.out\n",
    "threads": "import threading\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.relu(x)\n",
    "lazy-tensor": "class Lazy(torch.Tensor):\n    pass\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
    "        return ext.relu(x)\n",
    "missing-model-new": "",
}


def test_honest_kernel_passes() -> None:
    assert check_candidate(HONEST) == []


@pytest.mark.parametrize("check", CHEATS)
def test_each_cheat_is_rejected_by_its_check(check: str) -> None:
    found = check_candidate(HEADER + "\n" + CHEATS[check])
    assert check in {f.check for f in rejected(found)}, found
    line = next(f.line for f in found if f.check == check)
    assert line >= 0


def test_no_custom_kernel_when_required() -> None:
    plain = (
        "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
    )
    assert [f.check for f in check_candidate(plain)] == ["no-custom-kernel"]
    assert check_candidate(plain, AntiCheatPolicy(require_custom_kernel=False)) == []


def test_torch_ops_allowed_by_policy_and_precision_downgrade_warns() -> None:
    src = (
        HEADER
        + "\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return F.relu(x.half()).float()\n"
    )
    found = check_candidate(src, AntiCheatPolicy(allow_torch_compute=True))
    assert [(f.check, f.severity) for f in found] == [("precision-downgrade", "warn")]
