"""The CI model on a GPU: the table is by device time and names the CUDA kernels under each call."""

from __future__ import annotations

import pytest

from cudalens.model.profile import profile_model


@pytest.mark.gpu
def test_ranks_by_device_time_with_the_kernels(model_file):
    profile = profile_model(str(model_file), device="cuda", iters=3)
    assert profile.clock == "device" and profile.device == "cuda"
    norm = next(c for c in profile.calls if c.name == "group_norm")
    assert norm.us > 0 and norm.kernels and norm.calls == 1, norm  # the GPU's copy of each range is not a call
    assert all(k.us > 0 for k in norm.kernels)
    assert "2×32×16×16 f32" in norm.shapes()
