"""Sizes and layouts of the types kernels use, on the shapes real code declares them: llm.c's `Packed128<T>`
template and its typedefs (the last of `#if`/`#else` typedefs wins, as the last macro does), cuda-samples'
`__align__(N)` structs, members counted by macros, `using` aliases."""

from __future__ import annotations

import pytest

from cudalens.analysis.unit import build_unit

SOURCE = """
#define NV 3
template <class ElementType>
struct alignas(16) Packed128 {
    Packed128() = default;
    __device__ ElementType& operator[](int index) { return payload[index]; }
    static constexpr const int size = sizeof(int4) / sizeof(ElementType);
    ElementType payload[size];
};
#if defined(ENABLE_BF16)
typedef __nv_bfloat16 floatX;
#else
typedef float floatX;
#endif
typedef Packed128<floatX> x128;
using f128 = Packed128<float>;
struct __align__(8) SumMax { float maxval; float sum; };
struct __align__(32) float8 { float4 a, b; };
struct Vn { float v[NV]; int tag; };
struct Opaque { Unknown u; };
"""


@pytest.mark.parametrize(("name", "size", "align", "statics"), [
    ("x128", 16, 16, {"size": 4}),
    ("f128", 16, 16, {"size": 4}),
    ("Packed128<__nv_bfloat16>", 16, 16, {"size": 8}),
    ("floatX", 4, 4, {}),
    ("SumMax", 8, 8, {}),
    ("float8", 32, 32, {}),
    ("Vn", 16, 4, {}),
])
def test_layouts(name: str, size: int, align: int, statics: dict) -> None:
    info = build_unit(SOURCE.encode()).types.lookup(name)
    assert info is not None and (info.size, info.align, dict(info.statics)) == (size, align, statics)


def test_a_member_of_unknown_size_leaves_the_struct_unknown() -> None:
    assert build_unit(SOURCE.encode()).types.lookup("Opaque") is None
