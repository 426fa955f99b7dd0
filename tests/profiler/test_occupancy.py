"""Our occupancy calculator against CUDA's own `cuda_occupancy.h`, compiled here as a host-only C++ program."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import pytest

from cudalens.profiler.occupancy import ARCHS, arch_limits, theoretical_occupancy


def _find_header() -> Path | None:
    nvcc = shutil.which("nvcc")
    candidates = [Path("/usr/local/cuda/include")]
    if nvcc:
        candidates.append(Path(nvcc).resolve().parent.parent / "include")
    candidates += sorted(Path("/usr/local").glob("cuda-*/include"), reverse=True)
    for folder in candidates:
        if (folder / "cuda_occupancy.h").is_file():
            return folder / "cuda_occupancy.h"
    return None


HEADER = _find_header()
CXX = shutil.which("g++") or shutil.which("c++")

BLOCKS = (32, 64, 96, 128, 160, 192, 256, 384, 512, 640, 768, 1024)
REGS = (0, 16, 24, 32, 40, 48, 64, 72, 96, 128, 168, 200, 255)
# (static shared, dynamic shared, opt-in max dynamic or -1, barriers, carveout %)
SHARED = (
    (0, 0, -1, 0, -1),
    (1024, 0, -1, 1, -1),
    (4096, 2048, -1, 1, -1),
    (12000, 0, -1, 2, -1),
    (0, 40000, -1, 1, -1),
    (48 * 1024, 0, -1, 1, -1),
    (16384, 0, -1, 1, 50),
    (8192, 0, -1, 1, 0),
    (0, 70000, 100000, 1, -1),
    (0, 150000, 200000, 1, -1),
    (2048, 0, -1, 16, -1),
)

PROGRAM = r"""
#include <cstdio>
#include "cuda_occupancy.h"
int main() {
    int major, minor, threads, smemSm, optin, reserved, block, regs, barriers, carve;
    long stat, dyn, maxDyn;
    while (scanf("%d %d %d %d %d %d %d %d %ld %ld %ld %d %d", &major, &minor, &threads, &smemSm, &optin,
                 &reserved, &block, &regs, &stat, &dyn, &maxDyn, &barriers, &carve) == 13) {
        cudaOccDeviceProp p;
        p.computeMajor = major; p.computeMinor = minor; p.maxThreadsPerBlock = 1024;
        p.maxThreadsPerMultiprocessor = threads; p.regsPerBlock = 65536; p.regsPerMultiprocessor = 65536;
        p.warpSize = 32; p.sharedMemPerBlock = 48 * 1024; p.sharedMemPerMultiprocessor = smemSm;
        p.numSms = 100; p.sharedMemPerBlockOptin = optin; p.reservedSharedMemPerBlock = reserved;
        cudaOccFuncAttributes a;
        a.maxThreadsPerBlock = 1024; a.numRegs = regs; a.sharedSizeBytes = stat; a.numBlockBarriers = barriers;
        if (maxDyn >= 0) { a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN; a.maxDynamicSharedSizeBytes = maxDyn; }
        cudaOccDeviceState s;
        s.carveoutConfig = carve;
        cudaOccResult r;
        cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, block, dyn);
        if (e != CUDA_OCC_SUCCESS) { printf("error %d\n", (int)e); continue; }
        printf("%d %u\n", r.activeBlocksPerMultiprocessor, r.limitingFactors);
    }
    return 0;
}
"""

FACTOR_BITS = {"warps": 1, "registers": 2, "shared_memory": 4, "blocks": 8, "barriers": 16}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    if HEADER is None or CXX is None:
        pytest.skip("cuda_occupancy.h or a C++ compiler is not installed")
    folder = tmp_path_factory.mktemp("occ")
    (folder / "occ.cpp").write_text(PROGRAM)
    subprocess.run(
        [CXX, "-O1", "-w", "-I", str(HEADER.parent), str(folder / "occ.cpp"), "-o", str(folder / "occ")], check=True
    )
    return folder / "occ"


def test_matches_cuda_occupancy_h_on_a_table_of_cases(reference):
    cases = []
    for arch, block, regs, (stat, dyn, max_dyn, bars, carve) in itertools.product(ARCHS, BLOCKS, REGS, SHARED):
        cases.append((ARCHS[arch], block, regs, stat, dyn, max_dyn, bars, carve))
    lines = "\n".join(
        f"{p.major} {p.minor} {p.max_threads_per_sm} {p.shared_per_sm} {p.shared_per_block_optin} "
        f"{p.reserved_shared_per_block} {block} {regs} {stat} {dyn} {max_dyn} {bars} {carve}"
        for p, block, regs, stat, dyn, max_dyn, bars, carve in cases
    )
    out = subprocess.run([str(reference)], input=lines + "\n", capture_output=True, text=True, check=True)
    expected = out.stdout.splitlines()
    assert len(expected) == len(cases)
    mismatches = []
    for (p, block, regs, stat, dyn, max_dyn, bars, carve), want in zip(cases, expected, strict=True):
        assert not want.startswith("error"), (p.name, block, regs, stat, dyn, want)
        blocks, factors = (int(x) for x in want.split())
        ours = theoretical_occupancy(
            p, block, regs, stat, dyn, barriers=bars, carveout_percent=carve,
            max_dynamic_shared_bytes=None if max_dyn < 0 else max_dyn,
        )
        bits = sum(FACTOR_BITS[name] for name in ours.limiters)
        if (ours.active_blocks, bits) != (blocks, factors):
            mismatches.append((p.name, block, regs, stat, dyn, max_dyn, bars, carve, (blocks, factors),
                               (ours.active_blocks, bits)))
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ, e.g. {mismatches[:5]}"
    assert len(cases) > 5000


def test_known_values_and_the_limiter_named():
    # 256 threads × 64 registers on an H100: registers allow 4 blocks = 32 of 64 warps.
    occ = theoretical_occupancy("sm_90", 256, 64)
    assert (occ.active_blocks, occ.fraction, occ.limiter) == (4, 0.5, "registers")
    # 48 KB of static shared memory per block on an A100: 3 blocks fit in 164 KB.
    occ = theoretical_occupancy("sm_80", 128, 32, static_shared_bytes=48 * 1024)
    assert (occ.active_blocks, occ.limiter) == (3, "shared_memory")
    assert theoretical_occupancy("sm_75", 1024, 32).fraction == 1.0


def test_arch_names():
    assert arch_limits("sm_90a").name == "sm_90"
    assert arch_limits("8.6").name == "sm_86"
    assert arch_limits("compute_89").max_blocks_per_sm == 24
    with pytest.raises(KeyError, match="sm_100"):
        arch_limits("sm_100")
