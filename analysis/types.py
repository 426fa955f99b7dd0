"""Element sizes of the types kernels use, and the layout of simple structs (for array-of-structs reads)."""

from __future__ import annotations

from dataclasses import dataclass

# bytes, and alignment where it differs from the size
PRIMITIVE_SIZES: dict[str, int] = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2,
    "__nv_bfloat16": 2, "nv_bfloat16": 2, "at::Half": 2, "c10::Half": 2, "at::BFloat16": 2,
    "int": 4, "unsigned": 4, "unsigned int": 4, "float": 4, "int32_t": 4, "uint32_t": 4, "half2": 4,
    "__half2": 4, "__nv_bfloat162": 4, "char4": 4, "uchar4": 4, "short2": 4, "ushort2": 4,
    "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8, "double": 8, "size_t": 8,
    "int64_t": 8, "uint64_t": 8, "float2": 8, "int2": 8, "uint2": 8, "short4": 8, "ushort4": 8,
    "long2": 16, "float4": 16, "int4": 16, "uint4": 16, "double2": 16, "longlong2": 16,
    "float3": 12, "int3": 12, "uint3": 12, "double4": 32,
}
_ALIGN = {"float3": 4, "int3": 4, "uint3": 4, "double4": 16}
FLOAT_TYPES = {"float", "double", "half", "__half", "__nv_bfloat16", "nv_bfloat16", "float2", "float4",
               "double2", "half2", "__half2", "scalar_t", "float3"}


@dataclass(frozen=True)
class TypeInfo:
    name: str
    size: int
    align: int
    fields: tuple[tuple[str, int, TypeInfo], ...] = ()  # (name, byte offset, type) for structs

    @property
    def is_struct(self) -> bool:
        return bool(self.fields)

    def field(self, name: str) -> tuple[int, TypeInfo] | None:
        for fname, offset, ftype in self.fields:
            if fname == name:
                return offset, ftype
        return None


_VECTOR_FIELDS = {"x": 0, "y": 1, "z": 2, "w": 3}


def normalize(type_text: str) -> str:
    words = [w for w in type_text.replace("*", " ").replace("&", " ").split()
             if w not in ("const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "static",
                          "__shared__", "extern", "__constant__", "__device__", "register", "typename")]
    return " ".join(words)


class TypeTable:
    """Known types of one translation unit: primitives, CUDA vector types and the unit's structs."""

    def __init__(self) -> None:
        self.structs: dict[str, TypeInfo] = {}
        self.aliases: dict[str, str] = {}

    def lookup(self, type_text: str) -> TypeInfo | None:
        name = normalize(type_text)
        name = self.aliases.get(name, name)
        if name in self.structs:
            return self.structs[name]
        if name in PRIMITIVE_SIZES:
            size = PRIMITIVE_SIZES[name]
            return TypeInfo(name, size, _ALIGN.get(name, min(size, 16)), _vector_fields(name, size))
        if name.startswith("unsigned ") or name.startswith("signed "):
            return self.lookup(name.split(" ", 1)[1] or "int")
        return None

    def with_aliases(self, aliases: dict[str, str]) -> TypeTable:
        """A copy that also knows `aliases` (a template's type parameters: `T` → `float`)."""
        table = TypeTable()
        table.structs = self.structs
        table.aliases = {**self.aliases, **{name: normalize(t) for name, t in aliases.items()}}
        return table

    def add_struct(self, name: str, members: list[tuple[str, str, int]]) -> None:
        """members: (field name, type text, array count)."""
        offset, align, fields = 0, 1, []
        for fname, ftype_text, count in members:
            ftype = self.lookup(ftype_text)
            if ftype is None:
                return  # a member of unknown size: the layout cannot be trusted
            offset = -(-offset // ftype.align) * ftype.align
            fields.append((fname, offset, ftype))
            offset += ftype.size * count
            align = max(align, ftype.align)
        size = -(-offset // align) * align
        self.structs[name] = TypeInfo(name, size, align, tuple(fields))


def _vector_fields(name: str, size: int) -> tuple[tuple[str, int, TypeInfo], ...]:
    for base, lanes in (("float", 4), ("double", 8), ("int", 4), ("uint", 4), ("half", 2), ("__half", 2),
                        ("short", 2), ("ushort", 2), ("char", 1), ("uchar", 1), ("long", 8), ("longlong", 8),
                        ("__nv_bfloat16", 2)):
        if name.startswith(base) and name[len(base):] in ("2", "3", "4"):
            scalar = TypeInfo(base, lanes, lanes)
            return tuple((f, i * lanes, scalar) for f, i in _VECTOR_FIELDS.items() if i < int(name[-1]))
    return ()
