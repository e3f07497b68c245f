"""Run a program through real TileLang on the GPU (`run --backend tilelang`).

    outputs = run_tilelang(path, func, inputs)   # every tensor parameter, after the kernel

This is the one place where verify-reducer executes the user's file: TileLang's frontend
*is* Python execution (`@T.prim_func` builds the TIR while the module is imported), so
there is no other way to hand the program to TileLang. It happens only here, only when
this backend is asked for, and in isolation: the file is imported by path under a fresh
private module name (never `__main__`, so `if __name__ == "__main__":` blocks do not run),
that name is removed from `sys.modules` again afterwards, and no bytecode is written
beside the file. The prim_func is the module attribute our frontend's name denotes: the
attribute of that name, or (the factory pattern, `prog = make_kernel(...)`) the one
module-level prim_func whose global symbol is that name.

Inputs are keyed by parameter name (numpy arrays in the dtype's numpy storage; bfloat16
and float8 kept in float32, spec.dtypes) and travel as torch CUDA tensors of the
parameter's dtype (float8 as its bit patterns viewed as torch.float8_e4m3fn /
torch.float8_e5m2, so no conversion of torch's stands between the values and the kernel).
The kernel is compiled with `tilelang.compile(func, out_idx=None, target="cuda",
pass_configs=..., compile_flags=COMPILE_FLAGS)` (all parameters are inputs, written in
place), called with the tensors in TileLang's parameter order, and every parameter is
copied back. COMPILE_FLAGS is `-fmad=false`, as our own kernels are compiled: the
reference's floats round after every operation (docs/semantics.md §8), and nvcc's
default contracts `a * b + c` into one fused rounding, which a chain of multiply-adds
carries past the reference's bound (TileLang's LayerNorm backward, 2026-12-03: DGamma off
in 124 of 512 elements by up to 9.2e-5 with contraction; equal without).

Pass configs (`--tilelang-config KEY=VALUE`) reach TileLang's PassContext as they would
from Python (`{"tl.reducer_force_baseline": True}`): `prepare` checks every key against
the keys TileLang registers (TVM's `PassContext.list_configs()`, which also gives each
key's type; else TileLang's `PassConfigKey` enum) and converts each value to that type,
before the user's file is executed. The plans TileLang is most often wrong under (its
forced baseline) are only reachable this way.

Three failures, kept apart because they mean different things:
- `TileLangUnavailable`: tilelang or torch cannot be imported, or no CUDA device/nvcc.
  Nothing is wrong with the program; the CLI exits 2 (usage), as for `--backend cuda`.
- `PrimFuncNotFound`: the file ran but exposes no prim_func of that name (e.g. a factory
  that is only called under `__main__`). Also exit 2: the user must name or expose it.
- `TileLangFailed`: TileLang itself raised while building (importing the file),
  compiling or running the program. The CLI exits 3, a mismatch: the pipeline runs this
  backend only on a program our verifier accepts and our interpreter gives an answer
  for, so TileLang refusing it is a disagreement between TileLang and the oracle, just
  as a wrong value is. It is not 1 (that means *our* diagnostics reject the program), not
  2 (flags and environment are fine: unavailability is checked first), and not 4 (not
  our bug). The report carries TileLang's own message and the stage, so a refusal is
  never confused with a wrong value.
- `PassConfigError`: a `--tilelang-config` key TileLang does not register, or a value
  its type cannot take. Exit 2, naming the known keys.

tilelang and torch are imported only inside these functions, never at module import."""
from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.util
import itertools
import json
import os
import re
import shlex
import sys
import types
from dataclasses import dataclass, field

import numpy as np

from verify_reducer.spec.dtypes import DType, float8_bits, float8_from_bits
from verify_reducer.spec.ir import PrimFunc

# nvcc flags TileLang compiles with: no fused multiply-add, as our kernels (module doc)
COMPILE_FLAGS = ("-fmad=false",)


class TileLangUnavailable(RuntimeError):
    """TileLang cannot run here: tilelang or torch is missing, or no GPU/nvcc."""


class PrimFuncNotFound(LookupError):
    """The imported file exposes no prim_func by the name our frontend chose."""


class TileLangFailed(RuntimeError):
    """TileLang raised while building ("import"), compiling ("compile") or running
    ("run") the program; `detail` is TileLang's own message."""

    def __init__(self, stage: str, exc: BaseException):
        self.stage = stage
        self.detail = f"{type(exc).__name__}: {exc}".strip()
        what = ("TileLang's kernel failed at run time" if stage == "run" else
                "TileLang could not compile this program")
        super().__init__(f"{what} ({stage} stage): {self.detail}")


class PassConfigError(ValueError):
    """A --tilelang-config key TileLang does not know, or a value of the wrong type."""


@dataclass(frozen=True)
class TileLangSetup:
    """The TileLang a run uses: its version and the pass configs compile receives (each
    value converted to the key's type), plus the KEY=VALUE text they came from."""
    version: str
    pass_configs: dict[str, object] = field(default_factory=dict)
    given: dict[str, str] = field(default_factory=dict)


def prepare(given: dict[str, str] | None = None) -> TileLangSetup:
    """TileLang's version and the pass configs of `given` (KEY -> VALUE text), checked
    against the keys TileLang registers. Raises TileLangUnavailable, PassConfigError."""
    tilelang, _ = _runtime()
    given = dict(given or {})
    known = known_pass_configs(tilelang) if given else None
    return TileLangSetup(str(getattr(tilelang, "__version__", "unknown")),
                         resolve_pass_configs(given, known), given)


def run_tilelang(path: str, func: PrimFunc, inputs: dict[str, np.ndarray],
                 pass_configs: dict[str, object] | None = None) -> dict[str, np.ndarray]:
    """Every tensor parameter after TileLang's kernel ran on inputs. pass_configs are
    handed to tilelang.compile as they are (prepare() makes them)."""
    tilelang, torch = _runtime()
    missing = [p.name for p in func.params if p.name not in inputs]
    if missing:
        raise ValueError(f"no input for parameter(s) {', '.join(missing)}")
    # TileLang logs through tqdm.write, which prints to stdout: keep stdout for our own
    # report (a --json document must stay the only thing there).
    with contextlib.redirect_stdout(sys.stderr):
        try:
            module = load_program_module(path)
        except Exception as exc:          # whatever TileLang's frontend raised
            raise TileLangFailed("import", exc) from exc
        prim_func = find_prim_func(module, func.name, _prim_func_types())
        try:
            kernel = tilelang.compile(prim_func, out_idx=None, target="cuda",
                                      pass_configs=dict(pass_configs or {}) or None,
                                      compile_flags=list(COMPILE_FLAGS))
        except Exception as exc:
            raise TileLangFailed("compile", exc) from exc
        tensors = {p.name: _to_torch(torch, inputs[p.name], p) for p in func.params}
        arguments = [tensors[name] for name in _param_order(prim_func, tensors)]
        try:
            kernel(*arguments)
            torch.cuda.synchronize()
        except Exception as exc:
            raise TileLangFailed("run", exc) from exc
    return {p.name: _from_torch(torch, tensors[p.name], p.dtype) for p in func.params}


# ----------------------------------------------------------------------------- pass configs

_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


def parse_config_assignment(text: str) -> tuple[str, str]:
    """`KEY=VALUE` -> (KEY, VALUE text); ValueError for anything else. The value is
    converted later, once TileLang says the key's type."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key or any(c.isspace() for c in key):
        raise ValueError(f"expected KEY=VALUE (e.g. tl.reducer_force_baseline=true), "
                         f"got {text!r}")
    return key, value.strip()


def parse_config_value(text: str):
    """A value as a Python pass config holds it: true/false -> bool, an integer -> int,
    a decimal number -> float, `{...}`/`[...]` -> the JSON it spells (dict-valued keys
    such as tl.Simplify), anything else -> the text itself."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text and text[0] in "{[":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise PassConfigError(f"{text!r} starts like JSON but is not ({exc})") from None
    return text


def known_pass_configs(tilelang) -> dict[str, str | None] | None:
    """The pass-config keys this TileLang registers, each with its type name when TVM
    says it (None otherwise); None when TileLang cannot list them."""
    try:
        listed = importlib.import_module("tvm").transform.PassContext.list_configs()
        return {str(key): _type_name(meta) for key, meta in dict(listed).items()}
    except Exception:                      # another TVM: fall back to TileLang's enum
        pass
    try:
        enum = tilelang.transform.PassConfigKey
    except AttributeError:
        return None
    # the enum also holds sub-keys of dict configs (tl.Simplify's), which have no dot
    return {member.value: None for member in enum if "." in member.value}


def _type_name(meta) -> str | None:
    try:
        return str(meta["type"])
    except (KeyError, TypeError, IndexError):
        return None


def resolve_pass_configs(given: dict[str, str],
                         known: dict[str, str | None] | None) -> dict[str, object]:
    """given (KEY -> VALUE text) as compile's pass_configs: each key checked against
    known (skipped when None: TileLang cannot list its keys, and TVM itself refuses an
    unknown one at compile), each value converted to the key's type where it is known."""
    out = {}
    for key, text in given.items():
        if known is not None and key not in known:
            close = difflib.get_close_matches(key, list(known), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise PassConfigError(
                f"--tilelang-config: TileLang has no pass config {key!r}{hint} "
                f"(known: {', '.join(sorted(known))})")
        out[key] = _typed(key, text, (known or {}).get(key))
    return out


def _typed(key: str, text: str, type_name: str | None):
    """text converted for a key whose registered type is type_name (TVM's names: bool
    or Bool, IntImm/Integer, FloatImm, String, Array; None: by the text alone)."""
    kind = (type_name or "").lower()
    value = parse_config_value(text)

    def wrong(expected: str):
        return PassConfigError(f"--tilelang-config {key}={text}: {key} takes {expected} "
                               f"(TileLang registers it as {type_name})")
    if "bool" in kind:
        if isinstance(value, bool):
            return value
        if value in (0, 1) and isinstance(value, int):
            return bool(value)
        raise wrong("true or false")
    if "int" in kind and "float" not in kind:
        if isinstance(value, bool):
            # TileLang 0.1.15 registers on/off switches such as tl.reducer_force_baseline
            # as IntImm: true/false mean 1/0 there
            return int(value)
        if isinstance(value, int):
            return value
        raise wrong("an integer")
    if "float" in kind:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise wrong("a number")
    if "array" in kind:
        return value if isinstance(value, list) else shlex.split(text)
    if "string" in kind:
        return text
    return value


# ----------------------------------------------------------------------------- the file

_module_numbers = itertools.count()


def load_program_module(path: str) -> types.ModuleType:
    """Execute the file at path as a fresh module and return it. The module is in
    `sys.modules` only while it runs (dataclasses and typing look their module up
    there) and under a private name no other import can collide with; no .pyc is
    written beside the user's file."""
    path = os.path.abspath(path)
    name = f"_verify_reducer_tilelang_program_{next(_module_numbers)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not loadable as a Python module")
    module = importlib.util.module_from_spec(spec)
    saved_flag = sys.dont_write_bytecode
    sys.modules[name] = module
    sys.dont_write_bytecode = True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved_flag
        sys.modules.pop(name, None)
    return module


def find_prim_func(module: types.ModuleType, name: str, prim_func_types: tuple[type, ...]):
    """The module's prim_func called name: the attribute of that name, else the one
    module-level prim_func whose global symbol is name (a factory's result bound to
    another name). Strict on purpose: running a different kernel than the one our
    frontend analysed would report a mismatch that is not there."""
    found = {attr: value for attr, value in vars(module).items()
             if isinstance(value, prim_func_types)}
    if name in found:
        return found[name]
    by_symbol = [value for value in found.values() if _global_symbol(value) == name]
    if len(by_symbol) == 1:
        return by_symbol[0]
    listed = ", ".join(f"{attr} (symbol {_global_symbol(v)})" for attr, v in found.items())
    raise PrimFuncNotFound(
        f"after importing the file, no module-level prim_func is named {name!r} "
        f"(found: {listed or 'none'}); a factory must be called at module level, "
        f"e.g. `{name} = make_kernel(...)`")


def _global_symbol(prim_func) -> str | None:
    attrs = getattr(prim_func, "attrs", None)
    try:
        return str(attrs["global_symbol"]) if attrs is not None else None
    except (KeyError, TypeError, AttributeError):
        return None


def _param_order(prim_func, tensors: dict[str, object]) -> list[str]:
    """Parameter names in TileLang's order (its buffers carry the signature's names),
    checked against ours so a kernel is never called with its arguments shuffled."""
    names = [prim_func.buffer_map[var].name for var in prim_func.params
             if var in prim_func.buffer_map]
    if sorted(names) != sorted(tensors):
        raise PrimFuncNotFound(f"the prim_func TileLang built takes {names}, not the "
                               f"parameters our frontend read ({sorted(tensors)})")
    return names


# ----------------------------------------------------------------------------- runtime

def unavailable_reason() -> str | None:
    """Why TileLang cannot run here, or None when it can (imports tilelang when present)."""
    try:
        _runtime()
    except TileLangUnavailable as exc:
        return str(exc)
    return None


def _runtime():
    """(tilelang, torch), or TileLangUnavailable saying what is missing."""
    if importlib.util.find_spec("tilelang") is None:
        raise TileLangUnavailable("TileLang is not installed (pip install tilelang, on a "
                                  "machine with a CUDA GPU)")
    try:
        import torch
    except ImportError as exc:
        raise TileLangUnavailable(f"TileLang needs torch, which cannot be imported "
                                  f"({exc})") from exc
    if not torch.cuda.is_available():
        raise TileLangUnavailable("no CUDA device is available to torch")
    try:
        with contextlib.redirect_stdout(sys.stderr):
            import tilelang
    except Exception as exc:              # a broken install: a missing dependency, a .so
        raise TileLangUnavailable(f"tilelang is installed but cannot be imported "
                                  f"({type(exc).__name__}: {exc})") from exc
    _require_nvcc(tilelang)
    return tilelang, torch


def _require_nvcc(tilelang) -> None:
    """TileLang compiles CUDA with nvcc; without it every program would look 'refused'
    (exit 3) when the machine is what is missing something (exit 2)."""
    try:
        nvcc = importlib.import_module("tilelang.contrib.nvcc").get_nvcc_compiler()
    except AttributeError:                # another TileLang version: let compile decide
        return
    except Exception as exc:
        raise TileLangUnavailable(f"TileLang finds no CUDA toolkit ({exc})") from exc
    if not os.path.isfile(nvcc):
        raise TileLangUnavailable(f"TileLang's nvcc ({nvcc}) does not exist; "
                                  f"set CUDA_HOME to the CUDA toolkit")


def _prim_func_types() -> tuple[type, ...]:
    """TVM's PrimFunc class: `tvm.tirx.PrimFunc` in TileLang 0.1.15's TVM, `tvm.tir`
    in older ones. TileLang puts its bundled TVM on the path when imported."""
    found = []
    for module_name in ("tvm.tirx", "tvm.tir"):
        try:
            found.append(importlib.import_module(module_name).PrimFunc)
        except (ImportError, AttributeError):
            continue
    if not found:
        raise TileLangUnavailable("TileLang's TVM has no PrimFunc class (tvm.tirx/tvm.tir)")
    return tuple(found)


def _to_torch(torch, value: np.ndarray, param):
    dtype = param.dtype
    host = np.ascontiguousarray(dtype.quantize(np.asarray(value).reshape(param.shape)),
                                dtype=dtype.np)
    if dtype.is_float8:
        bits = torch.from_numpy(np.ascontiguousarray(float8_bits(host, dtype)))
        return bits.view(getattr(torch, dtype.name)).to("cuda")
    tensor = torch.from_numpy(host)
    if dtype.name == "bfloat16":
        tensor = tensor.to(torch.bfloat16)   # exact: quantize put it on the bf16 grid
    return tensor.to("cuda")


def _from_torch(torch, tensor, dtype: DType) -> np.ndarray:
    host = tensor.cpu()
    if dtype.is_float8:
        return float8_from_bits(host.view(torch.uint8).numpy(), dtype)
    if dtype.name == "bfloat16":
        host = host.to(torch.float32)        # our bfloat16 storage (exact widening)
    return host.numpy().astype(dtype.np, copy=False)
