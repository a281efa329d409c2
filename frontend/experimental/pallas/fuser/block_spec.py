"""get_fusion_values, pull_block_spec, push_block_spec: a fusion's values and BlockSpecs
for a Pallas kernel. JAX: pallas/fuser/block_spec.py (the rules: block_rules.py).
"""
from __future__ import annotations

import dataclasses
import functools
import weakref

from mjax.base import tree_util
from mjax.base.traceback_util import api_boundary
from mjax.jaxpr.objects import Jaxpr, eval_jaxpr
from mjax.ref import Ref
from mjax.dialect.types import KeyType
from mjax import random
from mjax.lax.prng import PRNGKeyArray
from mjax.experimental.pallas.core import BlockSpec, MemorySpace, no_block_spec
from mjax.experimental.pallas.fuser import block_rules  # noqa: F401  (fills the tables)
from mjax.experimental.pallas.fuser import block_rules_calls  # noqa: F401
from mjax.experimental.pallas.fuser import block_rules_more  # noqa: F401
from mjax.experimental.pallas.fuser import block_rules_stack  # noqa: F401
from mjax.experimental.pallas.fuser import block_rules_prng  # noqa: F401
from mjax.experimental.pallas.fuser import block_rules_ref  # noqa: F401
from mjax.experimental.pallas.fuser.block_push import push_jaxpr
from mjax.experimental.pallas.fuser import jaxpr_util, stateful
from mjax.experimental.pallas.fuser.block_pull import pull_jaxpr
from mjax.experimental.pallas.fuser.block_types import (BlockIndexTransform, Usage,
                                                        current_scalar_prefetch,
                                                        scalar_prefetch_context)
from mjax.experimental.pallas.fuser.block_usage import compute_usage
from mjax.experimental.pallas.fuser.kernel_fn import make_kernel_function

__all__ = ["BlockIndexTransform", "get_fusion_values", "get_stateful_input_fusion_values",
           "get_stateful_output_fusion_values", "make_scalar_prefetch_handler",
           "pull_block_spec", "push_block_spec"]


@functools.partial(api_boundary)
def make_scalar_prefetch_handler(*args):
    """A handler picking one fusion's scalar-prefetch values out of all of a kernel's
    (`sp[args[0]][args[1]]...`)."""
    def getter(*sp_inputs):
        result = sp_inputs
        for i in args:
            result = result[i]
        return result
    return getter


class _FusionKernelFn:
    """What get_fusion_values returns as the fusion's function: called as
    `fn(values, *args)` it computes the fusion; pull_block_spec reads its jaxpr."""

    def __init__(self, jaxpr: Jaxpr, is_sp, sp_values, out_tree, n_extra=0, is_key=()):
        self.jaxpr, self.is_sp, self.sp_values = jaxpr, is_sp, list(sp_values)
        self.out_tree, self.n_extra = out_tree, n_extra
        self.is_key = list(is_key) or [False] * len(is_sp)

    def _merged(self, values):
        values, sps, out = iter(values), iter(self.sp_values), []
        for sp in self.is_sp:
            out.append(next(sps) if sp else next(values))
        return out

    def __call__(self, values, *args, **kwargs):
        n = len(self.is_sp) - sum(self.is_sp)
        if len(values) != n:
            raise ValueError(f"the fusion takes {n} values, got {len(values)}")
        values = [v[...] if isinstance(v, Ref) else v for v in values]   # (stateful)
        # (the jaxpr takes a closed-over key's data: block_rules_prng.closed_over_keys)
        consts = [random.key_data(x) if key and isinstance(x, PRNGKeyArray) else x
                  for x, key in zip(self._merged(values), self.is_key)]
        outs = eval_jaxpr(self.jaxpr, consts,
                          *tree_util.tree_leaves((args, kwargs)))
        if self.n_extra:      # (the new values of the Refs a stateful fusion writes)
            n = len(outs) - self.n_extra
            return tree_util.tree_unflatten(self.out_tree, outs[:n]), tuple(outs[n:])
        return tree_util.tree_unflatten(self.out_tree, outs)

    def pull_jaxpr(self, args, kwargs):
        """(jaxpr over (values, *args) with the scalar-prefetch values as constvars,
        those values, in_tree)."""
        regular = [v for v, sp in zip(self.jaxpr.constvars, self.is_sp) if not sp]
        sp_vars = [v for v, sp in zip(self.jaxpr.constvars, self.is_sp) if sp]
        in_tree = tree_util.tree_structure((args, kwargs))
        flat = tree_util.tree_leaves((args, kwargs))
        n_values = len(tree_util.tree_leaves(args[0])) if args else 0
        if len(flat) - n_values != len(self.jaxpr.invars) or n_values != len(regular):
            raise ValueError(
                f"pull_block_spec: the fusion function takes its {len(regular)} values "
                f"and {len(self.jaxpr.invars)} arguments, got {len(flat)} leaves")
        jaxpr = self.jaxpr.replace(constvars=sp_vars,
                                   invars=regular + list(self.jaxpr.invars))
        return jaxpr, list(self.sp_values), in_tree


@functools.partial(api_boundary)
def get_fusion_values(fusion, *args, **kwargs):
    """(fn, values, scalar_prefetch_values): the arrays `fusion` reads, split into
    those a kernel gets in blocks and those only used as scalar indices, and `fn(values,
    *args)` computing the fusion from them."""
    return _get_fusion_values(fusion, args, kwargs)


@functools.partial(api_boundary)
def get_stateful_input_fusion_values(fusion, *args, **kwargs):
    """get_fusion_values for a fusion that reads (or writes) Refs: the Refs are among
    the values and `fn` takes their contents (its writes are dropped, as JAX's)."""
    return _get_fusion_values(fusion, args, kwargs, discharge_refs=True)


@functools.partial(api_boundary)
def get_stateful_output_fusion_values(fusion, *args, **kwargs):
    """get_stateful_input_fusion_values for an output fusion: `fn` also returns the new
    values of the Refs the fusion writes, `(outputs, extra)`, and the fourth result maps
    each extra output's index (after the outputs) to its Ref's index in the values."""
    return _get_fusion_values(fusion, args, kwargs, discharge_refs=True,
                              allow_additional_outputs=True)


# (one Ref object per traced Ref, so fusions reading the same Ref give the same value
# object, as JAX's do: a fusible can tell a Ref its output fusion writes by identity.
# A Ref holds its tracer, so the id is not reused while the entry lives)
_REFS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _ref_of(tracer) -> Ref:
    ref = _REFS.get(id(tracer))
    if ref is None or ref._tracer is not tracer:
        ref = _REFS[id(tracer)] = Ref(tracer=tracer)
    return ref


def _get_fusion_values(fusion, args, kwargs, discharge_refs=False,
                       allow_additional_outputs=False):
    jaxpr, values, _, out_tree = jaxpr_util.trace(fusion, *args, **kwargs)
    written_vars = []
    if any(stateful.is_ref_var(v) for v in jaxpr.constvars):
        if not discharge_refs:
            raise ValueError("Ref values are only supported in get_fusion_values when "
                             "discharge_refs is True.")
        # (a traced Ref is captured as its memref value: the values hold Refs, as JAX's)
        values = [_ref_of(c) if stateful.is_ref_var(v) and not isinstance(c, Ref)
                  else c for v, c in zip(jaxpr.constvars, values)]
        jaxpr, values, written = stateful.discharge(jaxpr, values)
        if allow_additional_outputs and written:
            order = sorted(written)
            written_vars = [jaxpr.constvars[k] for k in order]
            jaxpr = jaxpr.replace(outvars=[*jaxpr.outvars, *(written[k] for k in order)])
    n_out = len(jaxpr.outvars) - len(written_vars)
    jaxpr, values = jaxpr_util.prune_inputs(jaxpr_util.dce(jaxpr), values,
                                            keep=written_vars)
    values, is_key = block_rules_prng.closed_over_keys(jaxpr, values)
    read_usage = compute_usage(jaxpr, [{Usage.REGULAR}] * len(jaxpr.outvars))
    is_sp = [Usage.SCALAR_PREFETCH in read_usage(v) for v in jaxpr.constvars]
    regular = tuple(x for x, sp in zip(values, is_sp) if not sp)
    sp_values = tuple(x for x, sp in zip(values, is_sp) if sp)
    fn = _FusionKernelFn(jaxpr, is_sp, sp_values, out_tree, n_extra=len(written_vars),
                         is_key=is_key)
    if allow_additional_outputs:
        aliases = {n_out + j: jaxpr.constvars.index(v) for j, v in enumerate(written_vars)}
        return fn, regular, sp_values, aliases
    return fn, regular, sp_values


def _unwrap_scalar_prefetch(spec):
    """`spec` with an index map of the grid indices only, reading the scalar-prefetch
    refs of the kernel instance from the context."""
    if spec is no_block_spec or spec.index_map is None:
        return spec

    def index_map(*grid):
        sp = current_scalar_prefetch()
        if sp is None:
            raise ValueError("pull_block_spec: a block index needs the scalar-prefetch "
                             "values, and none are set")
        return spec.index_map(*grid, *sp)
    return _replace(spec, index_map=index_map)


def _wrap_scalar_prefetch(spec, grid_len):
    """`spec` with an index map of (grid indices, scalar-prefetch refs), as pallas_call
    calls it."""
    if spec is None or spec is no_block_spec or spec.index_map is None:
        return spec
    if grid_len is None:
        return spec

    def index_map(*args):
        grid, sp = args[:grid_len], args[grid_len:]
        with scalar_prefetch_context(*sp):
            return spec.index_map(*grid)
    return _replace(spec, index_map=index_map)


def _key_space(spec, arg):
    """A key argument's unblocked BlockSpec is in the KEY memory space, as JAX's (mjax's
    jaxpr takes the key's data, which random_wrap makes a key again)."""
    if (isinstance(arg, PRNGKeyArray) or isinstance(getattr(arg, "dtype", None),
                                                    KeyType)) and \
            isinstance(spec, BlockSpec) and spec.block_shape is None and \
            spec.memory_space is None:
        return _replace(spec, memory_space=MemorySpace.KEY)
    return spec


def _replace(spec, **changes):
    return dataclasses.replace(spec, **changes)


@functools.partial(api_boundary)
def pull_block_spec(f, out_block_specs, *, scalar_prefetch_handler=None,
                    grid_len: int | None = None, strict_mode: bool = True):
    """pull_block_spec(f, out_specs)(*args) -> (kernel_fn, arg_specs, kwarg_specs): the
    BlockSpecs of `f`'s inputs that give its outputs the blocks of `out_block_specs`,
    and `kernel_fn(program_ids, scalar_prefetch, *blocks)` computing an output block."""
    def wrapped(*args, **kwargs):
        if isinstance(f, _FusionKernelFn):
            jaxpr, consts, in_tree = f.pull_jaxpr(args, kwargs)
        else:
            jaxpr, consts, in_tree, _ = jaxpr_util.trace(f, *args, **kwargs)
        jaxpr = jaxpr_util.dce(jaxpr)
        specs = tree_util.tree_map(_unwrap_scalar_prefetch, out_block_specs,
                                   is_leaf=lambda s: s is no_block_spec)
        flat_specs, out_tree = tree_util.tree_flatten(
            specs, is_leaf=lambda s: s is no_block_spec)
        if len(flat_specs) != len(jaxpr.outvars):
            raise ValueError(f"pull_block_spec: {len(flat_specs)} output BlockSpecs for "
                             f"{len(jaxpr.outvars)} outputs")
        read_usage = compute_usage(jaxpr, [{Usage.REGULAR}] * len(jaxpr.outvars))
        in_specs, env = pull_jaxpr(jaxpr, tuple(flat_specs), read_usage=read_usage,
                                   scalar_prefetch_handler=scalar_prefetch_handler,
                                   grid_len=grid_len, strict_mode=strict_mode)
        kernel_fn = make_kernel_function(jaxpr, consts, in_tree, out_tree, read_usage,
                                         in_specs, env, scalar_prefetch_handler, grid_len)
        in_specs = [_wrap_scalar_prefetch(_key_space(s, x), grid_len) for s, x in
                    zip(in_specs, tree_util.tree_leaves((args, kwargs)))]
        arg_specs, kwarg_specs = tree_util.tree_unflatten(in_tree, in_specs)
        return kernel_fn, arg_specs, kwarg_specs
    return wrapped


@functools.partial(api_boundary)
def push_block_spec(f, *in_spec_args, **in_spec_kwargs):
    """push_block_spec(f, *in_specs)(*args): the BlockSpecs of `f`'s outputs when its
    inputs are blocked by `in_specs`."""
    def wrapper(*args, **kwargs):
        flat_specs, spec_tree = tree_util.tree_flatten(
            (in_spec_args, in_spec_kwargs), is_leaf=lambda s: s is no_block_spec)
        jaxpr, _, in_tree, out_tree = jaxpr_util.trace(f, *args, **kwargs)
        if in_tree != spec_tree:
            raise ValueError(f"Expected {in_tree} PyTree, got {spec_tree}")
        return tree_util.tree_unflatten(out_tree, push_jaxpr(jaxpr, *flat_specs))
    return wrapper
