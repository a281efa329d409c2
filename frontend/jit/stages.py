"""jit stages: Traced -> Lowered -> Compiled (JAX's AOT API), and `ClosedJaxpr`, what
`Traced.jaxpr` and make_jaxpr show."""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Protocol, Union

from jaxlib import _hlo, _jax
from jaxlib.mlir import ir

from mjax.jaxpr import objects as jaxpr_objects
from mjax.base import trace_trees, tree_util
from mjax.specs import layout as layout_api
from mjax.specs import memory_kinds
from mjax.arrays.array import Array
from mjax.config import config
from mjax.dialect import context
from mjax.arrays.dispatch import execute
from mjax.arrays.placement import commit_tree, committed_device, default_device, on_device
from mjax.specs.dtypes import aval_of_value, to_numpy
from mjax.specs.float0 import restore_float0
from mjax.tracing.lowering import (clone_module, compile_printed, compile_pipeline,
                                   finishing_passes, lower_module, lowering_for_platform,
                                   module_name, refuse_symbolic, step_names)
from mjax.passes import run_pipeline
from mjax.passes.pipeline import print_for_backend
from mjax.passes.rules.export import CALLER_DEVICES
from mjax.passes.ir_util import main_function
from mjax.jaxpr.pretty import pretty_print
from mjax.jit.cache_miss_log import describer
from mjax.jaxpr.pretty_expand import expanded_function
from mjax.jaxpr.pretty_types import print_types
from mjax.runtime import get_backend
from mjax.runtime.backend import target_platform
from mjax.runtime.backend import Platform
from mjax.runtime.xla import xla_compile_options
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct
from mjax.specs.sharding_impls import Sharding, SingleDeviceSharding, get_abstract_mesh
from mjax.spmd import jit as spmd
from mjax.tracing.staging import TracedFunction


class ClosedJaxpr(jaxpr_objects.ClosedJaxpr):
    """What make_jaxpr returns: prints JAX's compact form; `.jaxpr` is the trace as JAX's
    jaxpr objects (mjax/jaxpr/objects.py); `.mlir` is the dialect text."""

    def __init__(self, traced: TracedFunction):
        self._traced = traced
        self.in_avals = list(traced.arg_avals)    # (with their weak types, as JAX's)
        self.out_avals = traced.out_avals
        self.consts = list(traced.captured)
        self._mesh = get_abstract_mesh()    # (explicit mode prints sharding types)

    # Both texts are made when first read: jit(f).lower(...) builds a ClosedJaxpr for
    # every trace and printing them was 15% of trace+lower of a 1,000-op function.
    @functools.cached_property
    def mlir(self) -> str:
        return str(self._traced.module)

    @functools.cached_property
    def _func(self):
        """The function printed: the trace, or a copy with its transformations expanded
        (JAX's jaxprs show grad/jvp/vmap applied; mjax.jaxpr.pretty_expand)."""
        expanded = expanded_function(self._traced.module, self._traced.name,
                                     self._traced.trace.type_specs)
        if expanded is None:
            return self._traced.trace.func
        self._expanded_module, func = expanded   # (the function lives in this module)
        return func

    @functools.cached_property
    def _pretty(self) -> str:
        n, func = len(self._traced.captured), self._func
        expanded = "_expanded_module" in self.__dict__     # (see _func)
        return pretty_print(func, n, print_types(func, self._traced, self._mesh, n, expanded))

    @functools.cached_property
    def jaxpr(self) -> jaxpr_objects.Jaxpr:
        jaxpr = jaxpr_objects.read_function(self._func.regions[0].blocks[0],
                                            len(self._traced.captured))
        for v, a in zip(jaxpr.invars, self.in_avals):   # (the IR's types carry no weak flag)
            if a.weak_type and v.aval == a.strip_weak_type():
                v.aval = a
        jaxpr._text = self._pretty
        return jaxpr

    def __str__(self):
        return self._pretty

    __repr__ = __str__

    def pretty_print(self, **kw):
        return self._pretty


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where a jit's stages lower, compile and run (`placement_of`):
    `backend`, the backend's name (None: the default's), as `Jitted._backend_for` chose
    it; `devices`, the one device (None: the backend's first); `commit`, whether the
    results are committed (jit(device=/backend=), committed arguments); `pinned`, whether
    jit(device=/backend=) chose the device (JAX then takes committed arguments from other
    devices, where otherwise it refuses them); `arg_names`, the arguments' names for
    that error (a function: they are found when it is raised)."""
    backend: str | None = None
    devices: list | None = None
    commit: bool = False
    pinned: bool = False
    arg_names: Any = None

    @property
    def platform(self) -> str:
        """The platform of the backend it compiles for ('cpu', 'iree', ...)."""
        return str(get_backend(self.backend).platform)


_DEFAULT_PLACEMENT = Placement()    # the default backend's first device, uncommitted


def placement_of(jitted, leaves, traced, static_key) -> Placement:
    """Where the stages of `jitted`'s trace for `leaves` lower, compile and run, as
    JAX's: jit(device=)'s device, jit(backend=)'s first, the committed arguments' (the
    results committed in these three cases), else jax_default_device's (None: the
    default backend's first); compiled by the backend `Jitted._backend_for` picks for
    it, as the jit's calls are."""
    pinned = jitted._device is not None or jitted._backend is not None
    if pinned:
        device = jitted._device or get_backend(jitted._backend).devices()[0]
    else:
        device = committed_device(leaves, describer(jitted.fun, jitted._name,
                                                    traced.in_tree, static_key))
    commit = device is not None
    if device is None:
        device = default_device()
    devs = None if device is None else [device]
    return Placement(jitted._backend_for(devs), devs, commit, pinned, lambda: (
        layout_api.arg_names(jitted.fun, traced.in_tree, bool(jitted.static_argnums))))


class _Signature:
    """What JAX's Traced, Lowered and Compiled tell of the arguments and results: pytree
    structures, avals, ShapeDtypeStructs, donation. Needs `_traced` and `_donation`
    (`(donate_argnums, one flag per argument leaf)`)."""

    @property
    def in_tree(self):
        return self._traced.in_tree

    @property
    def out_tree(self):
        return self._traced.out_tree

    @property
    def in_avals(self):
        return tree_util.tree_unflatten(self._traced.in_tree, self._traced.arg_avals)

    @property
    def out_avals(self):
        return tree_util.tree_unflatten(self._traced.out_tree, list(self._traced.out_avals))

    @property
    def out_info(self):
        return tree_util.tree_unflatten(self._traced.out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype) for a in self._traced.out_avals])

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        return self._donation[0]

    @property
    def args_info(self):
        avals = self._traced.arg_avals
        flags = self._donation[1] or (False,) * len(avals)
        return tree_util.tree_unflatten(self._traced.in_tree, [
            ArgInfo(a, bool(d)) for a, d in zip(avals, flags)])


class Traced(_Signature):
    """`jit(f).trace(*args)`: `.jaxpr` prints JAX's compact form; `.as_text()` is the
    jaxpr-dialect module."""

    _layouts = None    # the layouts of Formats jit was given (mjax/specs/layout.py)
    _memory_kinds = None    # (argument kinds, asked result kinds): mjax/specs/memory_kinds.py
    _retrace = None    # the same trace made again (jit's), for lowering_platforms=
    _place = None    # () -> the Placement (jit's: found as it lowers, as JAX checks)

    def __init__(self, traced, name, layout=None, user_passes=(), donation=((), ())):
        self._traced = traced
        self._donation = donation
        self._layout = layout    # SPMD: (argument shardings, result shardings, mesh)
        self._user_passes = user_passes   # users' passes lowering runs (docs/passes.md)
        # The options the trace was made under (it is made just before): lowering sees
        # them again, as JAX lowers the one trace; see `lower`.
        self._options = config.trace_state()
        self.fun_name = name
        # JAX's compact jaxpr; `.jaxpr.mlir` (or `.as_text()`) is the dialect module.
        self.jaxpr = ClosedJaxpr(traced)

    def as_text(self, debug_info: bool = False) -> str:
        """The jaxpr-dialect module; with debug_info, every op's user `file:line:col`."""
        return self._traced.module.operation.get_asm(enable_debug_info=debug_info)

    def lower(self, *, lowering_platforms: tuple[str, ...] | None = None,
              _private_parameters=None):
        """The StableHLO module, lowered for the platform of the device the jit runs
        on (jit(device=/backend=), its committed arguments', else the default backend's),
        or for `lowering_platforms` (one of 'cpu', 'tpu', 'cuda', 'rocm'), on any
        machine: such a module is for `as_text()` and export, and compiles only where
        that platform runs. A jit's function is traced again for another platform, since
        tracing chooses by platform (platform_dependent, linear algebra's kernels)."""
        target = _lowering_target(lowering_platforms)
        placement = self._place() if self._place is not None else _DEFAULT_PLACEMENT
        # (Under the options of the trace, whatever is in force now: the rules the passes
        # trace (custom_vjp's bwd) and a trace made again for another platform read them;
        # jax_default_matmul_precision chooses their dots' precision, as in JAX's trace.)
        with config.trace_state_override(self._options):
            if target is None:     # (for the placement's backend, as jit's calls lower)
                lowered = self._lower(placement.backend)
            elif target == str(target_platform()) == self._placed_platform(placement):
                lowered = self._lower()
            else:              # traced again for the target: its choices are made then
                with lowering_for_platform(target):
                    lowered = (self._retrace() if self._retrace else self)._lower()
        lowered._platform = target
        lowered._placement = placement
        return lowered

    def _placed_platform(self, placement) -> str:
        """The platform of the devices the trace is placed on: its mesh's, else its
        placement's backend's. Lowering for the default platform from arguments on
        another backend's devices (the CPU's, on a TPU machine) is lowering for another
        platform, as in JAX: its Mosaic kernels are serialized for export, not for this
        chip."""
        if self._layout is not None:
            devices = getattr(self._layout[2], "devices", None)
            if devices is not None and getattr(devices, "size", 0):
                return str(Platform.parse(devices.flat[0].platform))
        if placement.backend is not None:
            return str(Platform.parse(placement.backend))
        return str(target_platform())

    def _lower(self, backend: str | None = None):
        """Lowered for `backend` (a name; None: the platform lowered for now)."""
        # A copy (self.jaxpr stays untouched) that keeps the user's source locations.
        module = clone_module(self._traced.module)
        if self._layout is not None:   # over a mesh: frontend/spmd/jit.py
            jaxpr = spmd.lower(module, self._layout[0], self._layout[1],
                               self._traced.out_avals, self._layout[2], text=False,
                               user_passes=self._user_passes, backend=backend)
        else:
            jaxpr = lower_module(module, self._user_passes, keep_jaxpr=True,
                                 backend=backend)
            _name_as_jax(module, self.fun_name, self._traced.out_tree)
        finishing = [layout_api.layout_modes_pass(self._layouts, self._traced)]
        if self._memory_kinds is not None:     # (mjax/specs/memory_kinds.py)
            finishing.append(memory_kinds.memory_kinds_pass(*self._memory_kinds, backend))
        with context(), ir.Location.unknown(context()):
            run_pipeline(module, [p for p in finishing if p is not None])
        lowered = Lowered(self._traced, module, self._layout, jaxpr, self._donation)
        lowered._layouts = self._layouts
        lowered._user_passes = self._user_passes
        return lowered


def _lowering_target(platforms) -> str | None:
    """The one platform `lower(lowering_platforms=)` names (None: the default's)."""
    if platforms is None:
        return None
    if isinstance(platforms, str):
        raise ValueError(f"lowering_platforms must be a tuple of platform names, got "
                         f"{platforms!r}")
    names = tuple(dict.fromkeys(str(Platform.parse(p)) for p in platforms))
    if len(names) != 1:
        raise NotImplementedError(f"lowering for several platforms at once "
                                  f"(lowering_platforms={tuple(platforms)}): mjax lowers "
                                  f"for one; mjax.export.export(platforms=...) packs one "
                                  f"module for several")
    return names[0]


def _name_as_jax(module: ir.Module, fun_name: str, out_tree) -> None:
    """JAX's naming of a lowered one-device module (what Lowered.as_text shows):
    `module @jit_<name>` with its partition and replica counts, a public @main, and each
    result's path in the output pytree (`jax.result_info = "result[0]['a']"`)."""
    infos = _result_infos(out_tree)
    with context():
        attrs = module.operation.attributes
        attrs["sym_name"] = ir.StringAttr.get(module_name(fun_name))
        one = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1)
        attrs["mhlo.num_partitions"] = one
        attrs["mhlo.num_replicas"] = one
        main = main_function(module)
        if main is None:
            return
        main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        n_res = len(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
                    .results)
        if n_res != len(infos):
            return
        old = (list(ir.ArrayAttr(main.attributes["res_attrs"]))
               if "res_attrs" in main.attributes else [ir.DictAttr.get({})] * n_res)
        new = []
        for d, info in zip(old, infos):
            entries = {a.name: a.attr for a in ir.DictAttr(d)}
            entries["jax.result_info"] = ir.StringAttr.get(info)
            new.append(ir.DictAttr.get(entries))
        main.attributes["res_attrs"] = ir.ArrayAttr.get(new)


_RESULT_INFOS: dict = {}   # output treedef -> its results' `jax.result_info` strings


def _result_infos(out_tree) -> tuple:
    """Each result's path in the output pytree as JAX writes it ("result[0]['a']"),
    found once per treedef (every lowering of a jit with that output structure asks)."""
    cache = _RESULT_INFOS
    try:
        infos = cache.get(out_tree)
    except TypeError:        # (an unhashable treedef: found each time)
        infos = cache = None
    if infos is None:
        paths = [p for p, _ in trace_trees.tree_flatten_with_path(
            tree_util.tree_unflatten(out_tree, list(range(out_tree.num_leaves))))[0]]
        infos = tuple("result" + tree_util.keystr(p) for p in paths)
        if cache is not None:
            if len(cache) >= 1024:
                cache.clear()
            cache[out_tree] = infos
    return infos


class Lowered(_Signature):
    """`.as_text()` is StableHLO; `.compile()` runs XLA."""
    _layouts = None    # the layouts of Formats jit was given (mjax/specs/layout.py)
    _user_passes = ()  # the users' passes it was lowered with (docs/passes.md)
    _platform = None   # lower(lowering_platforms=)'s platform; None: the placement's
    _placement = _DEFAULT_PLACEMENT   # where it compiles and runs (Traced's)

    def __init__(self, traced, module, layout=None, jaxpr=None, donation=((), ())):
        self._traced = traced
        self._donation = donation
        self._module = module
        self._layout = layout
        self._jaxpr = jaxpr   # the jaxpr-dialect module just before lowering
        self._text = None   # printed when first asked (printing costs as much as a pass)

    def as_text(self, dialect=None, debug_info: bool = False):
        """The StableHLO module text (with source locations when debug_info); with
        dialect="hlo", XLA's HLO text of it; with dialect="jaxpr", the `jaxpr` module as
        lowering got it (after transformations were expanded, calls inlined and users'
        passes run)."""
        if dialect == "jaxpr":
            if self._jaxpr is None:
                raise NotImplementedError("Lowered.as_text(dialect='jaxpr'): this module "
                                          "was not lowered by jit")
            return self._jaxpr.operation.get_asm(enable_debug_info=debug_info)
        if dialect == "hlo":     # (XLA's HLO text, with op metadata when debug_info)
            options = _hlo.HloPrintOptions.short_parsable()
            options.print_metadata = debug_info
            return self.compiler_ir("hlo").as_hlo_module().to_string(options)
        if dialect not in (None, "stablehlo"):
            raise ValueError(f"unknown dialect: {dialect} ('stablehlo', 'hlo' or mjax's "
                             f"'jaxpr')")
        if debug_info:
            return self._module.operation.get_asm(enable_debug_info=True)
        if self._text is None:
            self._text = str(self._module)
        return self._text

    def compiler_ir(self, dialect="stablehlo"):
        """The lowered module: StableHLO (an MLIR module) or "hlo" (an XlaComputation,
        `.as_hlo_text()`), as JAX's."""
        if dialect == "hlo":
            # (with locations: XLA names instructions and their op_name metadata by them)
            return _jax.mlir.mlir_module_to_xla_computation(
                self.as_text(debug_info=True), use_tuple_args=False, return_tuple=False)
        if dialect != "stablehlo":
            raise ValueError(f"unknown dialect {dialect!r}: 'stablehlo' or 'hlo'")
        return self._module

    def cost_analysis(self):
        """XLA's cost estimates (flops, bytes accessed, ...) of the module before
        optimization, or None where the backend has none; Compiled.cost_analysis gives
        them after. JAX: Lowered.cost_analysis."""
        return self._cost_analysis(get_backend(self._placement.backend))

    def _cost_analysis(self, backend):
        """cost_analysis by `backend`'s client (pl.estimate_cost asks the host CPU's
        where the default's has none: JAX counts its estimate from the jaxpr anywhere)."""
        client = getattr(backend, "client", None)
        if client is None:
            raise NotImplementedError(f"Lowered.cost_analysis on the "
                                      f"{type(backend).__name__} backend; use "
                                      f"compile().cost_analysis()")
        if "PJRT C API" in client.platform_version:
            return None     # (a plugin's client, the TPU's, has none before compiling: JAX's)
        return _jax.hlo_module_cost_analysis(client, self._as_traced().as_hlo_module())

    def _as_traced(self):
        """The HLO cost_analysis reads: the jaxpr form lowered again without `cse`, which
        merges the repeated computations JAX's lowering keeps (flax compares a module's
        flops with the sum of its calls'); the module itself over a mesh."""
        if self._jaxpr is None or self._layout is not None:
            return self.compiler_ir("hlo")
        pipeline = compile_pipeline(self._user_passes, self._placement.backend)
        tail = [s for s in pipeline[step_names(pipeline).index("jaxpr-to-stablehlo"):]
                if not (isinstance(s, tuple) and s[0] == "cse")]
        module = clone_module(self._jaxpr)
        token = CALLER_DEVICES.set(1)    # (one device, as lower_module says)
        try:
            with context(), ir.Location.unknown(context()):
                run_pipeline(module, tail)
        finally:
            CALLER_DEVICES.reset(token)
        return _jax.mlir.mlir_module_to_xla_computation(
            module.operation.get_asm(enable_debug_info=True), use_tuple_args=False,
            return_tuple=False)

    def compile(self, compiler_options=None, *, device_assignment=None):
        """`compiler_options`: XLA options by name, as jit(compiler_options=...)."""
        if device_assignment is not None:
            raise NotImplementedError("Lowered.compile(device_assignment=...): mjax compiles "
                                      "for the devices the function was lowered for")
        refuse_symbolic(self._traced.in_avals, "the lowered function")
        placement = self._placement
        backend = get_backend(placement.backend)
        here = placement.platform
        if self._platform is not None and self._platform != here:
            raise ValueError(f"This module was lowered for the '{self._platform}' platform "
                             f"(lower(lowering_platforms=...)) and cannot be compiled for "
                             f"the '{here}' backend it runs on")
        module, finishing = self._module, finishing_passes(backend)
        if finishing:     # (host callbacks readied on a copy: as_text shows them lowered)
            module = clone_module(module)
        with context(), ir.Location.unknown(context()):
            printed = print_for_backend(module, finishing, self._layout is not None)
        options = xla_compile_options(compiler_options)
        if self._layout is not None:
            mesh = self._layout[2]
            compiled = Compiled(self._traced, compile_printed(
                printed, backend, list(mesh.devices.flat), num_partitions=mesh.size,
                out_avals=self._traced.out_avals, options=options),
                self._layout, self._donation)
        else:
            compiled = Compiled(self._traced, compile_printed(
                printed, backend, placement.devices, out_avals=self._traced.out_avals,
                options=options), donation=self._donation)
            compiled._placement = placement
        compiled._layouts = self._layouts
        return compiled


class Compiled(_Signature):
    """Callable executable; `.as_text()` is XLA's optimized HLO."""
    _layouts = None    # the layouts of Formats jit was given (mjax/specs/layout.py)
    _placement = _DEFAULT_PLACEMENT   # where it runs (Lowered's; one device)

    def __init__(self, traced, executable, layout=None, donation=((), ())):
        self._traced = traced
        self._donation = donation
        self._exe = executable
        self._layout = layout
        self._const_bufs = None

    def as_text(self):
        return self._exe.hlo_text()

    def cost_analysis(self):
        return self._exe.cost_analysis()

    def memory_analysis(self):
        analysis = getattr(self._exe, "memory_analysis", None)
        if analysis is None:
            raise NotImplementedError(f"Compiled.memory_analysis: the "
                                      f"{type(self._exe).__name__} backend reports no memory "
                                      f"statistics")
        return analysis()

    @property
    def input_formats(self):
        """The arguments' Formats: the layouts XLA compiled for, with their shardings, as
        the (args, kwargs) pytree. JAX: same name."""
        flat = trace_trees.tree_leaves(self.input_shardings)
        return tree_util.tree_unflatten(self._traced.in_tree, layout_api.executable_formats(
            self._exe, flat, len(flat), outputs=False))

    @property
    def output_formats(self):
        """The results' Formats (layouts and shardings). JAX: same name."""
        flat = trace_trees.tree_leaves(self.output_shardings)
        return tree_util.tree_unflatten(self._traced.out_tree, layout_api.executable_formats(
            self._exe, flat, len(flat), outputs=True))

    @property
    def input_shardings(self):
        """The arguments' shardings, as the (args, kwargs) pytree. JAX: same name."""
        n = len(self._traced.in_avals)
        flat = (list(self._layout[0][:n]) if self._layout is not None else
                [SingleDeviceSharding(self._exe.devices[0])] * n)
        return tree_util.tree_unflatten(self._traced.in_tree, flat)

    @property
    def output_shardings(self):
        """The results' shardings (those XLA chose where none was asked for)."""
        avals = self._traced.out_avals
        if self._layout is None:
            kinds = getattr(self._exe, "out_memory_kinds", None) or [None] * len(avals)
            flat = [SingleDeviceSharding(self._exe.devices[0], memory_kind=k)
                    for k in kinds]      # (the memory XLA gives each: mjax/specs/memory_kinds.py)
        else:
            # (a result XLA left on one device comes back as a marker with its device)
            flat = [s if isinstance(s, Sharding) else SingleDeviceSharding(s.device)
                    for s in spmd.result_shardings(avals, self._layout[1], self._exe,
                                                   self._layout[2])]
        return tree_util.tree_unflatten(self._traced.out_tree, flat)

    def __call__(self, *args, **kwargs):
        leaves, in_tree = trace_trees.tree_flatten((args, kwargs))
        if in_tree != self._traced.in_tree:
            raise TypeError(f"Compiled function called with a different argument structure "
                            f"than it was compiled for: {in_tree} vs {self._traced.in_tree}")
        avals = [aval_of_value(x).strip_weak_type() for x in leaves]
        if avals != [a.strip_weak_type() for a in self._traced.in_avals]:
            raise TypeError(f"Compiled function called with argument types "
                            f"{[a.str_short() for a in avals]}, but was compiled for "
                            f"{[a.str_short() for a in self._traced.in_avals]}")
        if getattr(self._exe, "custom_layouts", False) or \
                self._layouts is not None:
            # (compiled for layouts, default ones included: committed arrays must match)
            layout_api.check_compiled_args(leaves, self._exe, avals, self._traced)
        if self._layout is not None:
            return self._call_spmd(leaves, avals)
        placement = self._placement
        if not placement.pinned:
            _check_committed(leaves, self._exe.devices[0], placement, self._traced)
        backend = get_backend(placement.backend)
        if self._const_bufs is None:
            self._const_bufs = [c._buf if isinstance(c, Array) else
                                backend.put(to_numpy(c)) for c in self._traced.captured]
        bufs = [x._buf if isinstance(x, Array) else backend.put(to_numpy(x))
                for x in leaves] + self._const_bufs
        if placement.devices is not None:     # (those elsewhere copied to its device)
            bufs = on_device(bufs, placement.devices[0])
        arrays = execute(self._exe, bufs, self._traced.out_avals, leaves)
        if getattr(self._exe, "custom_layouts", False):
            layout_api.mark_laid_out(arrays)
        if placement.commit:
            commit_tree(arrays)
        return restore_float0(tree_util.tree_unflatten(self._traced.out_tree, arrays))

    def _call_spmd(self, leaves, avals):
        in_shardings, out_shardings, mesh = self._layout
        bufs = [spmd.put_for(x, a, sh) for x, a, sh in zip(
            leaves + list(self._traced.captured),
            avals + [aval_of_value(c) for c in self._traced.captured], in_shardings)]
        outs = execute(self._exe, bufs, None, leaves)
        arrays = spmd.wrap_outputs(outs, self._traced.out_avals, out_shardings, self._exe,
                                   mesh)
        return restore_float0(tree_util.tree_unflatten(self._traced.out_tree, arrays))


def _check_committed(leaves, device, placement, traced) -> None:
    """JAX's ValueError for committed arrays on other devices than the one a program was
    compiled for (without jit(device=/backend=), which takes them there)."""
    bad = [k for k, x in enumerate(leaves) if isinstance(x, Array) and
           getattr(x, "_committed", False) and x.devices() != {device}]
    if not bad:
        return
    names = (placement.arg_names() if placement.arg_names is not None else
             layout_api.arg_names(None, traced.in_tree, True))
    lines = [f"Argument {names[k]} with shape {leaves[k].aval}:\n"
             f"  Passed sharding: {leaves[k].sharding}\n"
             f"  Required sharding: {SingleDeviceSharding(device)}" for k in bad[:5]]
    count = (f"the {len(bad)} mismatches" if len(bad) < 5 else
             f"5 mismatches out of {len(bad)}")
    raise ValueError(f"Computation was compiled for input shardings that disagree with "
                     f"the shardings of arguments passed to it. Here are {count}:\n" +
                     "\n".join(lines))


# ---- JAX's remaining jax.stages names ------------------------------------------------
CompilerOptions = dict[str, Union[str, bool]]   # XLA compile options: name -> value


@dataclasses.dataclass(frozen=True, slots=True)
class ArgInfo:
    """One argument of a lowered function: its aval and whether it is donated."""
    _aval: Any
    donated: bool

    @property
    def shape(self):
        return self._aval.shape

    @property
    def dtype(self):
        return self._aval.dtype


class Wrapped(Protocol):
    """A function wrapped by jit: callable, and staged with `.trace`/`.lower`."""

    def __call__(self, *args, **kwargs): ...

    def trace(self, *args, **kwargs) -> Traced: ...

    def lower(self, *args, **kwargs) -> Lowered: ...
