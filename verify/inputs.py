"""Kernel inputs: read from an .npz keyed by parameter name, the rest generated from a seed.

Each parameter draws from its own generator (seed, crc32 of its name), so adding a
parameter never changes the values another one gets."""
from __future__ import annotations

import zipfile
import zlib

import numpy as np

from spec.ir import Buffer, PrimFunc


class InputError(ValueError):
    """An input file that does not fit the kernel (a usage error: exit 2)."""


def generate(buffer: Buffer, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, zlib.crc32(buffer.name.encode())])
    dtype = buffer.dtype
    if dtype.is_float:
        values = rng.uniform(-1.0, 1.0, size=buffer.shape)
    elif dtype.is_bool:
        values = rng.integers(0, 2, size=buffer.shape).astype(bool)
    elif dtype.kind == "uint":
        values = rng.integers(0, 16, size=buffer.shape)
    else:
        values = rng.integers(-8, 8, size=buffer.shape)
    return dtype.quantize(values)


def _conform(buffer: Buffer, value: np.ndarray, origin: str) -> np.ndarray:
    value = np.asarray(value)
    if value.shape != buffer.shape:
        if value.size != buffer.size:
            raise InputError(f"{origin}: {buffer.name} has shape {value.shape}, "
                             f"the kernel declares {buffer.shape}")
        value = value.reshape(buffer.shape)
    return buffer.dtype.quantize(value)


def prepare(func: PrimFunc, seed: int, given: dict[str, np.ndarray] | None = None,
            origin: str = "inputs") -> dict[str, np.ndarray]:
    """Every tensor parameter's initial value: given ones conformed, the rest generated."""
    given = dict(given or {})
    names = {p.name for p in func.params}
    unknown = sorted(set(given) - names)
    if unknown:
        raise InputError(f"{origin}: no parameter named {', '.join(unknown)} "
                         f"(the kernel has {', '.join(p.name for p in func.params)})")
    return {p.name: _conform(p, given[p.name], origin) if p.name in given
            else generate(p, seed) for p in func.params}


def load_npz(path: str) -> dict[str, np.ndarray]:
    try:
        data = np.load(path, allow_pickle=False)
        if isinstance(data, np.ndarray):
            raise ValueError("a single array, not an .npz keyed by parameter name")
        with data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot read inputs {path}: {exc or type(exc).__name__}") \
            from exc


def save_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    np.savez(path, **arrays)
