"""The sector and bank arithmetic against hand-computed cases (CUDA Programming Guide, shared memory for
compute capability 5.x+; 32-byte sectors)."""

from __future__ import annotations

import numpy as np
import pytest

from cudalens.analysis.memory import global_request, shared_request

LANES = np.arange(32)
ALL = np.ones(32, bool)


@pytest.mark.parametrize(("addr", "size", "sectors", "ideal"), [
    (LANES * 4, 4, 4, 4),  # contiguous floats
    (LANES * 4 + 4, 4, 5, 4),  # misaligned by one float
    (LANES * 8, 4, 8, 4),  # stride 2
    (LANES * 4096 * 4, 4, 32, 4),  # a row apart
    (np.zeros(32, np.int64), 4, 1, 1),  # broadcast
    (LANES * 16, 16, 16, 16),  # float4, contiguous
    (LANES * 8, 8, 8, 8),  # double, contiguous
    (LANES * 24, 4, 24, 4),  # field of a 24-byte struct
])
def test_global_sectors(addr, size, sectors, ideal) -> None:
    r = global_request(addr, ALL, size)
    assert (r.sectors, r.ideal) == (sectors, ideal)


@pytest.mark.parametrize(("addr", "size", "degree", "wavefronts"), [
    (LANES * 4, 4, 1, 1),  # s[tid]
    (LANES * 128, 4, 32, 32),  # tile[tid][0] with 32 floats a row
    (LANES * 132, 4, 1, 1),  # padded row of 33
    (LANES * 8, 4, 2, 2),  # s[2 * tid]
    (np.zeros(32, np.int64), 4, 1, 1),  # broadcast
    (LANES * 8, 8, 1, 2),  # double s[tid]: two phases, no conflict
    (LANES * 16, 16, 1, 4),  # float4 s[tid]: four phases, no conflict
    (LANES * 16, 4, 4, 4),  # the .x of float4 s[tid]
    ((LANES // 2) * 4, 4, 1, 1),  # pairs of lanes share a word
])
def test_shared_banks(addr, size, degree, wavefronts) -> None:
    r = shared_request(addr, ALL, size)
    assert (r.degree, r.wavefronts) == (degree, wavefronts)


def test_inactive_lanes_do_not_count() -> None:
    mask = LANES < 16
    assert shared_request(LANES * 128, mask, 4).degree == 16
    assert global_request(LANES * 4, mask, 4).sectors == 2


def test_regular_groups_of_lanes_are_described() -> None:
    # a 16×16 block: a warp covers two rows of 16 lanes, 16 bytes apart within a row, a pitch between rows
    addr = np.concatenate([np.arange(16) * 16, 4096 + np.arange(16) * 16])
    assert global_request(addr, ALL, 4).groups == (16, 16)
    # pseudo-random offsets are not groups
    rng = np.random.default_rng(1)
    assert global_request(rng.integers(0, 1 << 20, 32) * 4, ALL, 4).groups is None
