"""Compile a rendered plan with PyCUDA and run it on the GPU.

    outputs = run_cuda(plan, inputs)   # every tensor parameter, after the kernel

Inputs are keyed by parameter name (numpy arrays of the parameter's shape, in the
dtype's numpy storage); every parameter is copied to the device, the kernel is launched
with the plan's grid and threads, and every parameter is copied back. bfloat16 values
(kept in float32 arrays on the host, spec.dtypes) travel as their upper 16 bits, float8
values as their one-byte bit patterns (ml_dtypes encodes and decodes them exactly: they
are on the float8 grid already).

A kernel whose shared memory is dynamic (over the static 48 KB, codegen.resources) is
allowed that much with the MAX_DYNAMIC_SHARED_SIZE_BYTES attribute and launched with it
(`launch_arguments`); a plan over a hard limit of the target (R506) is refused with its
diagnostics before anything is compiled.

Modules are compiled for the device's own architecture (sm_90 on an H200) with
`-fmad=false`, whatever target the plan was made for: a plan for an older target
(`--arch sm_80` on an H200) runs as its lowering says (no vector float atomics, say),
and one the device cannot run (a newer target's features or shared memory) is refused
before anything is compiled (`device_target` is the device's own, which `run --backend
cuda` plans for when no --arch is given). Modules are cached by source hash (the last
MODULES_KEPT of them). Everything runs in device 0's primary context
(pycuda.autoprimaryctx), pushed for each call and popped after it: the CUDA runtime,
torch and TileLang use that context too, and a function loaded in a context of pycuda's
own (pycuda.autoinit's) was an invalid resource handle once TileLang had made the
primary one current in the same process. pycuda is imported only here and only when
needed: without it, or without a device, `CudaUnavailable` says which."""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np

from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.dtypes import DType, float8_bits, float8_from_bits
from verify_reducer.spec.physical import PhysicalPlan
from verify_reducer.spec.target import target as target_named, target_for_capability
from .cuda import NVCC_OPTIONS, CudaSource, compile_arch, render


class CudaUnavailable(RuntimeError):
    """No way to run CUDA here: pycuda is missing, or no device answers."""


MODULES_KEPT = 64
_modules: OrderedDict[str, object] = OrderedDict()


def run_cuda(plan: PhysicalPlan, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    _refuse_over_limits(plan)
    with on_device() as driver:
        return _run(plan, inputs, driver)


def _run(plan: PhysicalPlan, inputs: dict[str, np.ndarray], driver) -> dict[str, np.ndarray]:
    _refuse_other_device(plan, driver)
    source = render(plan)
    kernel = _module(source, driver).get_function(source.kernel_name)
    launch = launch_arguments(source, kernel, driver)
    params = plan.func.params
    missing = [p.name for p in params if p.name not in inputs]
    if missing:
        raise ValueError(f"no input for parameter(s) {', '.join(missing)}")
    host = [_to_device_layout(np.asarray(inputs[p.name]).reshape(p.shape), p.dtype)
            for p in params]
    device = [driver.to_device(h) for h in host]
    kernel(*device, **launch)
    driver.Context.synchronize()
    outputs = {}
    for p, d, h in zip(params, device, host):
        outputs[p.name] = _from_device_layout(driver.from_device_like(d, h), p.dtype)
        d.free()
    return outputs


BATCHES = 5


def time_cuda(plan: PhysicalPlan, inputs: dict[str, np.ndarray], repeat: int = 50) -> float:
    """Kernel time in microseconds by `time_launches`, the inputs staying on the
    device."""
    _refuse_over_limits(plan)
    with on_device() as driver:
        return _time(plan, inputs, repeat, driver)


def _time(plan: PhysicalPlan, inputs: dict[str, np.ndarray], repeat: int, driver) -> float:
    _refuse_other_device(plan, driver)
    source = render(plan)
    kernel = _module(source, driver).get_function(source.kernel_name)
    launch = launch_arguments(source, kernel, driver)
    device = [driver.to_device(_to_device_layout(np.asarray(inputs[p.name]).reshape(p.shape),
                                                 p.dtype)) for p in plan.func.params]

    def events():
        start, stop = driver.Event(), driver.Event()
        return start, stop, lambda: stop.time_since(start)
    took = time_launches(lambda: kernel(*device, **launch), events,
                         driver.Context.synchronize, repeat)
    for d in device:
        d.free()
    return took


def time_launches(launch, events, synchronize, repeat: int) -> float:
    """µs of one launch(): after one warm-up, `repeat` launches in BATCHES back-to-back
    batches, each between two events; the median of the batch averages. Back to back,
    the launches queue up on the stream, so the host's launch cost (tens of µs through
    pycuda) is not in the time, as it would be with events around each launch.
    events() gives (start, stop, milliseconds between them) of the caller's runtime
    (pycuda here, torch in benchmarks/gemv_same_source.py)."""
    launch()
    synchronize()
    per_batch = max(1, repeat // BATCHES)
    times = []
    for _ in range(BATCHES):
        start, stop, elapsed_ms = events()
        start.record()
        for _ in range(per_batch):
            launch()
        stop.record()
        stop.synchronize()
        times.append(elapsed_ms() * 1000.0 / per_batch)
    return float(np.median(times))


def launch_arguments(source: CudaSource, kernel, driver) -> dict:
    """The keyword arguments of every launch of kernel: grid, block and the dynamic shared
    bytes, which the kernel is first allowed to use (the driver refuses a launch over
    48 KB without the attribute). Where the plan caps the blocks per SM by padding those
    bytes, the kernel also prefers the largest shared memory carveout, so that the capped
    number of blocks fits (where the driver knows the attribute: it is a preference)."""
    shared = source.dynamic_shared_bytes
    attributes = driver.function_attribute
    if shared:
        kernel.set_attribute(attributes.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
    carveout = getattr(attributes, "PREFERRED_SHARED_MEMORY_CARVEOUT", None)
    if source.carveout is not None and carveout is not None:
        kernel.set_attribute(carveout, source.carveout)
    return {"grid": source.grid, "block": source.block, "shared": shared}


def _refuse_over_limits(plan: PhysicalPlan) -> None:
    over = [d for d in plan.notes if d.is_error]
    if over:
        raise DiagnosticError(over)


def _driver():
    """pycuda.driver with device 0's primary context retained, or CudaUnavailable."""
    try:
        import pycuda.driver as driver
    except ImportError as exc:
        raise CudaUnavailable(f"the CUDA backend needs pycuda, which is not installed "
                              f"({exc})") from exc
    try:
        import pycuda.autoprimaryctx  # noqa: F401  (retains it, pops it at exit)
    except Exception as exc:                      # pycuda raises its own driver errors
        raise CudaUnavailable(f"no CUDA device is available: {exc}") from exc
    return driver


@contextmanager
def on_device():
    """pycuda.driver, with the primary context current until the block ends (then
    whatever was current before is again: another library's context is left alone)."""
    driver = _driver()
    import pycuda.autoprimaryctx
    pycuda.autoprimaryctx.context.push()
    try:
        yield driver
    finally:
        driver.Context.pop()


def architecture(driver) -> str:
    major, minor = driver.Context.get_device().compute_capability()
    return f"sm_{major}{minor}"


def device_target() -> str:
    """The spec.target name of device 0: what a run plans for when no --arch is given.
    CudaUnavailable without a device, or for one whose compute capability no target
    describes (then --arch names the closest one the user trusts)."""
    with on_device() as driver:
        major, minor = driver.Context.get_device().compute_capability()
    try:
        return target_for_capability(major, minor)
    except ValueError as exc:
        raise CudaUnavailable(f"{exc}; give --arch") from None


# the features a lowering chooses its CUDA by (fp8 conversions do not change the source:
# cuda_fp8.hpp picks hardware or software by the architecture it is compiled for)
_FEATURES = ("async_copy", "vector_float_atomics", "fp8_mma")


def _refuse_other_device(plan: PhysicalPlan, driver) -> None:
    """CudaUnavailable when the plan's target asks for what the device lacks: a feature
    the lowering may have used, or more shared memory per block than it has."""
    wanted = target_named(plan.resources.target)
    major, minor = driver.Context.get_device().compute_capability()
    try:
        device = target_named(target_for_capability(major, minor))
    except ValueError:
        return          # a device newer than the table: nvcc and the driver decide
    missing = [f for f in _FEATURES if getattr(wanted, f) and not getattr(device, f)]
    if plan.swizzles and not device.wgmma:        # its gemms issue wgmma (sm_90a only)
        missing.append("wgmma")
    if wanted.dynamic_shared_bytes > device.dynamic_shared_bytes:
        missing.append(f"{wanted.dynamic_shared_bytes} bytes of shared memory per block")
    if missing:
        raise CudaUnavailable(f"the plan is for {wanted.name} and the device is "
                              f"{device.name}, which lacks {', '.join(missing)}; plan "
                              f"for it (--arch {device.name}, or no --arch)")


def _module(source: CudaSource, driver):
    from pycuda.compiler import SourceModule
    text = source.translation_unit()
    arch = compile_arch(architecture(driver), text)
    key = hashlib.sha256(f"{arch}\0{' '.join(NVCC_OPTIONS)}\0{text}".encode()).hexdigest()
    if key in _modules:
        _modules.move_to_end(key)
    else:
        _modules[key] = SourceModule(text, arch=arch, options=list(NVCC_OPTIONS),
                                     no_extern_c=True)
        while len(_modules) > MODULES_KEPT:
            _modules.popitem(last=False)
    return _modules[key]


def _to_device_layout(values: np.ndarray, dtype: DType) -> np.ndarray:
    values = dtype.quantize(values)
    if dtype.name == "bfloat16":
        bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
        return (bits >> np.uint32(16)).astype(np.uint16)
    if dtype.is_float8:
        return np.ascontiguousarray(float8_bits(values, dtype))
    return np.ascontiguousarray(values, dtype=dtype.np)


def _from_device_layout(values: np.ndarray, dtype: DType) -> np.ndarray:
    if dtype.name == "bfloat16":
        return (values.astype(np.uint32) << np.uint32(16)).view(np.float32)
    if dtype.is_float8:
        return float8_from_bits(values, dtype)
    return values
