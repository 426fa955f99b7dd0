"""HONEST: a kernel plus a small helper launch. The weight is transposed into a contiguous copy (ATen's copy
kernel, 16 MB) and the file's tiled GEMM does the product with the bias fused in. The copy is a small share
of the call's device time.

Counterpart of: cheat_library_rowsum_helper.py, cheat_library_gemm_aten.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "gemm"
EDITS = [
    (8, 14, r'''    """y = x @ W.T + b: a linear layer of 2048 -> 2048 features over 8192 rows, float32."""

    def __init__(self, in_features: int = 2048, out_features: int = 2048):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.02)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.linear(x, self.weight, self.bias)
'''),
    (17, 17, r'''batch_size = 8192
in_features = 2048
out_features = 2048
'''),
    (21, 21, '    return [torch.randn(batch_size, in_features)]\n'),
    (25, 25, '    return [in_features, out_features]\n'),
    (146, 150, r'''    def __init__(self, in_features: int = 2048, out_features: int = 2048):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.02)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.02)

    def forward(self, x):
        weight_t = self.weight.t().contiguous()  # K x N for the kernel: a small copy, a few microseconds
        return ext.matmul_tiled_bias(x, weight_t, self.bias)
'''),
]
