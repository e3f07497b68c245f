"""Kernel inputs: read from an .npz keyed by parameter name, the rest generated from a seed.

Generated values are counter-based: element i of parameter p is a hash of (seed,
crc32(p's name), i), so any window of a tensor can be generated alone and gets the same
values as the whole tensor would (a check that runs a few blocks never materializes the
rest), and adding a parameter never changes the values another one gets."""
from __future__ import annotations

import zipfile
import zlib

import numpy as np

from spec.ir import Buffer, PrimFunc


class InputError(ValueError):
    """An input file that does not fit the kernel (a usage error: exit 2)."""


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_CHUNK = 1 << 22          # elements hashed at once: bounds the uint64 temporaries


def _mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer (a bijection of uint64 that mixes every bit)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _key(buffer: Buffer, seed: int) -> np.uint64:
    word = np.array([(seed & (2**64 - 1)) ^ (zlib.crc32(buffer.name.encode()) << 32)],
                    dtype=np.uint64)
    return _mix64(word)[0]


def _values(buffer: Buffer, hashes: np.ndarray) -> np.ndarray:
    """The hashes mapped to the ranges inputs have always had: floats uniform in
    [-1, 1), signed integers in [-8, 8), unsigned in [0, 16), bools 0/1."""
    dtype = buffer.dtype
    if dtype.is_float:
        unit = (hashes >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
        return dtype.quantize(2.0 * unit - 1.0)
    if dtype.is_bool:
        return (hashes >> np.uint64(63)).astype(bool)
    nibble = (hashes >> np.uint64(60)).astype(np.int64)
    return dtype.quantize(nibble if dtype.kind == "uint" else nibble - 8)


def generate(buffer: Buffer, seed: int, box=None) -> np.ndarray:
    """The generated values of buffer, or of its window box (per dimension [lo, hi)),
    in the box's shape."""
    shape = buffer.shape
    box = tuple((0, n) for n in shape) if box is None else tuple(box)
    out_shape = tuple(hi - lo for lo, hi in box)
    out = np.empty(out_shape, dtype=buffer.dtype.np)
    if out.size == 0:
        return out
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    key = _key(buffer, seed)
    if not shape:
        out[...] = _values(buffer, _mix64(np.array([key], dtype=np.uint64)))[0]
        return out
    inner = int(np.prod(out_shape[1:], dtype=np.int64))
    rows = max(1, _CHUNK // max(inner, 1))
    (lo0, hi0), rest = box[0], box[1:]
    offset = np.zeros((1,) * len(shape), dtype=np.uint64)
    for d, (lo, hi) in enumerate(rest, 1):
        axis = np.arange(lo, hi, dtype=np.uint64) * np.uint64(strides[d])
        offset = offset + axis.reshape((1,) * d + (-1,) + (1,) * (len(shape) - d - 1))
    for first in range(lo0, hi0, rows):
        last = min(hi0, first + rows)
        head = np.arange(first, last, dtype=np.uint64) * np.uint64(strides[0])
        flat = head.reshape((-1,) + (1,) * (len(shape) - 1)) + offset
        out[first - lo0:last - lo0] = _values(buffer, _mix64(key + flat * _GOLDEN))
    return out


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
    conformed = conform_given(func, given, origin)
    return {p.name: conformed[p.name] if p.name in conformed else generate(p, seed)
            for p in func.params}


def conform_given(func: PrimFunc, given: dict[str, np.ndarray] | None,
                  origin: str = "inputs") -> dict[str, np.ndarray]:
    """The given inputs, each conformed to its parameter (nothing generated)."""
    given = dict(given or {})
    names = {p.name for p in func.params}
    unknown = sorted(set(given) - names)
    if unknown:
        raise InputError(f"{origin}: no parameter named {', '.join(unknown)} "
                         f"(the kernel has {', '.join(p.name for p in func.params)})")
    return {p.name: _conform(p, given[p.name], origin) for p in func.params
            if p.name in given}


def in_windows(func: PrimFunc, seed: int, conformed: dict[str, np.ndarray],
               boxes: dict[str, tuple]) -> dict[str, np.ndarray]:
    """Every parameter's initial values inside its box: given ones (conformed) sliced,
    the rest generated for the box alone."""
    out = {}
    for p in func.params:
        box = boxes[p.name]
        if p.name in conformed:
            out[p.name] = conformed[p.name][tuple(slice(lo, hi) for lo, hi in box)].copy()
        else:
            out[p.name] = generate(p, seed, box)
    return out


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
