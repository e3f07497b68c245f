"""Kernel inputs: read from an .npz keyed by parameter name, the rest generated from a seed.

Each parameter draws from its own generator (seed, crc32 of its name), so adding a
parameter never changes the values another one gets."""
from __future__ import annotations

import math
import zipfile
import zlib

import numpy as np

from spec.ir import Buffer, PrimFunc
from spec.limits import MAX_ELEMENTS, power_of_two


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


# numpy kinds an input may have: bool, signed and unsigned integers, floats. Strings,
# bytes, complex numbers, datetimes, structured records and Python objects are refused.
_NUMERIC_KINDS = "biuf"
_KIND_NAMES = {"U": "strings", "S": "bytes", "V": "structured or void records",
               "O": "Python objects", "c": "complex numbers", "M": "datetimes",
               "m": "timedeltas"}


def _conform(buffer: Buffer, value, origin: str) -> np.ndarray:
    """value as buffer's dtype and shape, or InputError naming the parameter: the shape
    must be the declared one, or flat with as many elements (filled row-major); every
    value must be representable (no integer wrap, no 1e300 turned into 0 or inf)."""
    where = f"{origin}: {buffer.name}"
    try:
        value = np.asarray(value)
    except (ValueError, TypeError) as exc:      # ragged lists and the like
        raise InputError(f"{where}: not an array of numbers ({exc})") from None
    if value.dtype.kind not in _NUMERIC_KINDS:
        what = _KIND_NAMES.get(value.dtype.kind, f"dtype {value.dtype}")
        raise InputError(f"{where}: holds {what} ({value.dtype}); the kernel declares "
                         f"{buffer.dtype} numbers")
    if value.ndim == 1 and value.size == buffer.size:
        value = value.reshape(buffer.shape)     # a flat list (`arange`) fills row-major
    if value.shape != buffer.shape:
        raise InputError(f"{where} has shape {value.shape}, the kernel declares "
                         f"{buffer.shape}")
    _check_representable(buffer, value, where)
    with np.errstate(all="ignore"):
        return buffer.dtype.quantize(value)


def _check_representable(buffer: Buffer, value: np.ndarray, where: str) -> None:
    dtype = buffer.dtype
    if dtype.is_float:
        if value.dtype.kind == "f":
            with np.errstate(all="ignore"):
                overflow = np.isfinite(value) & np.isinf(dtype.quantize(value))
            _refuse(value, overflow, where, f"is beyond the range of {dtype}")
        return
    if value.dtype.kind == "f":
        _refuse(value, ~np.isfinite(value), where, f"has no {dtype} value")
        _refuse(value, value != np.trunc(value), where, f"is not an integer ({dtype})")
    low, high = (0, 1) if dtype.is_bool else (dtype.lowest, dtype.highest)
    if value.dtype.kind == "f":
        outside = (value < low) | (value > high)
    else:   # compare as Python integers: uint64 and int64 values do not mix in numpy
        outside = np.array([not low <= int(v) <= high for v in value.reshape(-1)],
                           dtype=bool).reshape(value.shape) if value.size else \
            np.zeros(value.shape, dtype=bool)
    _refuse(value, outside, where, f"does not fit in {dtype} [{low}, {high}]")


def _refuse(value: np.ndarray, bad: np.ndarray, where: str, why: str) -> None:
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"{where}{list(index)} = {value[index].item()!r} {why} "
                         f"({int(bad.sum())} element(s))")


def special_values(values: dict[str, np.ndarray]) -> list[str]:
    """Notes for the report: float inputs holding NaN or infinity (allowed, but every
    result they reach is NaN or inf too)."""
    notes = []
    for name, value in values.items():
        if value.dtype.kind != "f":
            continue
        nan, inf = int(np.isnan(value).sum()), int(np.isinf(value).sum())
        if nan or inf:
            parts = [f"{n} {what}" for n, what in ((nan, "NaN"), (inf, "infinite")) if n]
            notes.append(f"input {name} has {' and '.join(parts)} element(s)")
    return notes


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
    """The arrays of an .npz, never unpickling (allow_pickle=False) and reading each
    array's header first, so an array beyond MAX_ELEMENTS is refused before it is read."""
    try:
        data = np.load(path, allow_pickle=False)
        if isinstance(data, np.ndarray):
            raise ValueError("a single array, not an .npz keyed by parameter name")
        with data:
            for name in data.files:
                _check_stored_size(data.zip, name)
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, MemoryError) as exc:
        raise InputError(f"cannot read inputs {path}: {exc or type(exc).__name__}") \
            from exc


def _check_stored_size(archive: zipfile.ZipFile, name: str) -> None:
    with archive.open(f"{name}.npy") as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _, _ = np.lib.format.read_array_header_1_0(member)
        else:
            shape, _, _ = np.lib.format.read_array_header_2_0(member)
    count = math.prod(shape)
    if count > MAX_ELEMENTS:
        raise InputError(f"{name} in the inputs has shape {shape} ({count} elements); at "
                         f"most {power_of_two(MAX_ELEMENTS)} are supported (docs/limits.md)")


def save_npz(path: str, arrays: dict[str, np.ndarray]) -> str:
    """Write arrays to path and return the file actually written (numpy appends .npz
    when path has no such suffix)."""
    written = path if path.endswith(".npz") else path + ".npz"
    np.savez(written, **arrays)
    return written
