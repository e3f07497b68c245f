"""Kernel inputs: read from an .npz keyed by parameter name, the rest generated from a seed.

Generated values are counter-based: element i of parameter p is a hash of (seed,
crc32(p's name), i), so any window of a tensor can be generated alone and gets the same
values as the whole tensor would (a check that runs a few blocks never materializes the
rest), and adding a parameter never changes the values another one gets.

A float8 parameter takes numbers like any float (converted as the GPU converts them,
docs/semantics.md §8), an ml_dtypes float8 array, or raw bytes: a 1-byte void array
(`|V1`, what np.savez writes for an ml_dtypes float8 array and np.load gives back) holds
the parameter's own bit patterns (docs/oracle.md)."""
from __future__ import annotations

import ast
import math
import os
import zipfile
import zlib

import numpy as np

from verify_reducer.spec.dtypes import float8_from_bits
from verify_reducer.spec.ir import Buffer, PrimFunc
from verify_reducer.spec.limits import MAX_ELEMENTS, power_of_two


class InputError(ValueError):
    """An input file that does not fit the kernel (a usage error: exit 2)."""


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
# Elements hashed at once: bounds the uint64 temporaries and keeps them in the cache, where
# the allocator reuses them (a GEMV block's 4 M-element window hashed 4 M at a time spent
# most of its 0.15 s faulting in fresh 32 MB temporaries; 64 K at a time takes 0.03 s).
_CHUNK = 1 << 16


def _mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer (a bijection of uint64 that mixes every bit)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _key(buffer: Buffer, seed: int) -> np.uint64:
    word = np.array([(seed & (2**64 - 1)) ^ (zlib.crc32(buffer.name.encode()) << 32)],
                    dtype=np.uint64)
    return _mix64(word)[0]


# Narrow floats get a few dyadic values instead of uniform ones: ±1/2 and ±1 keep a sum
# exact in every order while the larger of its positive and negative parts stays within
# 2^p / 2 (docs/semantics.md §9): a bfloat16 sum of a few hundred terms, a float16 one of
# a few thousand, whose bound would otherwise be vacuous (inconclusive, never judged).
_NARROW_VALUES = np.array([-1.0, -0.5, 0.5, 1.0])
_NARROW_BITS = 11          # float16 (11 significand bits) and bfloat16 (8)


def _values(buffer: Buffer, hashes: np.ndarray) -> np.ndarray:
    """The hashes mapped to the ranges of generated inputs: float32 and float64 uniform
    in [-1, 1), float16 and bfloat16 one of ±1/2, ±1 (`_NARROW_VALUES`), signed
    integers in [-8, 8), unsigned in [0, 16), bools 0/1."""
    dtype = buffer.dtype
    if dtype.is_float and dtype.unit_roundoff >= 2.0 ** -_NARROW_BITS:
        return dtype.quantize(_NARROW_VALUES[(hashes >> np.uint64(62)).astype(np.intp)])
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
    value = _float8_values(buffer, value)
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


def _float8_values(buffer: Buffer, value: np.ndarray) -> np.ndarray:
    """An ml_dtypes float8 array (numpy kind V or f) as its float32 values, for any
    parameter (they are numbers); a float8 parameter's raw bytes (`|V1`) read as its bit
    patterns; anything else unchanged."""
    if value.dtype.name.startswith("float8_") and value.dtype.itemsize == 1:
        return value.astype(np.float32)                 # an ml_dtypes float8 array
    if not buffer.dtype.is_float8:
        return value
    if value.dtype.kind == "V" and value.dtype.itemsize == 1 and value.dtype.names is None:
        return float8_from_bits(value, buffer.dtype)
    return value


def _check_representable(buffer: Buffer, value: np.ndarray, where: str) -> None:
    dtype = buffer.dtype
    if dtype.is_float:
        if value.dtype.kind == "f" and dtype.saturates:
            # the GPU would saturate it to the largest finite value: refused, not bent;
            # an infinity (float8_e5m2 has them) is refused too: float8 values are
            # modelled saturating, without infinities (docs/limits.md)
            with np.errstate(invalid="ignore"):
                beyond = np.isfinite(value) & (np.abs(value) > dtype.finite_max)
            _refuse(value, beyond, where, f"is beyond the range of {dtype} "
                    f"(±{dtype.finite_max:g})")
            _refuse(value, np.isinf(value), where, f"is infinite: {dtype} values are "
                    f"modelled without infinities (every conversion into float8 "
                    f"saturates; docs/limits.md)")
        elif value.dtype.kind == "f":
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


def load_npz(path: str, func: PrimFunc, role: str = "input") -> dict[str, np.ndarray]:
    """The arrays of an .npz keyed by func's parameter names, read member by member and
    never unpickled. Everything that bounds the cost is decided before any array data is
    read, from the zip's directory and then each member's .npy header: every member must
    be `NAME.npy` for a parameter NAME, each name at most once (so at most one member per
    parameter), the file no larger than those arrays could make it, each header a
    numeric dtype and a shape that fits its parameter (its shape, or flat with as many
    elements). So memory is bounded by the program's own parameters: nine members of
    zeros that would decompress to gigabytes are refused from the directory alone.
    role ("input" or "output": compare's --outputs) words the messages."""
    params = {p.name: p for p in func.params}
    try:
        _check_file_size(path, params.values())
        with zipfile.ZipFile(path) as archive:
            members = _members(archive, path, params, role)
            return {name: _read_member(archive, info, params[name], role)
                    for name, info in members.items()}
    except InputError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, MemoryError, RuntimeError,
            NotImplementedError) as exc:    # (encrypted or unknown compression: the last two)
        raise InputError(f"cannot read inputs {path}: {_npy_hint(path) or exc or type(exc).__name__}") \
            from None


# an .npy header is a few hundred bytes; numpy refuses one over 10000 (max_header_size)
_HEADER_BYTES = 10_000
_LARGEST_ITEM = 16          # the widest numeric dtype (longdouble)


def _check_file_size(path: str, params) -> None:
    """A file larger than every parameter's array stored uncompressed (its widest dtype,
    a header each, the zip's own records) holds something else: refused before the
    zip's directory is read (a directory of millions of entries is memory too)."""
    size = os.stat(path).st_size
    largest = sum(p.size * _LARGEST_ITEM + 2 * _HEADER_BYTES for p in params) + (1 << 16)
    if size > largest:
        raise InputError(f"cannot read inputs {path}: the file has {size} bytes, more than "
                         f"arrays for the kernel's parameters can take ({largest})")


def _members(archive: zipfile.ZipFile, path: str, params: dict,
             role: str) -> dict[str, zipfile.ZipInfo]:
    """name -> member, from the directory alone: every member `NAME.npy` of a parameter,
    once."""
    members: dict[str, zipfile.ZipInfo] = {}
    unknown = []
    for info in archive.infolist():
        if not info.filename.endswith(".npy"):
            raise InputError(f"cannot read inputs {path}: member {info.filename!r} is not "
                             f"an .npy array (an .npz holds one NAME.npy per parameter)")
        name = info.filename[:-len(".npy")]
        if name not in params:
            unknown.append(name)
        elif name in members:
            raise InputError(f"cannot read inputs {path}: {name} is stored twice")
        members[name] = info
        if len(unknown) > len(params):      # enough to say it; the rest is not read
            break
    if unknown:
        noun = "tensor" if role == "output" else "parameter"
        raise InputError(f"{path}: no {noun} named {', '.join(sorted(unknown))} "
                         f"(the kernel has {', '.join(params)})")
    return members


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, buffer: Buffer,
                 role: str) -> np.ndarray:
    """The member's array: its header checked against buffer first, then exactly the
    data the header announces (np.lib.format reads it in bounded chunks)."""
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version not in ((1, 0), (2, 0)):
            raise InputError(f"{role} {buffer.name} is .npy format {version}; "
                             f"numeric arrays are stored as 1.0 or 2.0")
        if buffer.dtype.is_float8 and _one_byte_float(member, version):
            return _read_float8_bytes(archive, info, buffer, role)
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(member)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(member)
    _check_header(buffer, shape, dtype, f"{role} {buffer.name}")
    with archive.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


def _header_dict(member, version) -> dict | None:
    """The .npy header's dictionary read as a literal (None when it is not one)."""
    size = int.from_bytes(member.read(2 if version == (1, 0) else 4), "little")
    if size > _HEADER_BYTES:
        return None
    try:
        header = ast.literal_eval(member.read(size).decode("latin1"))
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError):
        return None
    return header if isinstance(header, dict) else None


def _one_byte_float(member, version) -> bool:
    """Whether the member holds ml_dtypes' float8_e5m2 as np.savez writes it (`<f1`, a
    descriptor numpy itself cannot read back)."""
    header = _header_dict(member, version)
    return header is not None and header.get("descr") in ("<f1", "|f1", ">f1")


def _read_float8_bytes(archive: zipfile.ZipFile, info: zipfile.ZipInfo, buffer: Buffer,
                       role: str) -> np.ndarray:
    """A `<f1` member's bytes, as raw bit patterns of buffer's float8 dtype."""
    where = f"{role} {buffer.name}"
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        header = _header_dict(member, version)
        shape = header.get("shape")
        if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0
                                                    for n in shape):
            raise InputError(f"{where}: its .npy header has no valid shape")
        if header.get("fortran_order"):
            raise InputError(f"{where}: a Fortran-ordered float8 array is not read; "
                             f"save it C-ordered")
        _check_header(buffer, shape, np.dtype("V1"), where)
        count = math.prod(shape)
        data = member.read(count)
    if len(data) != count:
        raise InputError(f"{where}: the member holds {len(data)} of its {count} bytes")
    return np.frombuffer(data, dtype=np.uint8).view("V1").reshape(shape)


def _check_header(buffer: Buffer, shape: tuple, dtype: np.dtype, where: str) -> None:
    raw_float8 = buffer.dtype.is_float8 and dtype.kind == "V" and dtype.itemsize == 1 \
        and dtype.names is None
    if dtype.hasobject or (dtype.kind not in _NUMERIC_KINDS and not raw_float8):
        what = _KIND_NAMES.get(dtype.kind, f"dtype {dtype}")
        never = " (never unpickled: allow_pickle=False)" if dtype.hasobject else ""
        raise InputError(f"{where}: holds {what} ({dtype}){never}; the kernel declares "
                         f"{buffer.dtype} numbers")
    count = math.prod(shape)
    if count > MAX_ELEMENTS:
        raise InputError(f"{where} has shape {shape} ({count} elements); at most "
                         f"{power_of_two(MAX_ELEMENTS)} are supported (docs/limits.md)")
    if tuple(shape) != buffer.shape and not (len(shape) == 1 and count == buffer.size):
        raise InputError(f"{where} has shape {tuple(shape)}, the program declares "
                         f"{buffer.shape} ({count} and {buffer.size} elements)")


def _npy_hint(path: str) -> str | None:
    """The words for a single .npy array given where an .npz belongs."""
    try:
        with open(path, "rb") as f:
            if f.read(6) == b"\x93NUMPY" and f.read(1):
                return "a single array, not an .npz keyed by parameter name"
    except OSError:
        pass
    return None
