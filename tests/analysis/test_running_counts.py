"""Running counts (analysis/running_counts.py): which kernel parameters a host-side scan fills, and what says
so; the compaction fixture CL1_running_count.cu shows what CL104 makes of them."""

from __future__ import annotations

from cudalens.analysis.running_counts import running_counts
from cudalens.analysis.unit import build_unit

# kaolin's marching cubes, cut down: the scan sits in a helper that reads its output through a local, and the
# launch in another helper that takes the buffer as a parameter; the caller passes the same tensor to both
WRAPPED = b"""
__global__ void compactVoxels(int* out, const int* occupied, const int* scan, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && occupied[i]) out[scan[i]] = i;
}
void launch_compact(at::Tensor out, at::Tensor occupied, at::Tensor occupiedScan, int n) {
    compactVoxels<<<(n + 127) / 128, 128>>>(out.data_ptr<int>(), occupied.data_ptr<int>(),
                                            occupiedScan.data_ptr<int>(), n);
}
void ScanWrapper(at::Tensor output, at::Tensor input, int n) {
    int* d_out = output.data_ptr<int>();
    cub::DeviceScan::ExclusiveSum(tmp, bytes, input.data_ptr<int>(), d_out, n);
}
void run(at::Tensor out, at::Tensor occ, at::Tensor occScan, int n) {
    ScanWrapper(occScan, occ, n);
    launch_compact(out, occ, occScan, n);
}
"""


def _counts(source: bytes, kernel: str) -> dict[str, str]:
    unit = build_unit(source)
    return running_counts(unit, unit.functions[kernel][0])


def test_a_scan_through_helpers_on_both_sides_is_found() -> None:
    assert _counts(WRAPPED, "compactVoxels") == {
        "scan": "the `cub::DeviceScan::ExclusiveSum` on line 12 fills `d_out`"}


def test_the_scan_output_is_the_count_not_its_input() -> None:
    source = WRAPPED.replace(b"ScanWrapper(occScan, occ, n);", b"ScanWrapper(occ, occScan, n);")
    assert set(_counts(source, "compactVoxels")) == {"occupied"}


def test_thrust_scan_output_after_a_policy_and_a_cast() -> None:
    source = b"""
__global__ void k(const unsigned* sums, float* out) { out[sums[threadIdx.x]] = 1.0f; }
void run(const unsigned* flags, thrust::device_vector<unsigned>& sums, float* out, int n) {
    thrust::exclusive_scan(thrust::device, flags, flags + n, sums.begin());
    k<<<1, 256>>>((const unsigned*)thrust::raw_pointer_cast(sums.data()), out);
}
"""
    assert set(_counts(source, "k")) == {"sums"}


def test_a_segment_walk_is_not_a_compaction() -> None:
    source = b"""
__global__ void rows(const int* row_ptr, const float* v, float* y) {
    int r = threadIdx.x;
    int end = row_ptr[r + 1];
    for (int j = row_ptr[r]; j < end; ++j) y[r] += v[j];
}
void run(const int* lengths, int* row_ptr, const float* v, float* y, int n) {
    thrust::exclusive_scan(lengths, lengths + n + 1, row_ptr);
    rows<<<1, 128>>>(row_ptr, v, y);
}
"""
    assert _counts(source, "rows") == {}
