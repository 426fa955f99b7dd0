"""Whether a custom kernel is likely to beat PyTorch on one of a model's calls: the table's last column, and
which calls `cudalens model` writes problems for first.

- yes: memory-bound normalisations, reductions, softmax and pooling, where one fused pass over the data
  beats PyTorch's several (Kernel Forge reports group_norm 1.70×, softmax 2.83×, adaptive_avg_pool2d 1.52×);
- maybe: attention (PyTorch already picks flash or memory-efficient kernels), elementwise ops (worth fusing
  into a neighbour, which torch.compile also does), anything not known;
- unlikely: convolutions and matrix products, which cuDNN and cuBLAS already run near peak;
- no: a call under 1 % of the time, or one that moves no data (a view).
Standard library only.
"""

from __future__ import annotations

import re

MIN_SHARE = 0.01
FUSED_PASS = re.compile(
    r"(group_norm|layer_norm|batch_norm|instance_norm|rms_norm|local_response_norm|normalize|softmax|softmin|"
    r"log_softmax|adaptive_avg_pool|adaptive_max_pool|avg_pool|max_pool|lp_pool|^mean$|^sum$|^var$|^std$|"
    r"var_mean|std_mean|^norm$|logsumexp|cross_entropy|nll_loss|cumsum|^amax$|^amin$)"
)
VENDOR = re.compile(r"^(conv\d?d|conv_transpose\d?d|linear|bilinear|matmul|mm|bmm|addmm|baddbmm|einsum|"
                    r"tensordot|__matmul__)$")
VENDOR_KERNEL = re.compile(r"gemm|cutlass|cublas|cudnn|xmma|implicit_convolve|winograd|sm\d\d_", re.IGNORECASE)
ATTENTION = re.compile(r"attention")
VIEWS = re.compile(r"^(view|reshape|flatten|unflatten|squeeze|unsqueeze|permute|transpose|t|expand|narrow|"
                   r"select|split|chunk|unbind|__getitem__|detach|as_strided|view_as|expand_as|movedim)$")


def advice(name: str, share: float, kernels: list[str]) -> tuple[str, str]:
    """(verdict, why) for the call of function `name` taking `share` of the time and launching `kernels`."""
    if VIEWS.match(name):
        return "no", "a view: it moves no data"
    if share < MIN_SHARE:
        return "no", f"under {MIN_SHARE:.0%} of the time"
    if ATTENTION.search(name):
        return "maybe", "attention: PyTorch already picks a fused kernel; a custom one helps for unusual shapes"
    if VENDOR.match(name) or any(VENDOR_KERNEL.search(k) for k in kernels):
        return "unlikely", "cuBLAS/cuDNN run it near peak already; a fused epilogue is the usual gain"
    if FUSED_PASS.search(name):
        return "yes", "memory-bound: one fused pass beats PyTorch's several"
    return "maybe", "elementwise or other: fuse it with its neighbours (torch.compile does too)"


RANK = {"yes": 0, "maybe": 1, "unlikely": 2, "no": 3}
