"""`pl.pallas_call`: traces a kernel over refs into a private function and calls it
over a grid with `jaxpr.pallas_call` (dialect/ops/pallas.py).

The kernel becomes `func.func private @<name>(refs: inputs, outputs, scratch)`; each
BlockSpec's index map becomes `func.func private @<name>_in<i>_index_map(grid indices)
-> block indices`. Outside a trace the call runs as a jit of itself. JAX:
pallas/pallas_call.py.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import itertools

import numpy as np
from jaxlib.mlir import ir

from mjax import lax
from mjax.specs import dtypes
from mjax import numpy as jnp
from mjax.base import trace_trees, tree_util
from mjax.config import config, pallas_tpu_interpret_mode as tpu_interpret_mode
from mjax.tracing.axis_env import AXIS_ENV
from mjax.tracing.core import Trace, Tracer, aval_of_value, current_trace, user_location
from mjax.dialect import Builder, context
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops.pallas import (COST_FIELDS, DYNAMIC, MEMORY_SPACES, SQUEEZED,
                                     block_ref_shape, emit_pallas_call)
from mjax.dialect.ops.random import KEY_SHAPES
from mjax.dialect.types import RefAval, ShapedArray
from mjax.arrays.host_callbacks import register
from mjax.base.errors import ConcretizationTypeError
from mjax.jit.jitted import jit
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.experimental.pallas.core import (Blocked, BlockSpec, BoundedSlice, CostEstimate,
                                           Element, GridSpec, Squeezed, memory_space_name,
                                           dynamic_shapes_export_enabled, no_block_spec)
from mjax.experimental.pallas.keys import KeyRef, key_block_spec
from mjax.experimental.pallas import lockstep  # noqa: F401  (registers the wait check)
from mjax.experimental.pallas import interpret_bounds  # noqa: F401  (the bounds check)
from mjax.experimental.pallas.interpret_revisits import check_revisits
from mjax.experimental.pallas.primitives import KernelContext, program_id
from mjax.lax.prng import PRNGKeyArray
from mjax.experimental.pallas.ref import Ref
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct

# (JAX's error for an out_shape that does not say its varying axes under check_vma)
_NO_MANUAL_AXIS_TYPE = (
    "When `check_vma=True` on `jax.shard_map`, `manual_axis_type` on "
    "`jax.ShapeDtypeStruct` must not be `None`. Please specify how the output should be "
    "varying across mesh axes using the `manual_axis_type` argument of "
    "`jax.ShapeDtypeStruct` or set `check_vma=False` on `jax.shard_map`.")


def _is_spec_leaf(x) -> bool:
    return x is no_block_spec or isinstance(x, BlockSpec)


def _flat_specs(specs, n: int, what: str, tree_desc: str) -> list:
    if specs is no_block_spec or specs is None:
        return [None] * n
    if isinstance(specs, BlockSpec):
        specs = [specs]
    # A None entry is an empty subtree, as in JAX (it stands for a None argument); where
    # the counts then differ, a None entry standing for an array means the whole array.
    leaves = trace_trees.tree_leaves(specs, is_leaf=_is_spec_leaf)
    if len(leaves) != n:
        leaves = trace_trees.tree_leaves(
            specs, is_leaf=lambda x: x is None or _is_spec_leaf(x))
    if len(leaves) != n:
        raise ValueError(f"Pytree for `{what}` and {tree_desc} do not match: {len(leaves)} "
                         f"block spec(s) for {n} array(s).")
    return [None if s is no_block_spec else s for s in leaves]


def _check_spec_tree(specs, tree, what: str, tree_desc: str) -> None:
    """JAX's check that the block specs have the structure of what they describe (a
    ValueError); a None spec standing for a whole array is let through, as mjax's
    _flat_specs reads it."""
    if specs is no_block_spec or specs is None or isinstance(specs, BlockSpec):
        return
    specs = tuple(specs) if isinstance(specs, list) else specs
    for is_leaf in (_is_spec_leaf, lambda x: x is None or _is_spec_leaf(x)):
        if trace_trees.tree_structure(specs, is_leaf=is_leaf) == tree:
            return
    got = trace_trees.tree_structure(specs, is_leaf=_is_spec_leaf)
    raise ValueError(f"Pytree for `{what}` and `{tree_desc}` do not match: `{what}` is "
                     f"{got} but `{tree_desc}` is {tree}")


def _normalize_grid(grid) -> tuple:
    """The grid as ints, with traced integer scalars (dynamic dimensions, whose bounds
    become operands of jaxpr.pallas_call) kept as they are."""
    if isinstance(grid, (int, np.integer)) or hasattr(grid, "aval"):
        grid = (grid,)
    grid = tuple(grid)
    out = []
    for g in grid:
        if isinstance(g, (int, np.integer)):
            if g < 0:
                raise ValueError(f"pallas_call grid {grid} has a negative dimension")
            out.append(int(g))
            continue
        aval = getattr(g, "aval", None)
        if aval is None or aval.shape != () or np.dtype(aval.dtype).kind not in "iu":
            raise TypeError(f"pallas_call grid dimensions must be integers (or traced "
                            f"integer scalars), got {g!r}")
        if not isinstance(g, Tracer):          # (a concrete array: its value)
            out.append(int(np.asarray(g)))
            continue
        out.append(g)
    return tuple(out)


def _split_grid(grid) -> tuple[tuple[int, ...], list]:
    """(the IR grid with DYNAMIC for traced dimensions, their bounds as i32 values)."""
    static, bounds = [], []
    for g in grid:
        if isinstance(g, int):
            static.append(g)
        else:
            static.append(DYNAMIC)
            bounds.append(g if np.dtype(g.aval.dtype) == np.int32
                          else lax.convert_element_type(g, np.int32))
    return tuple(static), bounds


def _check_tpu_interpret_grid(grid, compiler_params: dict) -> None:
    """What JAX's TPU interpreter requires of a grid: its `parallel` dimensions first
    (it spreads them over cores and visits them in a random order) and static."""
    sems = tuple(compiler_params.get("dimension_semantics") or ())
    parallel = [s == "parallel" for s in sems]
    if any(p and not q for q, p in zip(parallel, parallel[1:])):
        raise ValueError("Dimensions with parallel semantics must form a prefix of the grid.")
    for g, p in zip(grid, parallel):
        if p and isinstance(g, Tracer):
            raise ConcretizationTypeError(g, "a parallel grid dimension of a pallas_call in "
                                             "TPU interpret mode must be static")


def _recorder_id(recorder) -> int:
    """The host callback calling pltpu.InterpretParams' grid_point_recorder(token, grid
    point, core id) at each grid point (the token is not threaded: mjax orders the
    callbacks itself)."""
    def flat(point, core):
        recorder(np.int32(0), np.asarray(point), np.asarray(core))
        return ()
    return register(flat, "io_callback", key=("pallas_grid_point_recorder", recorder))


def _element_padding(spec) -> tuple[int, ...] | None:
    """The IR element_padding of a BlockSpec (None when it has no pl.Element dim)."""
    if spec is None or spec.block_shape is None:
        return None
    dims = tuple(spec.block_shape)
    if not any(isinstance(b, Element) for b in dims):
        return None
    return tuple(x for b in dims for x in (tuple(int(p) for p in b.padding)
                                             if isinstance(b, Element) else (-1, -1)))


def _block_shape(spec, aval: ShapedArray, what: str) -> tuple[int, ...]:
    """The IR block shape (-1 for squeezed dims) for a BlockSpec of `aval`."""
    if spec is None or spec.block_shape is None:
        return aval.shape
    bs = tuple(spec.block_shape)
    if len(bs) != aval.ndim:
        raise ValueError(f"Block shape for {what} (= {bs}) must have the same number of "
                         f"dimensions as the array shape {aval.shape}.")
    out = []
    for b in bs:
        if b is None or isinstance(b, Squeezed):
            out.append(SQUEEZED)
        elif isinstance(b, Blocked):
            out.append(int(b.block_size))
        elif isinstance(b, Element):
            pad = tuple(b.padding) if isinstance(b.padding, (tuple, list)) else ()
            if (not isinstance(b.block_size, (int, np.integer)) or b.block_size <= 0
                    or len(pad) != 2 or not all(isinstance(p, (int, np.integer)) and p >= 0
                                                for p in pad)):
                raise ValueError(f"Block shape for {what} (= {bs}) holds {b!r}; "
                                 f"pl.Element needs a positive block size and a (low, "
                                 f"high) pair of non-negative paddings")
            out.append(int(b.block_size))
        elif type(b).__name__ == "Indirect":
            raise NotImplementedError(f"pl.Indirect block dimensions (in the block shape "
                                      f"of {what}) are not supported by mjax's Pallas")
        elif isinstance(b, BoundedSlice):
            raise NotImplementedError(f"BoundedSlice block dimensions (in the block shape "
                                      f"of {what}) are not supported by pallas_call's "
                                      f"BlockSpecs (nor by JAX's Mosaic lowering); "
                                      f"pltpu.emit_pipeline takes them")
        elif isinstance(b, (int, np.integer)) and not isinstance(b, bool):
            if b <= 0:
                raise ValueError(f"Block shape for {what} (= {bs}) must have positive "
                                 f"sizes, got {b}")
            out.append(int(b))
        else:
            raise TypeError(f"Block shape for {what} (= {bs}) holds {b!r}; expected ints, "
                            f"None or pl.Squeezed()")
    return tuple(out)


def _static_block(bs, origin: str) -> None:
    """JAX's refusal of a dynamically shaped block (of an array of symbolic shape, under
    jax.export); with pallas_export_experimental(dynamic_shapes=True) JAX lowers such
    blocks, mjax does not."""
    if not any(is_symbolic_dim(b) for b in bs):
        return
    if not dynamic_shapes_export_enabled():
        raise ValueError(f"shape polymorphism for Pallas does not support dynamically-shaped "
                         f"blocks. Block spec for {origin} has block_shape: {bs}. If this is "
                         f"intentional, use the core.pallas_export_experimental("
                         f"dynamic_shapes=True) context manager to enable dynamic shapes.")
    raise NotImplementedError(f"pallas_call with a dynamically shaped block (block spec for "
                              f"{origin}: {bs}) under pallas_export_experimental("
                              f"dynamic_shapes=True) is not supported by mjax: its Mosaic "
                              f"lowering takes static block shapes")


def _module_names(module) -> set[str]:
    names = set()
    for op in module.body.operations:
        op = op.operation
        if "sym_name" in op.attributes:
            names.add(ir.StringAttr(op.attributes["sym_name"]).value)
    return names


def _fresh(names: set, base: str) -> str:
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "kernel"
    name = base
    for k in itertools.count(1):
        if name not in names:
            break
        name = f"{base}_{k}"
    names.add(name)
    return name


def _trace_index_map(module, fn, grid, aval, what, name, prefetch=(), pre_tree=None) -> str:
    """Traces an index map into a private function (i32 grid indices, then the
    scalar-prefetch refs -> i32 block indices); returns its name. The map gets the
    scalar-prefetch arguments as the user passed them (`pre_tree`: their structure)."""
    n = len(grid)
    n_args = n + (len(prefetch) if pre_tree is None else len(
        tree_util.tree_unflatten(pre_tree, list(prefetch))))
    i32 = ShapedArray((), np.int32)
    if fn is not None:
        try:
            inspect.signature(fn).bind(*range(n_args))
        except TypeError:
            fname = getattr(fn, "__name__", repr(fn))
            extra = (f" and {n_args - n} scalar-prefetch argument(s)" if prefetch else "")
            raise TypeError(f"Index map function {fname} for {what} cannot take "
                             f"{n_args} argument(s): the grid {grid} has {n} "
                             f"dimension(s){extra}.") from None
        except ValueError:   # builtins without a signature: let the call decide
            pass
    trace = Trace(module, name, [i32] * n + list(prefetch), visibility="private")
    with context(), trace:
        refs = [Ref(t) for t in trace.args[n:]]
        args = list(trace.args[:n]) + (refs if pre_tree is None else list(
            tree_util.tree_unflatten(pre_tree, refs)))
        outs = (0,) * aval.ndim if fn is None else fn(*args)
        leaves = trace_trees.tree_leaves(outs)
        if len(leaves) != aval.ndim:
            fname = getattr(fn, "__name__", repr(fn))
            raise ValueError(f"Index map function {fname} for {what} must return "
                             f"{aval.ndim} values to match the block shape's rank "
                             f"(array shape {aval.shape}). Currently returning "
                             f"{len(leaves)} values.")
        res = []
        for v in leaves:
            a = aval_of_value(v)
            if a.shape != () or np.dtype(a.dtype).kind not in "iu":
                raise ValueError(f"Index map for {what} must return integer scalars, got "
                                 f"{a.str_short()}")
            res.append(np.int32(v) if isinstance(v, (int, np.integer)) else
                       lax.convert_element_type(v, np.int32))
        trace.finish(res)
    if trace.captured:
        raise ValueError(f"Index map function for {what} captures values "
                         f"{[aval_of_value(c).str_short() for c in trace.captured]}; "
                         f"it may only use the grid indices, the scalar-prefetch refs "
                         f"and constants")
    return name


def _scratch_aval(s) -> RefAval:
    if hasattr(s, "mjax_semaphore_space") and not hasattr(s, "shape"):
        return RefAval((), np.dtype(np.int32))     # (pltpu.SemaphoreType.DMA: one semaphore)
    shape, dtype = getattr(s, "shape", None), getattr(s, "dtype", None)
    if shape is None or dtype is None:
        raise TypeError(f"scratch_shapes entries need a shape and a dtype (e.g. "
                        f"pltpu.VMEM((8, 128), jnp.float32)), got {s!r}")
    return RefAval(tuple(shape), dtypes.canonicalize_dtype(dtype))


def _scratch_space(s) -> str:
    if hasattr(s, "mjax_semaphore_space"):
        return s.mjax_semaphore_space
    return memory_space_name(getattr(s, "memory_space", None)) or "vmem"


def _is_scratch_leaf(x) -> bool:
    return (hasattr(x, "shape") and hasattr(x, "dtype")) or hasattr(x, "mjax_semaphore_space")


def _plain(what: str, v):
    """A compiler-parameter value as attribute data (enums as their value strings)."""
    if v is None or isinstance(v, (bool, int, float, str, np.bool_, np.integer, np.floating)):
        return v.item() if isinstance(v, np.generic) else v
    value = getattr(v, "value", None)
    if isinstance(value, str):                    # GridDimensionSemantics, SideEffectType
        return value
    if isinstance(v, (tuple, list)):
        return tuple(_plain(what, x) for x in v)
    if isinstance(v, dict) or hasattr(v, "items"):
        return {str(k): _plain(what, x) for k, x in v.items()}
    raise TypeError(f"compiler_params {what} = {v!r} ({type(v).__name__}) is not a "
                    f"number, string, boolean, sequence or dictionary")


def _tpu_params(params: dict) -> dict:
    out = {"backend": "mosaic_tpu"}
    for k, v in params.items():
        if v is None:
            continue
        v = _plain(k, v)
        if k == "dimension_semantics":
            v = tuple(str(x).lower() for x in v)
        elif k == "allow_input_fusion":
            v = tuple(bool(x) for x in v)
        elif k == "flags":
            v = dict(v)
        out[k] = v
    return out


def _compiler_params(params) -> dict:
    if params is None:
        return {}
    if getattr(params, "mjax_backend", None) == "mosaic_tpu":      # pltpu.CompilerParams
        return _tpu_params({f.name: getattr(params, f.name)
                            for f in dataclasses.fields(params)})
    if dataclasses.is_dataclass(params):
        params = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    if not isinstance(params, dict):
        raise TypeError(f"compiler_params must be a dict or a CompilerParams, got "
                        f"{type(params).__name__}")
    if params and set(params) <= {"triton", "mosaic", "mosaic_tpu", "mosaic_gpu"}:
        # (JAX's old nesting by backend)
        if "mosaic" in params or "mosaic_tpu" in params:
            return _tpu_params(dict(params.get("mosaic", params.get("mosaic_tpu")) or {}))
        params = params.get("triton", {})
    out = {}
    for k, v in params.items():
        if v is None:
            continue
        if isinstance(v, (bool, int, float, str, np.integer, np.floating)):
            out[k] = v
        elif isinstance(v, (tuple, list)) and all(isinstance(x, (int, np.integer)) for x in v):
            out[k] = tuple(int(x) for x in v)
        # (other values are backend hints interpret mode has no use for)
    return out


def _cost_estimate(ce):
    if ce is None:
        return None
    if not isinstance(ce, CostEstimate):
        raise TypeError(f"cost_estimate must be a pl.CostEstimate, got {type(ce).__name__}")
    return {k: int(getattr(ce, k)) for k in COST_FIELDS}


def _metadata(metadata):
    """pallas_call's `metadata` (JAX's dict[str, str], written into the TPU custom call's
    kernel_metadata as JSON): a dict with str keys and JSON scalar values, or None."""
    if metadata is None:
        return None
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, (str, bool, int, float))
            for k, v in metadata.items()):
        raise TypeError(f"pallas_call metadata must be a dict of str to str, got "
                        f"{metadata!r}")
    return dict(metadata)


def _spec_memory_space(spec, what: str) -> str | None:
    if spec is None:
        return None
    name = memory_space_name(spec.memory_space)
    if name is not None and name not in MEMORY_SPACES:
        raise ValueError(f"BlockSpec memory space {spec.memory_space!r} for {what} is "
                         f"not a memory space an array can live in")
    return name


def _fun_name(fun) -> str:
    """The kernel's name as JAX gives it (a functools.partial is named by its function)."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    return getattr(fun, "__name__", "kernel")


class _PallasCall:
    """The callable pallas_call returns."""

    def __init__(self, kernel, out_shape, grid, in_specs, out_specs, scratch_shapes,
                 input_output_aliases, debug, interpret, name, compiler_params,
                 num_scalar_prefetch=0, cost_estimate=None, metadata=None):
        self.kernel = kernel
        self.out_shape = out_shape
        self.grid = grid
        self.in_specs, self.out_specs = in_specs, out_specs
        self.scratch_shapes = scratch_shapes
        self.aliases = dict(input_output_aliases or {})
        self.debug = debug
        self.interpret = bool(interpret)
        # (pltpu.InterpretParams: JAX's TPU interpreter, whose DMA semaphores count bytes)
        self.dma_bytes = self.interpret and not isinstance(interpret, bool)
        self.interpret_params = interpret if self.dma_bytes else None
        self.shared_aliases = False     # (core_map's calls: see PallasCallOp)
        self.mesh_kernel = False        # (pl.kernel's and core_map's calls: PallasCallOp)
        self.name = name or _fun_name(kernel)
        self.compiler_params = _compiler_params(compiler_params)
        self.cost_estimate = _cost_estimate(cost_estimate)
        self.metadata = _metadata(metadata)
        self.num_scalar_prefetch = int(num_scalar_prefetch)
        self.grid_names = None          # (a named grid's axis names)
        self._jitted = None
        self.__name__ = self.name

    def __call__(self, *args):
        if current_trace() is None:
            if self._jitted is None:
                self._jitted = jit(self._stage)
            # (under disable_jit too: the kernel is always staged, as JAX's primitive is)
            with config.override(jax_disable_jit=False):
                return self._jitted(*args)
        return self._stage(*args)

    def _stage(self, *args):
        outer = current_trace()
        module = outer.module
        params = self.interpret_params or tpu_interpret_mode.value
        if getattr(params, "detect_races", False):
            raise NotImplementedError(
                f"pallas_call {self.name}: pltpu.InterpretParams(detect_races=True) is not "
                f"supported by mjax: its interpreter runs a DMA at its start and the "
                f"devices' and cores' kernel instances in lockstep, so it keeps no record "
                f"of concurrent accesses to detect races in; pass detect_races=False")
        grid, bounds = _split_grid(self.grid)
        tpu_params = None if isinstance(params, bool) else params
        if tpu_params is not None:
            _check_tpu_interpret_grid(self.grid, self.compiler_params)
            if tpu_params.buffer_bounds != "logical":
                raise NotImplementedError(
                    f"pallas_call {self.name}: pltpu.InterpretParams(buffer_bounds="
                    f"{tpu_params.buffer_bounds!r}) is not supported by mjax: its "
                    f"interpreter keeps every buffer at its logical shape, not padded to "
                    f"the chip's tiling; pass buffer_bounds='logical'")
        n_pre = self.num_scalar_prefetch
        if len(args) < n_pre:
            raise ValueError(f"pallas_call {self.name} has num_scalar_prefetch={n_pre} but "
                             f"was called with {len(args)} argument(s)")
        pre_leaves, pre_tree = trace_trees.tree_flatten(tuple(args[:n_pre]))
        leaves, in_tree = trace_trees.tree_flatten(
            tuple(args[n_pre:]), is_leaf=lambda x: isinstance(x, PRNGKeyArray))
        # (a key array is its data in memory; the kernel reads keys through a KeyRef)
        key_impls = [x.impl if isinstance(x, PRNGKeyArray) else None for x in leaves]
        leaves = [x._base if isinstance(x, PRNGKeyArray) else x for x in leaves]
        leaves = [x if isinstance(x, Tracer) or hasattr(x, "aval") else jnp.asarray(x)
                  for x in leaves]
        pre_leaves = [x if isinstance(x, Tracer) or hasattr(x, "aval") else jnp.asarray(x)
                      for x in pre_leaves]
        pre_avals = [aval_of_value(x).strip_weak_type() for x in pre_leaves]
        for i, a in enumerate(pre_avals):
            if isinstance(a, RefAval) or np.dtype(a.dtype).kind not in "iubfV":
                raise ValueError(f"pallas_call {self.name}: scalar-prefetch operand {i} is "
                                 f"{a.str_short()}; scalar prefetch takes integer, float or bool arrays")
        pre_refs = [RefAval(a.shape, a.dtype) for a in pre_avals]
        in_avals = [aval_of_value(x).strip_weak_type() for x in leaves]
        for i, a in enumerate(in_avals):
            if isinstance(a, RefAval):
                raise TypeError(f"pallas_call input {i} is a ref; pass arrays")
        out_leaves, out_tree = trace_trees.tree_flatten(
            self.out_shape, is_leaf=lambda x: hasattr(x, "shape") and hasattr(x, "dtype"))
        out_avals = []
        check_vma = bool(AXIS_ENV.vma_checks and AXIS_ENV.vma_checks[-1])
        for o in out_leaves:
            if not (hasattr(o, "shape") and hasattr(o, "dtype")):
                raise TypeError(f"pallas_call out_shape leaves need a shape and a dtype "
                                f"(jax.ShapeDtypeStruct), got {o!r}")
            if check_vma and isinstance(o, ShapeDtypeStruct) and o.manual_axis_type is None:
                raise ValueError(_NO_MANUAL_AXIS_TYPE)
            out_avals.append(ShapedArray(tuple(o.shape), dtypes.canonicalize_dtype(o.dtype)))
        _check_spec_tree(self.in_specs, in_tree, "in_specs", "inputs")
        in_specs = _flat_specs(self.in_specs, len(leaves), "in_specs", "inputs")
        in_specs = [s if k is None else key_block_spec(s, k)
                    for s, k in zip(in_specs, key_impls)]
        out_specs = _flat_specs(self.out_specs, len(out_avals), "out_specs", "out_shape")
        if tpu_params is not None and not self.mesh_kernel and not n_pre:
            skip = set(self.aliases.values()) | {
                j for j, sp in enumerate(out_specs)
                if sp is not None and memory_space_name(sp.memory_space) in ("hbm", "any")}
            check_revisits(self.grid, out_specs, skip,
                           self.compiler_params.get("dimension_semantics"),
                           tpu_params.random_seed, tpu_params.num_cores_or_threads)
        scratch_leaves = trace_trees.tree_leaves(self.scratch_shapes, is_leaf=_is_scratch_leaf)
        scratch = [_scratch_aval(s) for s in scratch_leaves]
        scratch_spaces = tuple(_scratch_space(s) for s in scratch_leaves)
        # (alias indices count the flattened inputs, scalar-prefetch leaves first)
        n_pre_leaves = len(pre_leaves)
        n_all = n_pre_leaves + len(leaves)
        for i, o in self.aliases.items():
            if not (0 <= i < n_all and 0 <= o < len(out_avals)):
                raise ValueError(f"input_output_aliases {{{i}: {o}}} is out of range for "
                                 f"{n_all} inputs and {len(out_avals)} outputs")
            if i < n_pre_leaves:
                raise ValueError(f"input_output_aliases {{{i}: {o}}}: input {i} is a "
                                 f"scalar-prefetch operand; mjax cannot alias those")
            if in_avals[i - n_pre_leaves] != out_avals[o]:
                raise ValueError(f"input_output_aliases {{{i}: {o}}}: input {i} is "
                                 f"{in_avals[i - n_pre_leaves].str_short()} but output {o} is "
                                 f"{out_avals[o].str_short()}; aliased arrays must match")

        names = _module_names(module)
        kname = _fresh(names, self.name)
        specs_ir, ref_avals = [], []
        with context(), ir.Location.unknown(context()):
            for kind, specs, avals in (("in", in_specs, in_avals), ("out", out_specs, out_avals)):
                for i, (spec, aval) in enumerate(zip(specs, avals)):
                    what = f"{'input' if kind == 'in' else 'output'} {i} of {self.name}"
                    bs = _block_shape(spec, aval, what)
                    _static_block(bs, f"{'args' if kind == 'in' else 'outputs'}[{i}]")
                    imap = _trace_index_map(module, None if spec is None else spec.index_map,
                                            grid, aval, what,
                                            _fresh(names, f"{kname}_{kind}{i}_index_map"),
                                            pre_refs, pre_tree)
                    spec_ir = {"block_shape": bs, "index_map": Symbol(imap)}
                    impl = key_impls[i] if kind == "in" else None
                    if impl is not None:
                        spec_ir["key_dims"] = len(KEY_SHAPES[impl])
                    pads = _element_padding(spec)
                    if pads is not None:
                        spec_ir["element_padding"] = pads
                    space = _spec_memory_space(spec, what)
                    if space is not None:
                        spec_ir["memory_space"] = space
                        if space in ("any", "hbm") and bs != aval.shape:
                            raise ValueError(f"The BlockSpec of {what} puts it in memory "
                                             f"space {space!r}, where the kernel sees the "
                                             f"whole array {aval.str_short()}; its block "
                                             f"shape {bs} must be None or the array's")
                    mode = getattr(spec, "pipeline_mode", None)
                    if mode is not None and getattr(mode, "buffer_count", None) is not None:
                        spec_ir["buffer_count"] = int(mode.buffer_count)
                    specs_ir.append(spec_ir)
                    ref_avals.append(RefAval(block_ref_shape(bs), aval.dtype))
        spaces = (["smem"] * len(pre_refs) + [sp.get("memory_space") for sp in specs_ir]
                  + list(scratch_spaces))
        self._trace_kernel(module, kname, pre_refs + ref_avals + scratch, in_tree,
                           len(leaves), out_tree, len(out_avals), pre_tree, n_pre, grid,
                           key_impls, spaces)
        values = [outer.to_tracer(x) for x in bounds + pre_leaves + leaves]
        extra = {}
        if n_pre:
            extra["num_scalar_prefetch"] = len(pre_leaves)
        if any(sp != "vmem" for sp in scratch_spaces):
            extra["scratch_memory_spaces"] = scratch_spaces
        if self.cost_estimate is not None:
            extra["cost_estimate"] = self.cost_estimate
        if self.metadata:
            extra["metadata"] = self.metadata
        if self.mesh_kernel:
            extra["mesh_kernel"] = True
        if tpu_params is not None:
            extra["uninitialized_memory"] = tpu_params.uninitialized_memory
            extra["interpret_seed"] = int(tpu_params.random_seed or 0)
            extra["out_of_bounds_reads"] = tpu_params.out_of_bounds_reads
            if tpu_params.skip_floating_point_ops:
                extra["skip_floating_point_ops"] = True
            if tpu_params.grid_point_recorder is not None:
                extra["grid_point_recorder"] = _recorder_id(tpu_params.grid_point_recorder)
            extra["interpret_cores"] = int(tpu_params.num_cores_or_threads)
        if AXIS_ENV.meshes:
            extra["mesh_axes"], extra["mesh_shape"] = AXIS_ENV.meshes[-1]
        with context():
            b = Builder(outer.ip, user_location())
            results = emit_pallas_call(
                b, [v.value for v in values], out_avals, callee=Symbol(kname),
                name=self.name, grid=grid, in_specs=specs_ir[:len(leaves)],
                out_specs=specs_ir[len(leaves):], scratch_shapes=scratch,
                input_output_aliases=tuple(x for io in sorted(self.aliases.items())
                                           for x in io),
                interpret=self.interpret or tpu_interpret_mode.value is not None,
                dma_bytes=self.dma_bytes or tpu_interpret_mode.value is not None,
                shared_aliases=self.shared_aliases,
                compiler_params=self.compiler_params, **extra)
        outs = [Tracer(outer, r, a) for r, a in zip(results, out_avals)]
        out = tree_util.tree_unflatten(out_tree, outs)
        # (JAX returns a tuple for a list out_shape)
        return tuple(out) if isinstance(self.out_shape, list) else out

    def _trace_kernel(self, module, kname, avals, in_tree, n_in, out_tree, n_out,
                      pre_tree=None, n_pre=0, grid=None, key_impls=(), spaces=()):
        trace = Trace(module, kname, avals, visibility="private")
        refs = [Ref(t) for t in trace.args]
        n_pre_leaves = pre_tree.num_leaves if pre_tree is not None else 0
        pre_refs = (list(tree_util.tree_unflatten(pre_tree, refs[:n_pre_leaves]))
                    if pre_tree is not None else [])
        refs = refs[n_pre_leaves:]
        refs[:len(key_impls)] = [r if k is None else KeyRef(r, k)
                                 for r, k in zip(refs, key_impls)]
        in_refs = tree_util.tree_unflatten(in_tree, refs[:n_in])
        out_refs = tree_util.tree_unflatten(out_tree, refs[n_in:n_in + n_out])
        if not isinstance(self.out_shape, (tuple, list)):
            out_refs = (out_refs,)
        scratch = refs[n_in + n_out:]
        if self.scratch_shapes:
            # (as in JAX: a sequence spreads over the kernel's trailing arguments, None
            # entries included; another pytree is one argument)
            shapes = self.scratch_shapes
            spread = isinstance(shapes, (tuple, list))
            tree = trace_trees.tree_structure(tuple(shapes) if spread else shapes,
                                              is_leaf=_is_scratch_leaf)
            scratch = tree_util.tree_unflatten(tree, scratch)
            scratch = list(scratch) if spread else [scratch]
        with context(), trace, KernelContext(trace, self.grid if grid is None else grid) \
                as kctx, contextlib.ExitStack() as names:
            kctx.note_memory_spaces(trace.args, spaces)
            for axis, name in enumerate(self.grid_names or ()):
                size = self.grid[axis] if isinstance(self.grid[axis], int) else None
                names.enter_context(AXIS_ENV.indexed(
                    name, size, lambda axis=axis: program_id(axis)))
            kctx.interpret = bool(self.interpret or tpu_interpret_mode.value is not None)
            params = self.interpret_params or tpu_interpret_mode.value
            kctx.interpret_params = None if isinstance(params, bool) else params
            result = self.kernel(*pre_refs, *in_refs, *out_refs, *scratch)
            if result is not None:
                raise ValueError(f"The kernel function in the pallas_call {self.name} "
                                 f"should return None (it writes its output refs), got "
                                 f"{type(result).__name__}")
            trace.finish([])
        if trace.captured:
            consts = [aval_of_value(c).str_short() for c in trace.captured]
            raise ValueError(f"The kernel function in the pallas_call {self.name} captures "
                             f"constants {consts}. You should pass them as inputs.")
        if self.debug:
            print(f"The kernel of pallas_call {self.name}:")
            print(trace.func)


def pallas_call(kernel, out_shape, *, grid_spec=None, grid=(), in_specs=no_block_spec,
                out_specs=no_block_spec, scratch_shapes=(), input_output_aliases=None,
                debug: bool = False, interpret=False, name: str | None = None,
                compiler_params=None, cost_estimate=None, metadata=None):
    """Runs `kernel(*input refs, *output refs, *scratch refs)` once per point of `grid`,
    each instance seeing the blocks its BlockSpecs' index maps pick; returns the outputs
    (shaped like `out_shape`). With a pltpu.PrefetchScalarGridSpec the first
    `num_scalar_prefetch` arguments are scalar-prefetch operands: the kernel gets them
    first (whole, as refs) and every index map gets them after the grid indices.
    `interpret=True` (or a pltpu.InterpretParams) runs the kernel as a loop over the grid
    under XLA on any platform. JAX: pl.pallas_call."""
    if not callable(kernel):
        raise TypeError(f"pallas_call kernel must be callable, got {type(kernel).__name__}")
    num_scalar_prefetch = 0
    if grid_spec is not None:
        if not isinstance(grid_spec, GridSpec):
            raise TypeError(f"grid_spec must be a pl.GridSpec, got {type(grid_spec).__name__}")
        grid, in_specs, out_specs = grid_spec.grid, grid_spec.in_specs, grid_spec.out_specs
        scratch_shapes = grid_spec.scratch_shapes
        num_scalar_prefetch = getattr(grid_spec, "num_scalar_prefetch", 0) or 0
        if not isinstance(num_scalar_prefetch, (int, np.integer)) or num_scalar_prefetch < 0:
            raise ValueError(f"num_scalar_prefetch must be a non-negative integer, got "
                             f"{num_scalar_prefetch!r}")
    if not (in_specs is no_block_spec or in_specs is None
            or isinstance(in_specs, (tuple, list))):
        raise ValueError(f"`in_specs` must be a tuple or a list. Found: {in_specs}")
    grid_names = None
    if isinstance(grid, (tuple, list)) and grid and isinstance(grid[0], tuple):
        # (a named grid, as JAX's: ((name, size), ...); lax.axis_index(name) in the
        # kernel is that dimension's program_id)
        grid_names, grid = tuple(n for n, _ in grid), tuple(g for _, g in grid)
    call = _PallasCall(kernel, out_shape, _normalize_grid(grid), in_specs, out_specs,
                       scratch_shapes, input_output_aliases, debug, interpret, name,
                       compiler_params, num_scalar_prefetch, cost_estimate, metadata)
    call.grid_names = grid_names
    return call


__all__ = ["pallas_call"]
