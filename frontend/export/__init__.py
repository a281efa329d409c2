"""`mjax.export`: a jitted function as a serialized StableHLO module, and back.

    exp = mjax.export.export(mjax.jit(f))(mjax.ShapeDtypeStruct((3,), np.float32))
    blob = exp.serialize(vjp_order=1)          # bytes, safe to store
    y = mjax.export.deserialize(blob).call(x)  # in another process; under jit and grad

`Exported` carries the trees and avals of the arguments and results and the module as a
StableHLO portable artifact. `call` stages one `jaxpr.call_exported` op (dialect/ops/
export.py), wrapped in a custom_vjp whose backward calls the exported VJP.

Serialized form: JAX's FlatBuffer (export/format.py), so JAX and mjax read each other's
exports. Symbolic dimensions: export/shapes.py. Functions sharded over several devices:
export/sharding.py. JAX: jax/_src/export/_export.py.
"""
from __future__ import annotations

import re
import weakref
from typing import Callable, Sequence

import numpy as np

from mjax.specs import dtypes as _dtypes
from mjax.base import trace_trees, tree_util
from mjax.ad import custom_vjp, vjp
from mjax.tracing.core import aval_of_value, bind, to_numpy
from mjax.dialect.functions import building, function_types, parse_module
from mjax.dialect.ops.export import CallExportedOp
from mjax.dialect.types import ShapedArray, aval_of
from mjax.dialect.values import i32_attr, set_attr, set_strings
from mjax.jit.jitted import Jitted, jit
from mjax.lax import convert_element_type
from mjax.tracing.lowering import lower_module, lowering_for_platform
from mjax.passes.export_module import (add_platform_index, custom_call_targets,
                                       first_global_constant, inline_captured,
                                       module_strings, name_arguments, portable_artifact,
                                       read_artifact, read_stablehlo, signature_text,
                                       static_inputs)
from mjax.passes.ir_util import main_function
from mjax.passes.weak_cotangents import STRONG_COTANGENTS
from mjax.arrays.placement import default_backend
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct
from mjax.dialect.shape_poly import SymbolicScope, is_symbolic_dim, symbolic_shape
from mjax.export.format import (from_jax_bytes, register_namedtuple_serialization,
                                register_pytree_node_serialization, to_jax_bytes)
from mjax.export.shapes import (add_shape_assertions, bind_dimension_variables,
                                check_solvable, concrete_avals, is_polymorphic,
                                refined_module, scope_of)
from mjax.export.sharding import (call_eager, export_layout, gspmd_module,
                                  lower_sharded, shardings_jax, vjp_shardings)
from mjax.tracing.tracer import Tracer
from mjax.jit.stages import _name_as_jax

minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10
_CALLING_CONVENTION_VERSION = 10

# Custom call targets whose compatibility JAX 0.10.2 guarantees (an export may hold them):
# jaxlib's LAPACK and GPU solver kernels, XLA's TPU linear algebra, Mosaic kernels, SPMD
# markers, shape assertions. Host callbacks are not among them: a Python callable cannot
# be serialized.
_LAPACK = {f"lapack_{t}{routine}_ffi" for routine, types in (
    ("potrf", "sdcz"), ("geqrf", "sdcz"), ("geev", "sdcz"), ("gesdd", "sdcz"),
    ("getrf", "sdcz"), ("gehrd", "sdcz"), ("gees", "sdcz"), ("trsm", "sdcz"),
    ("gtsv", "sdcz"), ("orgqr", "sd"), ("ungqr", "cz"), ("syevd", "sd"), ("heevd", "cz"),
    ("sytrd", "sd"), ("hetrd", "cz")) for t in types}
_GPU_SOLVERS = ({f"{p}solver_{r}_ffi" for p in ("cu", "hip")
                 for r in ("getrf", "geqrf", "orgqr", "potrf", "syevd", "gesvd", "gesvdj",
                           "sytrd")}
                | {"hipsolver_gesdd_ffi", "cu_lu_pivots_to_permutation",
                   "hip_lu_pivots_to_permutation", "cusparse_gtsv2_ffi"})
_STABLE_CUSTOM_CALLS = frozenset(_LAPACK | _GPU_SOLVERS | {
    "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "shape_assertion",
    "annotate_device_placement", "cu_threefry2x32_ffi", "hip_threefry2x32_ffi",
    "Eigh", "Qr", "ProductOfElementaryHouseholderReflectors", "LuDecomposition",
    "ApproxTopK", "stablehlo.dynamic_approx_top_k", "tpu_custom_call", "AllocateBuffer",
    "stablehlo.dynamic_top_k", "stablehlo.dynamic_reduce_window",
    "stablehlo.dynamic_rng_bit_generator", "tf.call_tf_function", "mosaic_gpu_v2"})


class DisabledSafetyCheck:
    """A safety check to skip: `platform()` (call on a platform not exported for) or
    `custom_call(target)` (serialize a custom call with no stability guarantee).
    JAX: jax.export.DisabledSafetyCheck."""

    def __init__(self, _impl: str):
        self._impl = _impl

    @classmethod
    def platform(cls) -> "DisabledSafetyCheck":
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> "DisabledSafetyCheck":
        return cls(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        m = re.match(r"custom_call:(.+)$", self._impl)
        return m.group(1) if m else None

    def __str__(self):
        return self._impl
    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self):
        return hash(self._impl)


class Exported:
    """A function lowered to StableHLO, with what calling it needs. JAX: export.Exported."""

    def __init__(self, *, fun_name, in_tree, in_avals, out_tree, out_avals, platforms,
                 mlir_module_serialized, nr_devices=1, disabled_safety_checks=(),
                 calling_convention_version=_CALLING_CONVENTION_VERSION, get_vjp=None,
                 in_named_shardings=None, out_named_shardings=None):
        self.fun_name = fun_name
        self.in_tree = in_tree
        self.in_avals = tuple(in_avals)
        self.out_tree = out_tree
        self.out_avals = tuple(out_avals)
        self.platforms = tuple(platforms)
        self.mlir_module_serialized = bytes(mlir_module_serialized)
        self.nr_devices = nr_devices
        self.disabled_safety_checks = tuple(disabled_safety_checks)
        self.calling_convention_version = calling_convention_version
        # The shardings, as JAX keeps them since 2026: NamedShardings over the abstract
        # mesh, None where unspecified (all None on one device); the HLO shardings of
        # older exports are all None then (export/sharding.py).
        self._in_named_shardings = tuple(in_named_shardings or
                                         (None,) * len(self.in_avals))
        self._out_named_shardings = tuple(out_named_shardings or
                                          (None,) * len(self.out_avals))
        self.in_shardings_hlo = (None,) * len(self.in_avals)
        self.out_shardings_hlo = (None,) * len(self.out_avals)
        self.ordered_effects = ()
        self.unordered_effects = ()
        self.module_kept_var_idx = tuple(range(len(self.in_avals)))
        # (dimension variables or a platform index: JAX's callers refine the module then)
        self.uses_global_constants = is_polymorphic(self.in_avals) or len(self.platforms) > 1
        self._get_vjp = get_vjp
        self._vjp = None          # the exported VJP, once made or read
        self._text = None

    def mlir_module(self) -> str:
        """The StableHLO text of the module."""
        if self._text is None:
            module = read_artifact(self.mlir_module_serialized)
            # (with locations, as JAX prints it: @main's arguments are named)
            self._text = module.operation.get_asm(enable_debug_info=True)
        return self._text

    def __str__(self):
        return f"Exported(fun_name={self.fun_name}, ...)"
    __repr__ = __str__

    def has_vjp(self) -> bool:
        return self._get_vjp is not None

    def vjp(self) -> "Exported":
        """The exported VJP: takes the flat primal arguments, then one cotangent per
        flat result; returns one cotangent per flat primal argument."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        if self._vjp is None:
            self._vjp = self._get_vjp(self)
        return self._vjp

    def in_shardings_jax(self, mesh):
        """The argument shardings over `mesh` (one with the exported mesh's axes), for
        placing the arguments (device_put); None where unspecified."""
        return shardings_jax(self._in_named_shardings, mesh)

    def out_shardings_jax(self, mesh):
        """The result shardings over `mesh`; None where unspecified."""
        return shardings_jax(self._out_named_shardings, mesh)

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The bytes `deserialize` reads, with `vjp_order` orders of VJPs included."""
        return _serialize(self, vjp_order)

    def call(self, *args, **kwargs):
        """Calls the exported function (eagerly, under jit, under grad)."""
        return call(self)(*args, **kwargs)


# ---- export -------------------------------------------------------------------------------
def default_export_platform() -> str:
    return _canonical_platform(default_backend())


def _canonical_platform(p: str) -> str:
    p = p.lower()
    return {"gpu": "cuda", "host": "cpu"}.get(p, p)


def export(fun_jit, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = ()) -> Callable[..., Exported]:
    """`export(jit(f))(*args)`: args are arrays or `ShapeDtypeStruct`s (pytrees of them).
    JAX: jax.export.export."""
    if not isinstance(fun_jit, Jitted) and callable(fun_jit) and \
            getattr(fun_jit, "__module__", "").startswith("mjax."):
        # (JAX's own functions, jnp.cos say, are jitted; mjax's stand for them)
        fun_jit = jit(fun_jit)
    if not isinstance(fun_jit, Jitted):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: "
                         f"{fun_jit}")
    if platforms is not None:
        if isinstance(platforms, str):
            raise ValueError(f"platforms must be a sequence of strings, got {platforms!r}")
        plats = tuple(_canonical_platform(p) for p in platforms)
    else:
        plats = None

    def do_export(*args, **kwargs) -> Exported:
        # Traced and lowered for the platform exported for, on any machine (one
        # platform; a module for several is lowered once, for the default's).
        with lowering_for_platform(plats[0] if plats is not None and len(plats) == 1 else None):
            return _export(*args, **kwargs)

    def _export(*args, **kwargs) -> Exported:
        traced = fun_jit.trace(*args, **kwargs)
        check_solvable(traced._traced.in_avals)
        layout = export_layout(fun_jit, traced, args, kwargs)
        actual = plats if plats is not None else (default_export_platform(),)
        module = _lower_for_export(traced, len(actual) > 1,
                                   _arg_names(fun_jit, args, kwargs), layout)
        _check_custom_calls(module, disabled_checks)
        tr = traced._traced
        in_avals = tuple(tr.arg_avals)         # (weak types kept, as JAX)
        out_avals = tuple(tr.out_avals)
        return Exported(
            fun_name=traced.fun_name, in_tree=tr.in_tree, in_avals=in_avals,
            out_tree=tr.out_tree, out_avals=out_avals, platforms=actual,
            mlir_module_serialized=portable_artifact(module, layout is not None),
            disabled_safety_checks=disabled_checks,
            nr_devices=1 if layout is None else layout[2].size,
            in_named_shardings=None if layout is None else layout[0],
            out_named_shardings=None if layout is None else layout[1],
            get_vjp=_vjp_getter(fun_jit, tr.in_tree, in_avals, out_avals))
    return do_export


def _arg_path(path) -> str:
    """JAX's spelling of an argument's place: args[0]['w'] or kwargs['x']."""
    if not path:
        return "the argument"
    head = "args" if getattr(path[0], "idx", 0) == 0 else "kwargs"
    return head + tree_util.keystr(tuple(path[1:]))


def _arg_names(fun_jit, args, kwargs) -> list[str] | None:
    """JAX's names of the flat arguments (x, x['w'], xs[1], kw), which the exported
    module shows as @main's argument locations; None when not known (static args)."""
    import inspect
    if fun_jit.static_argnums or fun_jit.static_argnames:
        return None
    try:
        params = list(inspect.signature(fun_jit.fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [q.name for q in params if q.kind in (q.POSITIONAL_ONLY,
                                                        q.POSITIONAL_OR_KEYWORD)]
    star = next((q.name for q in params if q.kind == q.VAR_POSITIONAL), None)
    names = []
    for path, _ in trace_trees.tree_flatten_with_path((tuple(args), dict(kwargs)))[0]:
        if not params:
            names.append(_arg_path(path))
            continue
        head, rest = path[1], tree_util.keystr(tuple(path[2:]))
        if path[0].idx == 1:                      # a keyword argument
            names.append(str(head.key) + rest)
        elif head.idx < len(positional):
            names.append(positional[head.idx] + rest)
        elif star is not None:
            names.append(f"{star}[{head.idx - len(positional)}]" + rest)
        else:
            names.append(_arg_path(path))
    return names


def _lower_for_export(traced, platform_index: bool, arg_names=None,
                      layout=None):
    """The StableHLO module of a `jit(f).trace(...)`: captured arrays become constants
    (an exported module takes only the user's arguments), named as JAX names it; with a
    `layout` (export_sharding.export_layout), lowered for its mesh."""
    tr = traced._traced
    module = parse_module(traced.as_text(debug_info=True))
    consts = []
    for c in tr.captured:
        value = np.asarray(to_numpy(c))
        if isinstance(getattr(c, "dtype", None), _dtypes.KeyType) or value.dtype == object:
            raise NotImplementedError("mjax.export: a function closing over PRNG key "
                                      "arrays cannot be exported yet; pass the keys "
                                      "as arguments")
        consts.append(value)
    inline_captured(_main_of(module), len(tr.in_avals), consts)
    with building():
        if layout is None:
            lower_module(module)
        else:
            lower_sharded(module, layout, tr.out_avals)
        if is_polymorphic(tr.in_avals):
            add_shape_assertions(module, tr.in_avals)
            constraints = scope_of(tr.in_avals)._constraints_str
            if constraints:
                set_strings(module.operation, _CONSTRAINTS_ATTR, constraints)
        name_arguments(_main_of(module), arg_names)
        _name_as_jax(module, traced.fun_name, tr.out_tree)
        set_attr(module.operation, "jax.uses_shape_polymorphism",
                 bool(is_polymorphic(tr.in_avals)))
        if layout is not None:
            module.operation.attributes["mhlo.num_partitions"] = i32_attr(layout[2].size)
        if platform_index:
            add_platform_index(module)
    return module


def _main_of(module):
    main = main_function(module)
    if main is None:
        raise ValueError("the lowered module has no @main")
    return main


def _check_custom_calls(module, disabled_checks) -> None:
    allowed = set(_STABLE_CUSTOM_CALLS)
    for dc in disabled_checks:
        if not isinstance(dc, DisabledSafetyCheck):
            raise ValueError(f"disabled_checks must hold DisabledSafetyCheck values, got "
                             f"{dc!r}")
        if dc.is_custom_call() is not None:
            allowed.add(dc.is_custom_call())
    bad = [f"{target} at {loc}" for target, loc in custom_call_targets(module)
           if target not in allowed and "ALL" not in allowed]
    if bad:
        raise ValueError("Cannot serialize code with custom calls whose targets have no "
                         "compatibility guarantees (host callbacks cannot be serialized). "
                         "Examples are:\n" + "\n".join(bad) + ".\n")


# ---- the VJP ------------------------------------------------------------------------------
def _tangent_aval(a: ShapedArray) -> ShapedArray:
    return ShapedArray(a.shape, a.dtype if _is_inexact(a.dtype) else _dtypes.float0)


def _is_inexact(dtype) -> bool:
    return dtype != _dtypes.float0 and _dtypes.issubdtype(dtype, np.inexact)


def _module_aval(a: ShapedArray) -> ShapedArray:
    """float0 has no buffers: a module takes and gives bool arrays in its place."""
    return ShapedArray(a.shape, np.bool_) if a.dtype == _dtypes.float0 else a


def _vjp_getter(fun, in_tree, in_avals, out_avals):
    """Exports, when asked, the VJP of `fun`: flat primals and output cotangents in, flat
    input cotangents out. JAX: export._get_vjp_fun."""
    def get(primal: Exported) -> Exported:
        n = len(in_avals)
        ct_avals = [_tangent_aval(a) for a in out_avals]

        def fun_vjp(*primals_and_cts):
            primals, cts = primals_and_cts[:n], primals_and_cts[n:]

            def flat(*xs):
                a, kw = tree_util.tree_unflatten(in_tree, list(xs))
                return trace_trees.tree_leaves(fun(*a, **kw))
            _, pullback = vjp(flat, *primals)
            cts = [np.zeros(a.shape, _dtypes.float0) if a.dtype == _dtypes.float0 else c
                   for a, c in zip(ct_avals, cts)]
            outs = pullback(list(cts))
            return [np.zeros(a.shape, np.bool_) if not _is_inexact(a.dtype) else o
                    for a, o in zip(in_avals, outs)]
        ins, outs = vjp_shardings(primal, ct_avals)
        specs = [_spec(a, s) for a, s in zip(list(in_avals) +
                                             [_module_aval(a) for a in ct_avals], ins)]
        exp = export(jit(fun_vjp, out_shardings=outs), platforms=primal.platforms,
                     disabled_checks=primal.disabled_safety_checks)(*specs)
        in_tree_vjp = trace_trees.tree_structure(
            (tuple(range(n + len(ct_avals))), {}))
        exp.fun_name = f"vjp({primal.fun_name})"
        exp.in_tree = in_tree_vjp
        exp.in_avals = tuple(in_avals) + tuple(ct_avals)
        exp.out_tree = trace_trees.tree_structure(list(range(n)))
        exp.out_avals = tuple(_tangent_aval(a) for a in in_avals)
        return exp
    return get


def _spec(a: ShapedArray, sharding=None):
    return ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding)


# ---- calling --------------------------------------------------------------------------------
def call(exported: Exported) -> Callable:
    """A function of the exported arguments' pytree that calls the module.
    JAX: jax.export.call."""
    if not isinstance(exported, Exported):
        raise ValueError(f"The exported argument must be an export.Exported. Found "
                         f"{exported}.")

    @custom_vjp
    def f_flat(*args):
        return tuple(_call_flat(exported, args))

    def f_fwd(*args):
        return f_flat(*args), args

    def f_bwd(args, cts):
        exp_vjp = exported.vjp()
        cts = [np.zeros(a.shape, _dtypes.float0) if a.dtype == _dtypes.float0 else c
               for a, c in zip(exp_vjp.in_avals[len(args):], cts)]
        if exp_vjp._vjp is None:
            # Its own VJP is not at hand (fresh exports make VJPs on demand, and staging
            # a custom_vjp traces its bwd at once: recursing would never end).
            return tuple(_call_flat(exp_vjp, list(args) + list(cts)))
        # Through `call`, so the VJP is differentiable in turn (read with vjp_order >= 2).
        return tuple(call(exp_vjp)(*args, *cts))
    f_flat.defvjp(f_fwd, f_bwd)
    # (its bwd returns what the exported VJP does: strongly typed, as JAX's)
    setattr(f_flat, STRONG_COTANGENTS, True)

    def f_imported(*args, **kwargs):
        leaves, in_tree = trace_trees.tree_flatten((args, kwargs))
        if in_tree != exported.in_tree:
            raise ValueError(f"The invocation args and kwargs must have the same pytree "
                             f"structure as when the function '{exported.fun_name}' was "
                             f"exported: called with {in_tree}, exported with "
                             f"{exported.in_tree}")
        env = _check_avals(exported, leaves)
        if env:     # (symbolic dimensions: the export for these shapes)
            return _call_refined(exported, env, leaves)
        # Without a VJP serialized, the custom_vjp still: its bwd (traced only when
        # differentiating) raises JAX's ValueError("No VJP is available"). When the
        # function has no reverse mode (a while_loop with a dynamic trip count), the
        # bare op: differentiating it is the op's error.
        outs = (f_flat(*leaves) if not exported.has_vjp() or _vjp_available(exported)
                else _call_flat(exported, leaves))
        return tree_util.tree_unflatten(exported.out_tree, list(outs))
    return f_imported


def _vjp_available(exported: Exported) -> bool:
    if not exported.has_vjp():
        return False
    try:
        exported.vjp()
    except Exception:   # noqa: BLE001  (any failure to differentiate: no VJP to call)
        exported._get_vjp = None
        return False
    return True


def _check_avals(exported: Exported, leaves) -> dict:
    """Checks the call's arguments against the exported ones; returns the dimension
    variables' values (export/shapes.py) when the export has symbolic dimensions."""
    shapes = []
    for i, (want, x) in enumerate(zip(exported.in_avals, leaves)):
        have = aval_of_value(x)
        if len(have.shape) != len(want.shape):
            raise ValueError(f"Rank mismatch for args[{i}] of '{exported.fun_name}': "
                             f"expected {want.shape} and called with {have.shape}")
        if have.dtype != want.dtype:
            raise ValueError(f"Dtype mismatch for args[{i}] of '{exported.fun_name}': "
                             f"expected {want.dtype} and called with {have.dtype}")
        if not is_polymorphic([want]) and tuple(have.shape) != tuple(want.shape):
            raise ValueError(f"Shape mismatch for args[{i}] of '{exported.fun_name}' "
                             f"(expected same constant): expected {want.shape} and called "
                             f"with {have.shape}")
        shapes.append(have.shape)
    if not is_polymorphic(exported.in_avals):
        return {}
    return bind_dimension_variables(exported.fun_name, exported.in_avals, shapes)


def _call_refined(exported: Exported, env: dict, leaves):
    """A call of a polymorphic export: the module refined for the arguments' shapes."""
    args, kwargs = tree_util.tree_unflatten(exported.in_tree, leaves)
    return call(_refined(exported, env))(*args, **kwargs)


def _refined(exported: Exported, env: dict) -> Exported:
    """The export for the dimension variables' values `env`: static avals, the module
    refined (export/shapes.py), its VJP refined alike when there is one."""
    in_avals = concrete_avals(exported.in_avals, env)
    static = Exported(
        fun_name=exported.fun_name, in_tree=exported.in_tree, in_avals=in_avals,
        out_tree=exported.out_tree, out_avals=concrete_avals(exported.out_avals, env),
        platforms=exported.platforms, mlir_module_serialized=b"",
        nr_devices=exported.nr_devices,
        in_named_shardings=exported._in_named_shardings,
        out_named_shardings=exported._out_named_shardings,
        disabled_safety_checks=exported.disabled_safety_checks,
        get_vjp=(lambda _: _refined(exported.vjp(), env)) if exported.has_vjp() else None)
    static._text = refined_module(exported.mlir_module(), tuple(in_avals))
    return static


def _call_flat(exported: Exported, args) -> list:
    """Binds one `jaxpr.call_exported` on the flat arguments (float0 ones passed as bool
    arrays); float0 results are made here, since the module gives bool arrays for them."""
    platform = _canonical_platform(default_backend())
    platform_index = None
    if platform in exported.platforms:
        platform_index = exported.platforms.index(platform)
    elif DisabledSafetyCheck.platform() in exported.disabled_safety_checks:
        platform_index = 0
    else:
        raise ValueError(f"Function '{exported.fun_name}' was exported for platforms "
                         f"'{exported.platforms}' but it is used on '{(platform,)}'.")
    if len(exported.platforms) == 1:
        platform_index = None
    args = [np.zeros(a.shape, np.bool_) if a.dtype == _dtypes.float0 else x
            for a, x in zip(exported.in_avals, args)]
    mod_outs = [_module_aval(a) for a in exported.out_avals]
    if exported.nr_devices > 1 and not any(isinstance(x, Tracer) for x in args):
        # (on the arguments' devices: export/sharding.py)
        outs = call_eager(exported, args, ([_module_aval(a) for a in exported.in_avals],
                                           mod_outs), platform_index)
        return [np.zeros(a.shape, _dtypes.float0) if a.dtype == _dtypes.float0 else o
                for a, o in zip(exported.out_avals, outs)]
    outs = bind(CallExportedOp, *args,
                module=(exported.mlir_module() if exported.nr_devices == 1
                        else gspmd_module(exported)),
                fun_name=exported.fun_name,
                result_shapes=tuple(a.shape for a in mod_outs) or None,
                result_dtypes=tuple(a.dtype for a in mod_outs) or None,
                # (weak as the exported results, as JAX: never after deserialize)
                platform_index=platform_index,
                _weak_type=bool(mod_outs) and all(a.weak_type for a in exported.out_avals))
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    if any(a.weak_type for a in exported.out_avals):     # some weak, some not
        outs = [convert_element_type(o, a.dtype, weak_type=True)
                if a.weak_type and not getattr(o, "weak_type", True) else o
                for a, o in zip(exported.out_avals, outs)]
    return [np.zeros(a.shape, _dtypes.float0) if a.dtype == _dtypes.float0 else o
            for a, o in zip(exported.out_avals, outs)]


def symbolic_args_specs(args, shapes_specs, constraints=(), scope=None):
    """ShapeDtypeStructs for args (a pytree of arrays or anything with shape and dtype)
    with the shapes shapes_specs names: one spec string for every argument, or a pytree
    prefix of args holding a spec string (or None: that argument's own shape) per
    subtree. "_" and "..." take the argument's own dimensions; all the dimensions share
    one scope. JAX: jax.export.symbolic_args_specs."""
    if scope is not None and constraints:
        raise ValueError("Cannot use both a scope and explicit constraints")
    if scope is None:
        scope = SymbolicScope(constraints)
    leaves, tree = tree_util.tree_flatten(args)
    if shapes_specs is None or isinstance(shapes_specs, str):
        specs = [shapes_specs] * len(leaves)
    else:
        specs = tree_util.broadcast_prefix(shapes_specs, args, is_leaf=lambda x: x is None)
    out = []
    for leaf, spec in zip(leaves, specs):
        shape = symbolic_shape(spec, scope=scope, like=np.shape(leaf))
        out.append(ShapeDtypeStruct(shape, getattr(leaf, "dtype", None)
                                    or np.asarray(leaf).dtype))
    return tree.unflatten(out)


# ---- serialization (JAX's FlatBuffer: export/format.py) -----------------------------------
_CONSTRAINTS_ATTR = "mjax.symbolic_constraints"   # (JAX's form keeps none: the module does)


def _serialize(exp: Exported, vjp_order: int) -> bytearray:
    return to_jax_bytes(exp, vjp_order)


def _make_exported(*, vjp, disabled_safety_checks, **fields) -> Exported:
    exp = Exported(**fields, get_vjp=(lambda _: vjp) if vjp is not None else None,
                   disabled_safety_checks=[DisabledSafetyCheck(c)
                                           for c in disabled_safety_checks])
    exp._vjp = vjp
    return exp


def _module_constraints(artifact: bytes) -> tuple:
    """The symbolic constraints export recorded in the module (none in JAX's exports)."""
    return module_strings(read_artifact(artifact), _CONSTRAINTS_ATTR)


def deserialize(blob) -> Exported:
    """Reads what `Exported.serialize` (or JAX's) wrote. JAX: jax.export.deserialize."""
    return from_jax_bytes(bytes(blob), _make_exported, _module_constraints)


# Exporteds whose module bytes went into another system (jax2tf's XlaCallModule ops), so
# that `from_stablehlo` of the same bytes, in this process, gets their VJP back.
_SHIPPED: "weakref.WeakValueDictionary[bytes, Exported]" = weakref.WeakValueDictionary()


def _remember_shipped(exported: Exported) -> None:
    _SHIPPED[exported.mlir_module_serialized] = exported


def from_stablehlo(module, *, platforms: Sequence[str] = ("cpu",),
                   fun_name: str = "main", arg_avals=None) -> Exported:
    """An `Exported` of a bare StableHLO module (portable artifact bytes, as TF's
    XlaCallModule op holds them, bytecode or text): flat arguments and results read from
    its @main. No VJP, unless the bytes are those of an Exported this process shipped
    (jax2tf). A module with dynamic shapes (shape polymorphism) is refined for
    `arg_avals`, the flat arguments' avals. Not in JAX's API; for tf2jax's XlaCallModule
    rule."""
    shipped = None if isinstance(module, str) else _SHIPPED.get(bytes(module))
    with building():
        parsed = read_stablehlo(module)
        main = _main_of(parsed)
        if arg_avals is not None and not static_inputs(main):
            parsed = parse_module(refined_module(parsed.operation.get_asm(),
                                                 tuple(arg_avals)))
            main = _main_of(parsed)
            if shipped is not None and is_polymorphic(shipped.in_avals):
                shipped = _refined(shipped, bind_dimension_variables(
                    fun_name, shipped.in_avals, [a.shape for a in arg_avals]))
        inputs, results = function_types(main)
        plats = tuple(_canonical_platform(p) for p in platforms)
        name = first_global_constant(main)
        if name is not None:
            if len(plats) < 2:     # the platform index comes first only then
                raise NotImplementedError(
                    f"from_stablehlo: @main takes the global constant {name} first: a "
                    f"multi-platform module needs its platforms passed; dimension "
                    f"variables (shape polymorphism) are not supported")
            inputs = inputs[1:]
        try:
            in_avals = [aval_of(t) for t in inputs]
            out_avals = [aval_of(t) for t in results]
        except TypeError as e:
            raise NotImplementedError(f"from_stablehlo: @main's signature "
                                      f"{signature_text(main)} has a "
                                      f"type mjax cannot call ({e})") from None
        artifact = portable_artifact(parsed)
    return Exported(fun_name=fun_name,
                    in_tree=trace_trees.tree_structure((tuple(range(len(in_avals))), {})),
                    in_avals=in_avals,
                    out_tree=trace_trees.tree_structure(list(range(len(out_avals)))),
                    out_avals=out_avals, platforms=plats, mlir_module_serialized=artifact,
                    get_vjp=(lambda _: shipped.vjp()) if shipped is not None and
                    shipped.has_vjp() else None)


__all__ = ["DisabledSafetyCheck", "Exported", "SymbolicScope", "call",
           "default_export_platform", "deserialize", "export", "is_symbolic_dim",
           "minimum_supported_calling_convention_version",
           "maximum_supported_calling_convention_version",
           "register_namedtuple_serialization", "register_pytree_node_serialization",
           "symbolic_args_specs",
           "symbolic_shape"]
