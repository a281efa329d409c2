"""`convert(f)`: an mjax function as a function on TF values.

Each call exports `jit(f)` for the arguments' shapes and dtypes (`mjax.export`, cached
per signature and x64 flag) and runs the module in one XlaCallModule op, eagerly or in
a tf.function, so the graph (and a SavedModel) holds the serialized StableHLO and needs
no mjax to run. JAX: jax2tf.convert.
"""
from __future__ import annotations

import warnings
from typing import Callable, Sequence

import tensorflow as tf

from mjax.specs import dtypes as _dtypes
from mjax import export as _export
from mjax.base import trace_trees, tree_util
from mjax.experimental.jax2tf.call_module import call_exported
from mjax.experimental.jax2tf.dtypes import to_tensor
from mjax.experimental.jax2tf.shapes import arg_specs, tf_shape
from mjax.jit.jitted import Jitted, jit
from mjax.export import SymbolicScope
from mjax.tracing.staging import eval_shape

_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


class _Default:
    """The default of a deprecated option (passing it warns, as in JAX)."""

    def __repr__(self):
        return "<default>"


_DEFAULT = _Default()


def convert(fun_jax: Callable, *, polymorphic_shapes=None,
            polymorphic_constraints: Sequence[str] = (), with_gradient: bool = True,
            enable_xla=_DEFAULT, native_serialization=_DEFAULT,
            native_serialization_platforms: Sequence[str] | None = None,
            native_serialization_disabled_checks: Sequence = ()) -> Callable:
    """A function of TF values (tensors, variables, arrays, scalars; pytrees of them)
    that calls `fun_jax` through an XlaCallModule op. `with_gradient` attaches a
    tf.custom_gradient calling the exported VJP; otherwise gradients are prevented.
    `polymorphic_shapes` with symbolic dimensions ("(b, 4)") export one module for every
    size they allow (`polymorphic_constraints`: constraints between them).
    JAX: jax2tf.convert."""
    for name, value in (("enable_xla", enable_xla),
                        ("native_serialization", native_serialization)):
        if value is not _DEFAULT:
            warnings.warn(f"The `{name}` parameter is deprecated and will be removed in a "
                          f"future version of JAX.", DeprecationWarning, stacklevel=2)
            if value is False:
                # Non-native (op by op) lowering is gone from JAX too.
                raise NotImplementedError(f"jax2tf.convert({name}=False): only native "
                                          f"serialization (XlaCallModule) is supported")
    if native_serialization_platforms:
        if (not isinstance(native_serialization_platforms, (list, tuple))
                or not all(p in _PLATFORMS for p in native_serialization_platforms)):
            raise ValueError(f"native_serialization_platforms must be a sequence "
                             f"containing a subset of {set(_PLATFORMS)}. Got: "
                             f"{native_serialization_platforms}")
        platforms = tuple(native_serialization_platforms)
    else:
        platforms = None
    if isinstance(polymorphic_constraints, str):
        raise ValueError(f"polymorphic_constraints must be a sequence of strings, got "
                         f"{polymorphic_constraints!r}")
    constraints = tuple(polymorphic_constraints)
    if not callable(fun_jax):
        raise TypeError(f"Expected a callable value, got {fun_jax}")
    fun_jit = _jitted(fun_jax)
    exports: dict = {}

    def exported_for(in_tree, args_tf, shapes, dtypes) -> _export.Exported:
        specs = arg_specs(polymorphic_shapes, SymbolicScope(constraints), args_tf, shapes,
                          dtypes)
        # (keyed by the specs' text: every size a symbolic spec allows shares one export)
        key = (in_tree, tuple((str(s.shape), s.dtype) for s in specs),
               _dtypes.x64_enabled())
        if key not in exports:
            args, kwargs = tree_util.tree_unflatten(in_tree, specs)
            exports[key] = _export.export(
                fun_jit, platforms=platforms,
                disabled_checks=native_serialization_disabled_checks)(*args, **kwargs)
        return exports[key]

    # Autograph must not rewrite mjax's Python (slow, and nothing in it is TF control flow).
    @tf.autograph.experimental.do_not_convert
    def converted_fun_tf(*args_tf, **kwargs_tf):
        args_tf, kwargs_tf = _untracked((args_tf, kwargs_tf))
        paths_leaves, in_tree = trace_trees.tree_flatten_with_path((args_tf, kwargs_tf))
        flat, shapes, dtypes = [], [], []
        for i, (path, leaf) in enumerate(paths_leaves):
            where = _export._arg_path(path)
            t, dtype = to_tensor(leaf, where)
            shapes.append(tf_shape(t, where))
            dtypes.append(dtype)
            # Named inputs, as JAX's jax2tf names them (after any 64-bit cast).
            flat.append(tf.identity(t, f"jax2tf_arg_{i}"))
        exported = exported_for(in_tree, args_tf, shapes, dtypes)
        outs = call_exported(exported, flat, with_gradient)
        outs = [tf.identity(o, "jax2tf_out") for o in outs]
        return tree_util.tree_unflatten(exported.out_tree, outs)

    converted_fun_tf.__name__ = f"converted_{getattr(fun_jax, '__name__', 'fun')}"
    return converted_fun_tf


def _untracked(tree):
    """Plain lists, tuples and dicts for the wrappers tf.Module puts around the
    containers it tracks (ListWrapper, _TupleWrapper, _DictWrapper), which are no
    pytrees: `self.params` of a tf.Module can be passed as it is."""
    if isinstance(tree, dict):
        plain = {k: _untracked(v) for k, v in tree.items()}
        return plain if type(tree).__module__.startswith("tensorflow") else \
            _same_kind(tree, plain)
    if isinstance(tree, (list, tuple)) and not hasattr(tree, "_fields"):
        items = [_untracked(v) for v in tree]
        if type(tree).__module__.startswith("tensorflow"):
            return items if isinstance(tree, list) else tuple(items)
        return _same_kind(tree, items)
    return tree


def _same_kind(tree, items):
    """`tree`'s own container type around new items, when it is a plain one."""
    if type(tree) in (list, tuple):
        return type(tree)(items)
    if type(tree) is dict:
        return items
    return tree


def _jitted(fun):
    """`fun` if it is already jitted (its options are kept), else `jit(fun)`."""
    return fun if isinstance(fun, Jitted) else jit(fun)


def eval_polymorphic_shape(fun_jax: Callable, *, polymorphic_shapes=None) -> Callable:
    """`(out_specs, out_shapes)` of `fun_jax` on abstract arguments shaped by
    `polymorphic_shapes` (out_shapes spelled as strings, "(2*b, 3)").
    JAX: jax2tf.eval_polymorphic_shape."""
    def do_eval(*args_specs):
        leaves = trace_trees.tree_leaves(args_specs)
        specs = arg_specs(polymorphic_shapes, SymbolicScope(), args_specs,
                          [tuple(a.shape) for a in leaves], [a.dtype for a in leaves])
        out = eval_shape(fun_jax, *trace_trees.tree_structure(args_specs).unflatten(specs))
        return out, trace_trees.tree_map(lambda r: str(tuple(r.shape)), out)
    return do_eval
