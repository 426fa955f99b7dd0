"""Why a whole model's outputs are compared without TF32 (issue 36): on the H200 the diffusion block with a
correct group_norm kernel differed from the original in 86 of 4.2 M outputs, 2.7e-4 at most, while the op's own
trials passed. cuDNN's fp32 convolutions are TF32 by default: a last-bit difference in the kernel's output moves
the convolution after it by TF32's rounding step. Here on a CPU, with the convolutions' inputs rounded to TF32
as the GPU does, and without."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

F = torch.nn.functional


def _tf32(t):
    """Round to TF32 (10 mantissa bits), to nearest, as a tensor core reads an fp32 operand."""
    return ((t.view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)


def _two_pass_group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """A correct group_norm whose last bits differ from PyTorch's (a kernel's two-pass statistics)."""
    n, c = input.shape[:2]
    rows = input.reshape(n, num_groups, -1)
    mean = rows.sum(-1, keepdim=True) / rows.shape[-1]
    var = ((rows - mean) ** 2).sum(-1, keepdim=True) / rows.shape[-1]
    normed = ((rows - mean) * torch.rsqrt(var + eps)).reshape(n, c, -1)
    return (normed * weight.view(1, c, 1) + bias.view(1, c, 1)).reshape(input.shape)


def test_a_last_bit_difference_fails_the_check_only_through_tf32_convolutions(monkeypatch):
    torch.manual_seed(0)  # benchmarks/gpu_whole_model.py's diffusion block, one sample
    norm1, norm2 = torch.nn.GroupNorm(32, 128), torch.nn.GroupNorm(32, 128)
    conv1, conv2 = torch.nn.Conv2d(128, 128, 3, padding=1), torch.nn.Conv2d(128, 128, 3, padding=1)
    x = torch.randn(1, 128, 64, 64)
    conv2d = F.conv2d

    def block(group_norm, rounded):
        monkeypatch.setattr(F, "conv2d", (lambda i, w, *a, **k: conv2d(_tf32(i), _tf32(w), *a, **k)) if rounded
                            else conv2d)
        with torch.no_grad():
            h = conv1(F.silu(group_norm(x, 32, norm1.weight, norm1.bias, 1e-5)))
            return x + conv2(F.silu(group_norm(h, 32, norm2.weight, norm2.bias, 1e-5)))

    for rounded, beyond in ((False, 0), (True, None)):
        expected, actual = block(F.group_norm, rounded), block(_two_pass_group_norm, rounded)
        off = int((~torch.isclose(actual, expected, rtol=1e-4, atol=1e-4)).sum())
        if beyond is None:
            assert off > 0, "TF32-rounded convolutions should carry the last-bit difference past 1e-4"
        else:
            assert off == beyond, f"{off} outputs beyond 1e-4 with fp32 convolutions"


def test_the_comparison_runs_without_tf32_and_leaves_the_settings_as_they_were():
    from cudalens.worker.child.jobs.model_verify_job import ieee_fp32

    before = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    assert before[0]  # torch's default for cuDNN's fp32 convolutions
    with ieee_fp32():
        assert (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32) == (False, False)
        assert torch.backends.cudnn.conv.fp32_precision != "tf32"  # the newer view agrees
    assert (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32) == before
    assert torch.backends.cudnn.conv.fp32_precision == "tf32"


def test_a_model_on_torchs_newer_precision_settings_gets_them():
    # the legacy read raises once a model set cuDNN's convolutions apart from its RNNs with the newer API
    from cudalens.worker.child.jobs.model_verify_job import ieee_fp32

    conv = torch.backends.cudnn.conv.fp32_precision
    torch.backends.cudnn.conv.fp32_precision = "tf32" if torch.backends.cudnn.rnn.fp32_precision != "tf32" else "ieee"
    try:
        with pytest.raises(RuntimeError):
            torch.backends.cudnn.allow_tf32  # noqa: B018
        set_by_model = torch.backends.cudnn.conv.fp32_precision
        with ieee_fp32():
            assert torch.backends.cudnn.conv.fp32_precision == "ieee"
        assert torch.backends.cudnn.conv.fp32_precision == set_by_model
    finally:
        torch.backends.cudnn.conv.fp32_precision = conv
