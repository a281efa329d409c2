"""`fusible`: a function that receives its inputs and outputs as `Fusion`s.

JAX: jax.experimental.pallas.fuser.fusible. Called on its own, a fusible gets trivial
fusions (each input's value; `None` for each output fusion) and returns what it returns.
While `fuse` traces a function, a fusible call is staged as one `fusible` equation (a
user primitive of mjax: docs/extending.md) carrying the Python function, so `fuse` can
find it in the traced jaxpr and call the function with the fusions it builds.
"""
from __future__ import annotations

import functools
import threading
from typing import Any

from mjax.base import tree_util
from mjax.base.traceback_util import api_boundary
from mjax.arrays.sharding_types import typeof
from mjax.dialect.types import ShapedArray
from mjax import lax
from mjax.tracing.core import current_trace
from mjax.tracing.primitive import BATCHERS, LOWERINGS, LowerFun, Primitive
from mjax.tracing.staging import eval_shape
from mjax.experimental.pallas.fuser.fusion import Fusion

fusible_p = Primitive("fusible")
fusible_p.multiple_results = True


class _Fusing(threading.local):
    depth = 0


FUSING = _Fusing()


def _trivial_fusion(x) -> Fusion:
    return Fusion(func=lambda: x, in_type=((), {}), out_type=typeof(x))


def _no_output_fusions(prefix):
    tree = tree_util.tree_structure(prefix)
    return tree_util.tree_unflatten(tree, [None] * tree.num_leaves)


def call_trivially(func, in_tree, output_fusion_prefix, flat_args):
    """`func` applied to trivial fusions of `flat_args` (a fusible called on its own)."""
    args = tree_util.tree_unflatten(in_tree, flat_args)
    fusions = tree_util.tree_map(_trivial_fusion, args)
    return func(*fusions, _no_output_fusions(output_fusion_prefix))


def _abstract_eval(*avals, out_avals, **_):
    return list(out_avals)


def _trivially(*flat_args, func, in_tree, output_fusion_prefix, **_):
    # (a fusible staged under fuse that fuse does not fuse, e.g. one in a nested jit:
    # fuse only finds the traced function's own equation, as in JAX)
    return tree_util.tree_leaves(call_trivially(func, in_tree, output_fusion_prefix,
                                                flat_args))


def _batch(args, dims, *, func, in_tree, output_fusion_prefix, **_):
    sizes = {a.shape[d] for a, d in zip(args, dims) if d is not None}
    if sizes != {1}:
        raise NotImplementedError("fusible does not support non-trivial batching")
    unbatched = [a if d is None else lax.squeeze(a, (d,)) for a, d in zip(args, dims)]
    outs = _trivially(*unbatched, func=func, in_tree=in_tree,
                      output_fusion_prefix=output_fusion_prefix)
    return [o[None] for o in outs], [0] * len(outs)


fusible_p.def_abstract_eval(_abstract_eval)
BATCHERS[fusible_p] = _batch
fusible_p.def_impl(_trivially)
LOWERINGS.setdefault(fusible_p, {})[None] = LowerFun(_trivially)


@functools.partial(api_boundary)
def fusible(f=None, *, output_fusion_prefix: Any = True):
    """Decorates `f(*input_fusions, output_fusions)`; see the module docstring."""
    def decorator(f):
        @functools.wraps(f)
        def wrapper(*args):
            flat_args, in_tree = tree_util.tree_flatten(args)
            if not FUSING.depth and current_trace() is None:
                return call_trivially(f, in_tree, output_fusion_prefix, flat_args)
            # (under a trace a fusible is one equation, as JAX stages it: fuse finds it;
            # elsewhere it lowers as the trivial call and vmaps only axes of size 1)
            out_shape = eval_shape(
                lambda *xs: call_trivially(f, in_tree, output_fusion_prefix, xs),
                *flat_args)
            flat_out, out_tree = tree_util.tree_flatten(out_shape)
            out_avals = tuple(ShapedArray(o.shape, o.dtype) for o in flat_out)
            outs = fusible_p.bind(*flat_args, func=f, in_tree=in_tree, out_tree=out_tree,
                                  output_fusion_prefix=output_fusion_prefix,
                                  out_avals=out_avals)
            return tree_util.tree_unflatten(out_tree, list(outs))
        return wrapper

    if f is not None:
        return decorator(f)
    return decorator
