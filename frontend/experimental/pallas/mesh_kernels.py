"""`pl.core_map`: a zero-argument kernel run once per core of a mesh, closing over refs
(`jax.new_ref` arrays in HBM) that it reads and writes with DMAs and `pl.run_scoped`
scratch. JAX: pallas/core.py (core_map) and its TensorCore discharge rule
(pallas/mosaic/core.py, pallas/mpmd.py).

As JAX does, a core_map over a mesh of n cores (one axis; a v4/v5p chip has 2) becomes a
`pallas_call` over a grid of one point per core (the core axis, `parallel`): its
operands are the current values of the refs the body closes over (pl.ANY memory), its
results the values of those it writes, aliased to them and written back into the Refs.
The body is traced twice: first to find the refs it uses and which it writes (that
function is then erased), then as the kernel, where each of those Refs is the kernel's
ref of its operand (mjax.ref.kernel_view), and `lax.axis_index(axis)` is the kernel's
program id (axis_size n). Scalars the body closes over are operands before the refs,
SMEM arrays of shape (1,) read at element 0 (JAX's pass_scalars_as_refs; their window is
a pallas_call block, where JAX's mesh lowering gives an affine map). `pl.kernel` is
`mesh_call` on arrays, `kernel_on_refs` given refs, the same kernel wrapper as JAX's
mpmd_map. Cores signal and copy to each other with core_index= / a device_id naming the
core axis (tpu_cores.py) and `core_barrier`.
"""
from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

from mjax import lax
from mjax import ref as array_refs
from mjax.base import trace_trees, tree_util
from mjax.dialect import context
from mjax.dialect.ops import control_flow as CF
from mjax.dialect.ops import pallas_tpu as PT
from mjax.dialect.ops import state as S
from mjax.dialect.types import RefAval
from mjax.dialect.values import attr, string_attr
from mjax.experimental.pallas.core import ANY, BlockSpec
from mjax.experimental.pallas.pallas_call import (_fun_name, _is_scratch_leaf,
                                                  _module_names, _scratch_aval, pallas_call)
from mjax.experimental.pallas.memory import semaphore_signal, semaphore_wait
from mjax.experimental.pallas.primitives import KernelContext, program_id, when
from mjax.experimental.pallas.ref import Ref as KernelRef
from mjax.jit.jitted import jit
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct
from mjax.tracing.axis_env import AXIS_ENV
from mjax.tracing.core import Trace, aval_of_value, current_trace
from mjax.tracing.source_info import named_scope

# Ops that only read the refs among their operands; a DMA reads its source (operand 0)
# and writes its destination and semaphores; other ops holding a ref write it (JAX's
# effects of these primitives).
_READS = (S.RefGetOp, S.MaskedLoadOp, S.StridedGetOp, PT.SemaphoreReadOp)


def _region_args(op, k: int) -> list:
    """(block, argument) of `op`'s regions for the arguments that stand for its operand
    `k`; None where mjax does not know how the op passes operands into its regions."""
    view = op.opview
    blocks = [r.blocks[0] for r in op.regions if len(r.blocks)]
    if isinstance(view, (PT.RunScopedOp, CF.ScanOp)):     # (consts first, in order)
        return [(b, b.arguments[k]) for b in blocks if k < len(b.arguments)]
    if isinstance(view, CF.CondOp):                       # (index, *ops)
        return [(b, b.arguments[k - 1]) for b in blocks if 0 < k <= len(b.arguments)]
    if isinstance(view, CF.WhileOp):        # (*cond_consts, *body_consts, *init)
        nc, nb = attr(op, "cond_nconsts", 0), attr(op, "body_nconsts", 0)
        cond, body = blocks
        if k < nc:
            return [(cond, cond.arguments[k])]
        if k < nc + nb:
            return [(body, body.arguments[k - nc])]
        c = k - nc - nb
        return [(cond, cond.arguments[nc + c]), (body, body.arguments[nb + c])]
    return None


def _writes(block, value) -> bool:
    """Whether an op of `block` (or of a region inside it) writes the ref `value`."""
    for op in block.operations:
        op = op.operation
        ks = [k for k, v in enumerate(op.operands) if v == value]
        if not ks:
            continue
        view = op.opview
        if len(op.regions):
            for k in ks:
                args = _region_args(op, k)
                if args is None:
                    return True           # (an op mjax cannot see into: written)
                if any(_writes(b, a) for b, a in args):
                    return True
            continue
        if isinstance(view, _READS):
            continue
        if isinstance(view, PT.DmaStartOp) and ks == [0]:
            continue
        if isinstance(view, PT.DmaWaitOp) and all(k >= 2 for k in ks):
            continue                      # (the source a wait names)
        return True
    return False


@contextlib.contextmanager
def _closed_over(view):
    """The Refs a kernel's body closes over are its refs, as `view` gives them."""
    saved, array_refs.kernel_view = array_refs.kernel_view, view
    try:
        yield
    finally:
        array_refs.kernel_view = saved


def _scratch(scratch_shapes):
    """(the scratch avals, what the body gets: the scratch refs as its arguments)."""
    leaves, tree = trace_trees.tree_flatten(scratch_shapes, is_leaf=_is_scratch_leaf)
    return [_scratch_aval(s) for s in leaves], tree


def _body_args(tree, refs, scratch_shapes) -> tuple[list, dict]:
    if isinstance(scratch_shapes, dict):
        return [], dict(tree_util.tree_unflatten(tree, refs))
    return list(tree_util.tree_unflatten(tree, refs)), {}


def _find_refs(f, axis, scratch_shapes, name, cores=1):
    """Traces `f` once into a throwaway function: the Refs it closes over, in the order it
    first uses them, and whether it writes each."""
    module = current_trace().module
    before = _module_names(module)
    avals, tree = _scratch(scratch_shapes)
    trace = Trace(module, f"{name}_core_map_refs", avals, visibility="private")
    trace.census = None                  # (erased below: the passes never see it)
    order, views = [], {}

    def view(ref):
        hit = views.get(id(ref))
        if hit is None:
            hit = views[id(ref)] = KernelRef(trace.to_tracer(ref))
            order.append(ref)
        return hit

    try:
        with context(), trace, KernelContext(trace, (cores,)), _closed_over(view), \
                AXIS_ENV.indexed(axis, cores, lambda: program_id(0)):
            args, kwargs = _body_args(tree, [KernelRef(t) for t in trace.args],
                                      scratch_shapes)
            if f(*args, **kwargs) is not None:
                raise ValueError(f"The kernel function in core_map {name} should return "
                                 f"None (it writes the refs it closes over)")
        refs = [views[id(r)].tracer.value for r in order]
        written = [_writes(trace.block, v) for v in refs]
        others = [c for c in trace.captured if type(aval_of_value(c)) is not RefAval]
    finally:
        for op in list(module.body.operations):
            op = op.operation
            if string_attr(op, "sym_name", None) not in before | {None}:
                op.erase()
    scalars = [c for c in others if not aval_of_value(c).shape]
    others = [c for c in others if aval_of_value(c).shape]
    if others:
        consts = [aval_of_value(c).str_short() for c in others]
        raise ValueError(f"The kernel function in core_map {name} captures non-scalar "
                         f"constants {consts}. You should pass them as inputs.")
    return order, written, scalars


def _params(compiler_params, refusal="dimension_semantics must be None for TensorCoreMesh"
            ) -> dict:
    """The TPU compiler parameters of the call: the user's, the core axis `parallel`
    (`refusal`: JAX's error where the user gives dimension_semantics)."""
    fields = {}
    if compiler_params is not None:
        if getattr(compiler_params, "mjax_backend", None) != "mosaic_tpu":
            raise ValueError("compiler_params must be a pltpu.CompilerParams")
        fields = {f.name: getattr(compiler_params, f.name)
                  for f in dataclasses.fields(compiler_params)}
        if fields.get("dimension_semantics") is not None:
            raise ValueError(refusal)
    fields["dimension_semantics"] = ("parallel",)
    return {"mosaic_tpu": fields}


def _stage(f, mesh, axis, cores, compiler_params, interpret, debug, cost_estimate, name,
           scratch_shapes, metadata=None):
    order, written, scalars = _find_refs(f, axis, scratch_shapes, name, cores)
    for r in order:
        if type(r) is not array_refs.Ref:
            raise NotImplementedError(f"core_map {name} closes over {r!r}: mjax's core_map "
                                      f"takes refs of arrays")
    outs = [i for i, w in enumerate(written) if w]
    n_in, n_out, n_s = len(order), len(outs), len(scalars)
    avals, tree = _scratch(scratch_shapes)

    def kernel(*refs):
        _scalars_from_smem(scalars, refs[:n_s])
        refs = refs[n_s:]
        mine = {id(r): k for r, k in zip(order, refs[:n_in])}

        def view(ref):
            hit = mine.get(id(ref))
            if hit is None:
                raise ValueError(f"core_map {name}: its body used a Ref on its second "
                                 f"trace that its first did not ({ref!r}); the body must "
                                 f"trace the same way each time")
            return hit
        args, kwargs = _body_args(tree, list(refs[n_in + n_out:]), scratch_shapes)
        with _closed_over(view), AXIS_ENV.indexed(axis, cores, lambda: program_id(0)):
            f(*args, **kwargs)

    kernel.__name__ = name
    call = pallas_call(
        kernel, [ShapeDtypeStruct(order[i].shape, order[i].dtype) for i in outs],
        grid=(cores,), in_specs=[BlockSpec(memory_space="smem")] * n_s +
        [BlockSpec(memory_space=ANY)] * n_in,
        out_specs=[BlockSpec(memory_space=ANY)] * n_out,
        scratch_shapes=[] if not avals else list(trace_trees.tree_leaves(
            scratch_shapes, is_leaf=_is_scratch_leaf)),
        input_output_aliases={n_s + i: j for j, i in enumerate(outs)}, debug=debug,
        interpret=interpret, name=name, compiler_params=_params(compiler_params),
        cost_estimate=cost_estimate, metadata=metadata)
    call.shared_aliases = True      # (the kernel writes the refs through its inputs)
    call.mesh_kernel = True
    values = call(*[x[None] for x in scalars], *[r[...] for r in order])
    for i, v in zip(outs, values):
        order[i][...] = v


def _scalars_from_smem(scalars, smem_refs):
    """The scalars the body closes over are read from their SMEM refs of shape (1,),
    the kernel's first operands, as JAX passes them (pass_scalars_as_refs): the kernel's
    trace takes each ref's element 0 for the outer value wherever the body uses it."""
    trace = current_trace()
    for outer, ref in zip(scalars, smem_refs):
        # (seeded into the trace's capture table: a use of `outer` is this value)
        trace._captured_ids[id(outer)] = (outer, trace.to_tracer(ref[0]))


# (JAX's lowering of pl.kernel refuses them so; its interpret mode ignores them)
_MPMD_SEMANTICS = "mpmd_map does not support dimension_semantics= in compiler_params="


def mesh_call(body, out_type, mesh, n_in, *, scratch_types, compiler_params, interpret,
              cost_estimate, debug, name, aliases=None, metadata=None):
    """pl.kernel's call on arrays over a mesh of cores, as JAX's (its mpmd_map): a
    pallas_call over a grid of one point per core (the core axis, `parallel`) whose refs
    are whole arrays in pl.ANY memory, the core index the kernel's first argument;
    inside, `lax.axis_index` of the mesh axis is the program id."""
    axis, cores = mesh_axis(mesh, "pl.kernel")
    n_out = len(trace_trees.tree_leaves(
        out_type, is_leaf=lambda x: hasattr(x, "shape") and hasattr(x, "dtype")))

    def kernel(*refs):
        with AXIS_ENV.indexed(axis, cores, lambda: program_id(0)):
            body(*refs)

    kernel.__name__ = name or _fun_name(body)
    call = pallas_call(kernel, out_type, grid=(cores,),
                       in_specs=[BlockSpec(memory_space=ANY)] * n_in,
                       out_specs=[BlockSpec(memory_space=ANY)] * n_out,
                       scratch_shapes=scratch_types, interpret=interpret,
                       input_output_aliases=aliases or {},
                       compiler_params=_params(compiler_params, _MPMD_SEMANTICS),
                       cost_estimate=cost_estimate, debug=debug, name=name,
                       metadata=metadata)
    call.mesh_kernel = True
    return call


def kernel_on_refs(body, out_type, mesh, refs, *, scratch_types, name, **params):
    """pl.kernel given refs (`refs`, the flat arguments), as JAX's: one operand per ref,
    results the `out_type` arrays then the refs the body writes (aliased to their
    operands, written back into the Refs); the body gets the operands' refs, the
    results' refs of out_type and the scratch. Its kernel is named `new_body` as JAX's
    (the function its discharge of the refs makes) unless `name` is given."""
    is_leaf = lambda x: hasattr(x, "shape") and hasattr(x, "dtype")       # noqa: E731
    out_leaves, out_tree = trace_trees.tree_flatten(out_type, is_leaf=is_leaf)
    outs = [ShapeDtypeStruct(tuple(o.shape), o.dtype) for o in out_leaves]
    kname = name or "new_body"
    dict_scratch = isinstance(scratch_types, dict)

    def call_body(ins, out_refs, scratch):
        if dict_scratch:
            body(*ins, *out_refs, **scratch)
        else:
            body(*ins, *out_refs, *scratch)

    axis, cores = mesh_axis(mesh, "pl.kernel")
    # (the first trace: which refs the body writes; out_type's refs are its arguments)
    order, written, scalars = _find_refs(lambda o, sc: call_body(refs, o, sc), axis,
                                         (outs, scratch_types), kname, cores)
    if scalars:
        raise NotImplementedError(f"pl.kernel {kname} given refs closes over scalars "
                                  f"{[aval_of_value(c).str_short() for c in scalars]}: "
                                  f"mjax does not support it (pass them as inputs)")
    wrote = {id(r) for r, w in zip(order, written) if w}
    changed = [i for i, r in enumerate(refs) if id(r) in wrote]
    n_in, n_out = len(refs), len(outs)

    def wrapped(*kernel_refs):
        ins = kernel_refs[:n_in]
        rest = kernel_refs[n_in + n_out + len(changed):]
        scratch = tree_util.tree_unflatten(_scratch(scratch_types)[1], list(rest))
        call_body(ins, kernel_refs[n_in:n_in + n_out], scratch)

    wrapped.__name__ = kname
    call = mesh_call(wrapped, [*outs, *[ShapeDtypeStruct(refs[i].shape, refs[i].dtype)
                                        for i in changed]],
                     mesh, n_in, name=kname, scratch_types=list(trace_trees.tree_leaves(
                         scratch_types, is_leaf=_is_scratch_leaf)),
                     aliases={i: n_out + j for j, i in enumerate(changed)}, **params)
    call.shared_aliases = True      # (the kernel writes the refs through its inputs)
    values = call(*[r[...] for r in refs])
    for j, i in enumerate(changed):
        refs[i][...] = values[n_out + j]
    return tree_util.tree_unflatten(out_tree, list(values[:n_out]))


def core_map(mesh, *, compiler_params=None, interpret=False, debug=False,
             cost_estimate=None, name=None, metadata=None, scratch_shapes=()):
    """A decorator running the decorated zero-argument function once per core of `mesh`
    (at once; it returns None), with its scratch refs as arguments (`scratch_shapes`); it
    reads and writes the Refs it closes over (pl.ANY memory: DMAs, pltpu.sync_copy) and
    `lax.axis_index(axis)` is its core's index. As JAX's, a kernel over a grid of one
    point per core (`parallel`); meshes of one axis. JAX: pl.core_map."""
    axis, cores = mesh_axis(mesh, "pl.core_map")

    def wrapped(f):
        kname = name or _fun_name(f)
        run = lambda: _stage(f, mesh, axis, cores, compiler_params, interpret,  # noqa: E731
                             debug, cost_estimate, kname, scratch_shapes, metadata)
        if current_trace() is None:
            jit(run)()
        else:
            run()
        return None
    return wrapped


_SEVERAL_AXES = {  # (JAX's errors: its core_map's discharge rule, its mpmd_map)
    "pl.core_map": "Mesh must be 1D",
    "pl.kernel": "TensorCoreMesh with more than one dimension is not supported."}


def mesh_axis(mesh, what: str) -> tuple[str, int]:
    """(the axis name, the core count) of a mesh of one axis; JAX's NotImplementedError
    for a TensorCore mesh of several axes (`what`: pl.core_map or pl.kernel)."""
    shape = dict(getattr(mesh, "shape", {}) or {})
    if len(shape) != 1:
        raise NotImplementedError(_SEVERAL_AXES[what])
    (axis, cores), = shape.items()
    return axis, int(cores)


def core_barrier(sem, *, core_axis_name: str) -> None:
    """Waits until every core of the axis `core_axis_name` reaches this point: each
    signals `sem` (a regular semaphore, e.g. the barrier semaphore) on every other core,
    then waits for the others' signals; nothing on an axis of one core.
    JAX: pltpu.core_barrier."""
    cores = lax.axis_size(core_axis_name)
    me = lax.axis_index(core_axis_name)

    @when(cores > 1)
    def _():
        with named_scope("sync_cores"):
            for i in range(cores):
                @when(me != i)
                def _():
                    semaphore_signal(sem, 1, core_index=i)
            semaphore_wait(sem, cores - 1)


__all__ = ["core_barrier", "core_map", "kernel_on_refs", "mesh_axis", "mesh_call"]
