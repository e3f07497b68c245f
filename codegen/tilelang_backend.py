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
kept in float32, spec.dtypes) and travel as torch CUDA tensors of the parameter's dtype.
The kernel is compiled with `tilelang.compile(func, out_idx=None, target="cuda")` (all
parameters are inputs, written in place), called with the tensors in TileLang's
parameter order, and every parameter is copied back.

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

tilelang and torch are imported only inside these functions, never at module import."""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import itertools
import os
import sys
import types

import numpy as np

from spec.dtypes import DType
from spec.ir import PrimFunc


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


def run_tilelang(path: str, func: PrimFunc, inputs: dict[str, np.ndarray]
                 ) -> dict[str, np.ndarray]:
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
            kernel = tilelang.compile(prim_func, out_idx=None, target="cuda")
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
    tensor = torch.from_numpy(host)
    if dtype.name == "bfloat16":
        tensor = tensor.to(torch.bfloat16)   # exact: quantize put it on the bf16 grid
    return tensor.to("cuda")


def _from_torch(torch, tensor, dtype: DType) -> np.ndarray:
    host = tensor.cpu()
    if dtype.name == "bfloat16":
        host = host.to(torch.float32)        # our bfloat16 storage (exact widening)
    return host.numpy().astype(dtype.np, copy=False)
