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


TRAITS = """
template <int BYTES> struct BytesToType {};
template <> struct BytesToType<16> { using Type = uint4; };
template <> struct BytesToType<8> { using Type = uint2; };
template <int kNThreads_, bool kIsVecLoad_, typename input_t_>
struct Traits {
    using input_t = input_t_;
    static constexpr int kNThreads = kNThreads_;
    static constexpr bool kIsVecLoad = kIsVecLoad_;
    static constexpr int kNBytes = sizeof(input_t);
    static constexpr int kNElts = kNBytes == 4 ? 4 : 8;
    static constexpr int kNLoads = kIsVecLoad && kNThreads >= 64 ? 2 : 1;
    using vec_t = typename BytesToType<kNBytes * kNElts>::Type;
};
"""


@pytest.mark.parametrize(("name", "expected"), [
    ("Traits<128, true, float>", {"kNThreads": 128, "kIsVecLoad": 1, "kNBytes": 4, "kNElts": 4, "kNLoads": 2}),
    ("Traits<32, false, __half>", {"kNThreads": 32, "kIsVecLoad": 0, "kNBytes": 2, "kNElts": 8, "kNLoads": 1}),
])
def test_a_traits_struct_gives_its_constants(name: str, expected: dict) -> None:
    """mamba's and causal-conv1d's `Ktraits`: no data members, `static constexpr` members with conditionals,
    comparisons and logic, read as `Ktraits::kNThreads`."""
    info = build_unit(TRAITS.encode()).types.lookup(name)
    assert info is not None and dict(info.statics) == expected


@pytest.mark.parametrize(("name", "size"), [
    ("typename Traits<128, true, float>::input_t", 4),
    ("Traits<128, true, __half>::input_t", 2),
    ("Traits<128, true, float>::vec_t", 16),  # BytesToType<4 * 4>'s specialisation
    ("Traits<128, true, __half>::vec_t", 16),  # BytesToType<2 * 8>
    ("Traits<128, true, double>::vec_t", None),  # BytesToType<64>: no specialisation
])
def test_member_types_of_a_traits_struct(name: str, size: int | None) -> None:
    info = build_unit(TRAITS.encode()).types.lookup(name)
    assert (info.size if info is not None else None) == size


def test_open_arguments_are_named_with_their_kind() -> None:
    types = build_unit(TRAITS.encode()).types
    assert types.open_arguments("Traits<128, kIsVecLoad, input_t>") == [("kIsVecLoad", "bool"), ("input_t", "type")]
    assert types.open_arguments("Traits<128, true, float>") == []
