"""Eager mode: an op on concrete arrays compiles once per (op, params, avals) and runs."""
from __future__ import annotations

import inspect
import logging
import os
import sys

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from mjax.tracing.abstract_eval import infer_avals
from mjax.arrays.array import Array
from mjax.config import config
from mjax.dialect import context, tensor_type
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import is_inexact
from mjax.arrays.dispatch import execute
from mjax.specs.dtypes import aval_of_value
from mjax.base.errors import UnexpectedTracerError
from mjax.tracing.lowering import (compile_printed, finishing_passes, lowering_platform_option,
                                   module_name)
from mjax.passes import run_pipeline
from mjax.passes.interpreter import Env, interpret
from mjax.passes.ir_util import main_function
from mjax.passes.pipeline import print_for_backend
from mjax.arrays.placement import (_devices_of, commit, committed_device, default_device,  # noqa: F401
                                   device_buffer, on_device)
from mjax.tracing.registration import APPLY_SHARDED
from mjax.specs.sharding_impls import NamedSharding, computation_mesh
from mjax.runtime import get_backend
from mjax.runtime.backend import backend_of_device, lowering_for
from mjax.arrays.sharding_types import check_explicit_op
from mjax.tracing.source_info import describe_location, in_mjax
from mjax.tracing.tracer import Tracer, escaped_tracer_message
from mjax.base.traceback_util import api_boundary

_CACHE: dict = {}
_CACHE_SIZE = 4096      # eager programs kept (op, avals, parameters); then all dropped
CLEAR_HOOKS: list = []   # called by clear_cache (eager_fast's C memos)


def clear_cache() -> None:
    """Drops the compiled programs of eager ops (jax.clear_caches)."""
    _CACHE.clear()
    for hook in CLEAR_HOOKS:
        hook()


def hashable(value):
    """A hashable stand-in for an op parameter (dicts, arrays, nested tuples)."""
    if isinstance(value, dict):
        return tuple(sorted((k, hashable(v)) for k, v in value.items()))
    if isinstance(value, (tuple, list)):
        return tuple(hashable(v) for v in value)
    if isinstance(value, np.ndarray):
        return (value.shape, str(value.dtype), value.tobytes())
    return value


def _reject_tracer(x):
    """A tracer reaching eager mode outlived its trace (a leaked tracer)."""
    if isinstance(x, Tracer):
        raise UnexpectedTracerError(escaped_tracer_message(x))


def _compile_single_op(opcls, avals, params, out_avals, device=None):
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.create()
        # (named as JAX names an eager op's jit: IR dumps and logs show it)
        module.operation.attributes["sym_name"] = ir.StringAttr.get(
            module_name(opcls.jax_name))
        with ir.InsertionPoint(module.body):
            types = [tensor_type(a) for a in avals]
            f = func.FuncOp("main", (types, [tensor_type(a) for a in out_avals]))
            block = f.add_entry_block()
            op = opcls.create(list(block.arguments), out_avals, params,
                              ip=ir.InsertionPoint(block))
            func.ReturnOp(list(op.results), ip=ir.InsertionPoint(block))
    level = logging.WARNING if config.read("jax_log_compiles") else logging.DEBUG
    # (One logger for every compilation, jit or eager op: as JAX's log_compiles.)
    logging.getLogger("mjax.api").log(
        level, "Compiling jit(%s) with global shapes and types %s.", opcls.primitive,
        tuple(avals))
    # (a default device of another platform than the default backend's, the host CPU
    # beside a TPU: compiled by that device's backend and lowered for its platform, or
    # its client would run another client's program)
    backend = get_backend() if device is None else backend_of_device(device)
    with ctx, ir.Location.unknown(ctx), lowering_for(getattr(device, "platform", None)):
        # (one op: nothing to clean up; as jit, refusing what XLA's CPU would ignore)
        run_pipeline(module, [("jaxpr-to-stablehlo", lowering_platform_option())])
        printed = print_for_backend(module, finishing_passes(backend))
    return compile_printed(printed, backend, None if device is None else [device],
                           out_avals=out_avals)


def apply_eager(opcls, args, avals, params, weak=None):
    """Runs one op on concrete values. The cache key is taken before checking params and
    inferring types, so a repeated op costs one dict lookup plus the XLA call."""
    # (Most ops on the hot path have no params: skip hashable's dict walk for them.)
    key = (opcls, hashable(params) if params else (), weak, *avals)
    # Config reads straight from the process-wide values unless some thread overrides.
    overridden = config._overriding
    if overridden and (mesh := computation_mesh()) is not None:
        # (a mesh context: compiled for it, where the committed operands must be)
        committed_device(args, _eager_describer(opcls, args), mesh)
        return APPLY_SHARDED(opcls, args, params)
    dev = _read("jax_default_device") if overridden else _VALUES["jax_default_device"]
    if dev is not None:
        key += (dev,)
    hit = _CACHE.get(key)
    if hit is None:
        if len(_CACHE) >= _CACHE_SIZE:   # (each executable holds memory maps: bounded)
            clear_cache()
        hit = _CACHE[key] = _compile_entry(opcls, args, avals, params, weak, dev)
    exe, out_avals = hit.executable, hit.out_avals
    # Arrays on their one default device (no sharding object yet): their buffers as they
    # are. Anything else (NumPy values, sharded arrays, committed arrays) takes the
    # general path.
    bufs = []
    for x in args:
        if type(x) is not Array or x._sharding is not None:
            placed = _placed(opcls, args, out_avals, params, dev)
            if placed is not None:
                if placed is not _SHARDED:      # (run there, results committed)
                    with config.override(jax_default_device=placed):
                        return commit(apply_eager(opcls, args, avals, params, weak))
                check_explicit_op(opcls, args, out_avals, params)
                return APPLY_SHARDED(opcls, args, params)
            bufs = [x._buf if type(x) is Array else device_buffer(x, a)
                    for x, a in zip(args, avals)]
            match = getattr(exe, "match_layouts", None)   # (arrays in other layouts:
            if match is not None:                         # copied into the default one)
                bufs = match(bufs)
            break
        bufs.append(x._buf)
    if dev is not None:
        bufs = on_device(bufs, exe.devices[0])
    if _read("jax_no_execution") if overridden else _VALUES["jax_no_execution"]:
        raise RuntimeError(f"JAX tried to execute function {opcls.OPERATION_NAME}, but "
                           f"the no_execution config option is set")
    # (an op on a deleted or donated array: the Array's RuntimeError, as JAX's eager ops
    # raise, not Execute()'s ValueError)
    outs = execute(exe, bufs, out_avals, args, hit.run, hit.handlers, True)
    if (_read("jax_debug_nans") or _read("jax_debug_infs")) if overridden else (
            _VALUES["jax_debug_nans"] or _VALUES["jax_debug_infs"]):
        _check_nonfinite(opcls, outs)
    return outs


_SHARDED = object()


def _placed(opcls, args, out_avals, params, dev):
    """Where an op whose operands are not all plain uncommitted Arrays runs, by JAX's
    rules: _SHARDED (compiled as a jit for their mesh: operands over several devices,
    or on a mesh of one device, whose results keep a NamedSharding of it), the device
    its committed operands are on, or None (the default device). Operands committed to
    different devices are JAX's ValueError."""
    committed = named = False
    for x in args:
        if type(x) is Array and x._sharding is not None:
            if x._sharding.num_devices > 1 or type(x._sharding) is NamedSharding or \
                    x._sharding.memory_kind != "device":   # (host memory: as a jit)
                named = True
            committed = committed or getattr(x, "_committed", False)
    if not (committed or named):
        return None
    device = committed_device(args, _eager_describer(opcls, args))
    if named:
        return _SHARDED
    return device if dev is None else None


def _eager_describer(opcls, args):
    """How the devices error names operand k, as JAX's jit of the jnp function would:
    its parameter name when the innermost jnp/nn/scipy function holds the operand
    ("x of add"), else "args[k] of <primitive>"."""
    def describe(k):
        for f in _frames_of_jax_jits(sys._getframe(1)):
            for name, value in f.f_locals.items():
                if value is args[k]:
                    return f"{name} of {opcls.jax_name}"
        return f"args[{k}] of {opcls.jax_name}"
    return describe


_read = config.read
_VALUES = config._values   # option -> process-wide value (config.read, minus overrides)


class EagerEntry:
    """One op's compiled program in apply_eager's cache: the executable, the result avals
    (a list), and its direct call (`run`, `handlers`: Executable.direct_call's, or None).
    Set once; runtime/_eagerpath.c reads these named fields through their slots."""
    __slots__ = ("executable", "out_avals", "run", "handlers")

    def __init__(self, executable, out_avals, run=None, handlers=None):
        self.executable, self.out_avals = executable, out_avals
        self.run, self.handlers = run, handlers


def _compile_entry(opcls, args, avals, params, weak, dev) -> EagerEntry:
    """The EagerEntry of one op on avals: checks the operands and params, infers result
    types (errors name the user's line) and compiles."""
    for x in args:
        _reject_tracer(x)
    checked, out_avals = infer_avals(opcls, avals, params, weak)
    strong_in = [a.strip_weak_type() for a in avals]
    exe = _compile_single_op(opcls, strong_in, checked,
                             [a.strip_weak_type() for a in out_avals],
                             None if dev is None else default_device())
    direct = getattr(exe, "direct_call", None)
    direct = direct() if direct is not None else None
    return EagerEntry(exe, out_avals, *(direct or ()))


def nonfinite_kind(x) -> str | None:
    """'nan' or 'inf' when x holds one that jax_debug_nans / jax_debug_infs asks about."""
    dtype = getattr(getattr(x, "aval", None), "dtype", None)
    if dtype is None or not is_inexact(dtype) or not getattr(x, "size", 1):
        return None
    value = np.asarray(x)
    if config.read("jax_debug_nans") and np.isnan(value).any():
        return "nan"
    if config.read("jax_debug_infs") and np.isinf(value).any():
        return "inf"
    return None


# What JAX prints when a jit's output has an invalid value, before running the function
# again without jit to find the primitive (JAX's words, which say nan for infs too).
DEOPTIMIZED = ("Invalid nan value encountered in the output of a jax.jit function. "
               "Calling the de-optimized version.")
# Functions of these packages are jits in JAX (jnp's ufuncs, jax.nn, jax.scipy): an
# invalid value made inside one is announced as a jit's is.
_JITS_IN_JAX = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) + os.sep
                     for d in ("numpy", "nn", "scipy"))


def _check_nonfinite(opcls, outs):
    """JAX's debug_nans error (its traceback shows the user's line)."""
    for out in outs:
        kind = nonfinite_kind(out)
        if kind is not None:
            if _inside_jax_jit():
                print(DEOPTIMIZED)
            _raise_at_boundary(FloatingPointError(f"invalid value ({kind}) encountered in "
                                                  f"{opcls.jax_name}"))


@api_boundary
def _raise_at_boundary(error):
    """JAX runs an eager primitive as a jit of its own: an error of the run (debug_nans')
    gets the note of a filtered traceback even when no jnp function or API around it
    filters one (those filter it, from the outermost)."""
    raise error


class rerun_announced:
    """Around a jit's de-optimized re-run of `fun`: when fun is one of mjax's own (a jnp
    function that mjax compiles as a jit, as JAX does), the jit has announced itself, so
    the eager ops it re-runs do not again."""

    def __init__(self, fun):
        code = getattr(inspect.unwrap(fun), "__code__", None)
        self.own = code is not None and code.co_filename.startswith(_JITS_IN_JAX)

    def __enter__(self):
        _QUIET[0] += self.own

    def __exit__(self, *exc):
        _QUIET[0] -= self.own


_QUIET = [0]


def _inside_jax_jit() -> bool:
    """Whether an eager op runs inside a function that JAX's jit wraps (_JITS_IN_JAX)
    that has not announced itself already (with jit disabled, none does)."""
    if _QUIET[0] or config.read("jax_disable_jit"):
        return False
    return next(_frames_of_jax_jits(sys._getframe(2)), None) is not None


def _frames_of_jax_jits(f):
    """The frames of functions that JAX's jit wraps (_JITS_IN_JAX) among mjax's frames
    from `f` outwards, innermost first."""
    while f is not None and in_mjax(f.f_code.co_filename):
        if f.f_code.co_filename.startswith(_JITS_IN_JAX):
            yield f
        f = f.f_back


def locate_nonfinite(module, inputs) -> None:
    """debug_nans/infs for functions that cannot be re-run op by op in Python (grad, vmap):
    runs @main of their traced module op by op instead (passes/interpreter.py's walk, each
    op run eagerly), once its transformations are expanded and calls inlined, and raises
    FloatingPointError at the first op with a NaN/inf output, naming its primitive and
    the user's line. Returns quietly when it meets an op that cannot run alone (control
    flow with regions)."""
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        run_pipeline(module, [(p, "") for p in ("jaxpr-expand-transforms", "jaxpr-inline",
                                                "jaxpr-dce")])
        block = main_function(module).regions[0].blocks[0]
        try:
            interpret(block, _checked_eager_rule, Env(zip(block.arguments, inputs)))
        except _CannotRunAlone:
            return


class _CannotRunAlone(Exception):
    """An op of a staged function that eager mode cannot run on its own."""


def _checked_eager_rule(op):
    """The interpreter's rule for `op`: run it eagerly, then look for NaN/inf."""
    view = op.opview
    if not isinstance(view, JaxprOp) or len(op.regions):
        raise _CannotRunAlone

    def run(op, args):
        with config.override(jax_debug_nans=False, jax_debug_infs=False):
            outs = apply_eager(type(view), args, [aval_of_value(a) for a in args],
                               dict(view.params))
        for out in outs:
            kind = nonfinite_kind(out)
            if kind is not None:
                raise FloatingPointError(
                    f"invalid value ({kind}) encountered in {view.primitive} (at "
                    f"{describe_location(op.location)})")
        return outs
    return run
