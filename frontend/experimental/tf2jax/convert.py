"""`convert(tf_func, *example_args)`: a TensorFlow function as an mjax function and params.

The function is traced by TensorFlow once (`get_concrete_function` on the examples'
shapes and dtypes); its GraphDef, function library and captured variables are read here,
and every call of the result runs the graph's nodes through the rule table (ops/). The
variables become `params` (a dict keyed by the variable's name, `:0` dropped).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import mjax.numpy as jnp
from mjax.base import trace_trees, tree_util
from mjax.arrays.array import Array
from mjax.tracing.core import Tracer
from mjax.experimental.tf2jax.graph import Resource, from_graph_def
from mjax.experimental.tf2jax.interpreter import Context, check_rules, run_graph


def _template(struct, outputs):
    """The output structure with each tensor (a TensorSpec in restored functions)
    replaced by an `_Out` naming its position in `outputs`; other leaves (Python
    constants, None) kept."""
    import tensorflow as tf
    index = {t.name: i for i, t in enumerate(outputs)}
    flat, k = [], 0
    for leaf in tf.nest.flatten(struct):
        if isinstance(leaf, tf.Tensor):
            flat.append(_Out(index[leaf.name]))
        elif isinstance(leaf, tf.TensorSpec):   # outputs follow the flattened structure
            flat.append(_Out(k))
        else:
            flat.append(leaf)
        k += isinstance(leaf, (tf.Tensor, tf.TensorSpec))
    return tf.nest.pack_sequence_as(struct, flat)


class _Out:
    def __init__(self, index: int):
        self.index = index


def _fill(template, values):
    if isinstance(template, _Out):
        return values[template.index]
    if isinstance(template, dict):
        return {k: _fill(v, values) for k, v in template.items()}
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*[_fill(v, values) for v in template])
    if isinstance(template, (list, tuple)):
        return type(template)(_fill(v, values) for v in template)
    return template


def _is_array(x) -> bool:
    import tensorflow as tf
    return isinstance(x, (np.ndarray, np.generic, Array, Tracer, tf.Tensor, tf.Variable,
                          tf.TensorSpec))


def _spec(x, name: str):
    """A TensorSpec for an example argument, named so its placeholder can be found."""
    import tensorflow as tf
    if isinstance(x, tf.TensorSpec):
        return tf.TensorSpec(x.shape, x.dtype, name=name)
    if isinstance(x, (tf.Tensor, tf.Variable)):
        return tf.TensorSpec(x.shape, x.dtype, name=name)
    arr = np.asarray(x)
    return tf.TensorSpec(arr.shape, tf.as_dtype(arr.dtype), name=name)


def _var_name(v, taken: set) -> str:
    name = v.name[:-2] if v.name.endswith(":0") else v.name
    base, k = name, 1
    while name in taken:       # two variables of one name: keep both, in graph order
        name = f"{base}_{k}"
        k += 1
    taken.add(name)
    return name


class _Converted:
    """What a call needs: the graph, the library, the captured values."""

    def __init__(self, tf_func, args, kwargs):
        import tensorflow as tf
        leaves, tree = trace_trees.tree_flatten((args, kwargs))
        # Array leaves become placeholders; other leaves (Python scalars, strings) are
        # static, baked into the graph as TF does.
        self.array_leaves = [i for i, x in enumerate(leaves) if _is_array(x)]
        if isinstance(tf_func, tf.types.experimental.ConcreteFunction):
            cf = tf_func
            placeholder_names = None
            if not leaves:      # no examples: the function's own signature
                leaves, _ = trace_trees.tree_flatten(cf.structured_input_signature)
                self.array_leaves = [i for i, x in enumerate(leaves) if _is_array(x)]
        else:
            if not hasattr(tf_func, "get_concrete_function"):
                tf_func = tf.function(tf_func)
            names = {i: f"tf2jax_arg{i}" for i in self.array_leaves}
            specs = [_spec(x, names[i]) if i in names else x for i, x in enumerate(leaves)]
            a, kw = tree_util.tree_unflatten(tree, specs)
            try:
                cf = tf_func.get_concrete_function(*a, **kw)
                placeholder_names = [names[i] for i in self.array_leaves]
            except TypeError:
                # An input_signature (restored SavedModel functions) refuses named specs;
                # its placeholders follow the flattened arguments.
                specs = [_spec(x, None) if i in names else x for i, x in enumerate(leaves)]
                a, kw = tree_util.tree_unflatten(tree, specs)
                cf = tf_func.get_concrete_function(*a, **kw)
                placeholder_names = None
        self.n_leaves = len(leaves)
        name = getattr(cf, "name", None) or "f"
        name = name.decode() if isinstance(name, bytes) else name
        gd = cf.graph.as_graph_def()
        self.library = {f.signature.name: f for f in gd.library.function}
        n_captured = len(cf.captured_inputs)
        user_inputs = cf.inputs[:len(cf.inputs) - n_captured]
        self.in_specs = [(tuple(t.shape.as_list()) if t.shape.rank is not None else None,
                          t.dtype.as_numpy_dtype) for t in user_inputs]
        # The graph's inputs follow TF's canonical argument order; self.order[j] is the
        # position among the array leaves of the j-th.
        if placeholder_names is None:
            self.order = list(range(len(user_inputs)))
        else:
            where = {n: k for k, n in enumerate(placeholder_names)}
            try:
                self.order = [where[t.op.name] for t in user_inputs]
            except KeyError as e:
                raise ValueError(f"tf2jax: cannot match the graph's input {e} to an "
                                 f"argument") from None
        by_handle = {id(v.handle): v for v in cf.graph.variables}
        self.captured, self.params, taken = [], {}, set()
        for ext in cf.captured_inputs:
            v = by_handle.get(id(ext))
            if v is not None:
                key = _var_name(v, taken)
                self.params[key] = v.numpy()
                self.captured.append(Resource(key))
            elif ext.dtype == tf.resource:
                raise NotImplementedError(f"tf2jax: '{name}' captures a resource that is "
                                          f"not a variable ({ext}); only variables are "
                                          f"supported")
            else:
                self.captured.append(np.asarray(ext.numpy()))
        outs = [t.name for t in cf.outputs]
        self.template = _template(cf.structured_outputs, cf.outputs)
        self.graph = from_graph_def(gd, [t.op.name for t in cf.inputs],
                                    [n if ":" in n else n + ":0" for n in outs],
                                    where=f"the graph of '{name}'")
        self.name = name
        # Functions are parsed once, here (calls need no TensorFlow).
        self.functions = {}
        check_rules(self.graph, Context(self.library, {}, self.functions))

    def __call__(self, params, args, rng=None):
        leaves = trace_trees.tree_leaves(args)
        if len(leaves) != self.n_leaves:
            raise TypeError(f"tf2jax: the converted '{self.name}' takes arguments with "
                            f"{self.n_leaves} leaves (as the example arguments), got "
                            f"{len(leaves)}")
        arrays = [leaves[i] for i in self.array_leaves]
        vals = []
        for i, (k, (shape, _)) in enumerate(zip(self.order, self.in_specs)):
            x = arrays[k]
            if type(x).__module__.startswith("tensorflow"):
                x = np.asarray(x)          # a tf.Tensor argument
            x = jnp.asarray(x)
            if shape is not None and (len(shape) != x.ndim or any(
                    d is not None and d != s for d, s in zip(shape, x.shape))):
                raise ValueError(f"tf2jax: argument {k} of '{self.name}' has shape "
                                 f"{tuple(x.shape)}, but the function was converted for "
                                 f"{shape}")
            vals.append(x)
        missing = set(self.params) - set(params)
        if missing:
            raise KeyError(f"tf2jax: params lack the variables {sorted(missing)}")
        state = {k: jnp.asarray(v) for k, v in params.items()}
        ctx = Context(self.library, state, self.functions)
        ctx.rng = rng
        outs = run_graph(self.graph, vals + list(self.captured), ctx)
        outs = [jnp.asarray(o) for o in outs]
        return _fill(self.template, outs), state


def convert(tf_func, *args: Any, **kwargs: Any) -> tuple[Callable, dict]:
    """`(fn, params)`: `fn(params, *args)` returns `(outputs, updated params)`; a function
    with random ops takes a PRNG key as `fn(params, *args, rng=key)`.

    `tf_func` is a `tf.function` (or a plain callable, or a concrete function), traced on
    the shapes and dtypes of the arrays in `args` and `kwargs` (pytrees); their other
    leaves (Python scalars) are static, as TF makes them. `fn` takes arguments of the
    same structure. The result works under `mjax.jit`, `mjax.grad` (w.r.t. params and
    inputs) and `mjax.vmap`.
    Like tf2jax.convert (deepmind/tf2jax).
    """
    conv = _Converted(tf_func, args, kwargs)

    def fn(params, *call_args, rng=None, **call_kwargs):
        return conv(params, (call_args, call_kwargs), rng)
    fn.__name__ = conv.name
    return fn, {k: jnp.asarray(v) for k, v in conv.params.items()}


def convert_functional(tf_func, *args: Any, **kwargs: Any) -> Callable:
    """A function of `args` only, for a `tf_func` that captures no variables.
    Like tf2jax.convert_functional."""
    conv = _Converted(tf_func, args, kwargs)
    if conv.params:
        raise ValueError(f"tf2jax.convert_functional: '{conv.name}' captures the variables "
                         f"{sorted(conv.params)}; use convert() to get them as params")

    def fn(*call_args, rng=None, **call_kwargs):
        return conv({}, (call_args, call_kwargs), rng)[0]
    fn.__name__ = conv.name
    return fn


def convert_from_restored(tf_func) -> tuple[Callable, dict]:
    """`convert` of a restored SavedModel function traced exactly once (its one concrete
    function), without example arguments. Like tf2jax.convert_from_restored."""
    concrete = list(getattr(tf_func, "concrete_functions", None) or [])
    if len(concrete) != 1:
        raise ValueError(f"tf2jax.convert_from_restored: the function has "
                         f"{len(concrete)} traced signatures; exactly one is needed (else "
                         f"call convert with example arguments)")
    return convert(concrete[0])
