"""The C spelling of a 128-bit copy access: the vector type that carries a run and its
zero. Whether and how a copy moves runs is decided by codegen.lower.copies."""
from __future__ import annotations


def vector_type(c_name: str) -> tuple[str, str]:
    """The CUDA 16-byte vector type that carries a run of c_name, and its zero."""
    if c_name == "float":
        return "float4", "make_float4(0.0f, 0.0f, 0.0f, 0.0f)"
    return "uint4", "make_uint4(0u, 0u, 0u, 0u)"

