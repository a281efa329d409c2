"""`pmap`: a vmap whose mapped axis is laid out over devices.

pmap(f)(xs) == jit(vmap(f, axis_name=name))(xs) with xs sharded along the mapped axis
over a one-axis mesh of the devices: XLA's SPMD partitioner gives each device its slice,
and the named-axis collectives inside (psum, all_gather, ...) become cross-device
collectives because they reduce, gather or permute along the sharded axis. So pmap
composes with jit, grad and vmap like any other function. JAX: jax.pmap.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np

from mjax.base import trace_trees, tree_util
from mjax.tracing.axis_env import AXIS_ENV
from mjax.ad.staging import _check_callable, _wraps
from mjax.vmap.batching import broadcast_prefix, vmap
from mjax.tracing.core import aval_of_value
from mjax.jit.jitted import jit
from mjax.runtime import get_backend
from mjax.specs.sharding_impls import Mesh, NamedSharding, P

_names = itertools.count()


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         global_arg_shapes=None):
    """Maps `fun` over the leading (or `in_axes`) axis of its arguments, one slice per
    device. JAX: jax.pmap."""
    _check_callable(fun)
    if global_arg_shapes is not None:
        raise NotImplementedError("pmap(global_arg_shapes=...) is not supported")
    if backend not in (None, "cpu", get_backend().platform):
        raise NotImplementedError(f"pmap(backend={backend!r}): only the default backend")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    static = ((static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int)
              else tuple(static_broadcasted_argnums))
    donate = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
    name = axis_name if axis_name is not None else f"_pmap_axis_{next(_names)}"
    cache: dict = {}

    def jitted_for(args, kwargs):
        """(the jit over a mesh that runs `args`, the dynamic arguments)."""
        dyn = [a for i, a in enumerate(args) if i not in static]
        axes = in_axes
        if isinstance(in_axes, tuple) and static:
            axes = tuple(a for i, a in enumerate(in_axes) if i not in static)
        flat_axes = broadcast_prefix("pmap in_axes", (axes, 0), (tuple(dyn), kwargs))
        leaves = trace_trees.tree_leaves((tuple(dyn), kwargs))
        avals = [aval_of_value(x) for x in leaves]
        for a, d in zip(avals, flat_axes):
            if d is not None and a.ndim and not -a.ndim <= d < a.ndim:
                raise IndexError(   # (JAX's class: an IndexError of its own indexing)
                    f"pmap was requested to map its argument along axis {d}, which implies "
                    f"that its rank should be at least {d + 1 if d >= 0 else -d}, but is "
                    f"only {a.ndim} (its shape is {a.shape})")
        sizes = {a.shape[d % len(a.shape)] for a, d in zip(avals, flat_axes)
                 if d is not None and len(a.shape)}
        n = axis_size if axis_size is not None else (sizes.pop() if len(sizes) == 1 else None)
        if n is None:
            raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped: "
                             f"{sorted(sizes)}" if sizes else
                             "pmap requires at least one argument with a mapped axis.")
        devs = list(devices) if devices is not None else get_backend().devices()
        if n > len(devs):
            raise ValueError(f"compiling computation that requires {n} logical devices, "
                             f"but only {len(devs)} XLA devices are available "
                             f"(num_replicas={n})")
        mesh = Mesh(np.array(devs[:n], dtype=object), (name,))
        for i, (a, d) in enumerate(zip(avals, flat_axes)):
            if d is not None and not a.ndim:    # (JAX's words: its pmap is a jit too)
                s = NamedSharding(mesh, P(name))
                raise ValueError(
                    f"One of pjit arguments with pytree key path flat_args[{i}] is "
                    f"incompatible with its sharding annotation {s}: Sharding {s} is only "
                    f"valid for values of rank at least 1, but was applied to a value of "
                    f"rank 0. For scalars the PartitionSpec should be P()")
        in_sh = [NamedSharding(mesh, P(*([None] * (d % len(a.shape)) + [name])))
                 if d is not None else NamedSharding(mesh, P())
                 for a, d in zip(avals, flat_axes)]
        key = (tuple(static_key(args[i]) for i in static if i < len(args)),
               tuple(in_sh), trace_trees.tree_structure((tuple(dyn), kwargs)))
        jitted = cache.get(key)
        if jitted is None:
            def body(*dyn_args, **kw):
                full = [args[i] if i in static else None for i in range(len(args))]
                per_device = functools.partial(_call_with, fun, static, full, name)
                return vmap(per_device, in_axes=axes, out_axes=out_axes, axis_name=name,
                            axis_size=n)(*dyn_args, **kw)
            treedef = trace_trees.tree_structure((tuple(dyn), kwargs))
            jitted = cache[key] = jit(
                body, in_shardings=tree_util.tree_unflatten(treedef, in_sh)[0] if not kwargs
                else None,
                donate_argnums=tuple(i - sum(1 for s in static if s < i) for i in donate))
        return jitted, dyn

    @_wraps(fun)
    def pmapped(*args, **kwargs):
        jitted, dyn = jitted_for(args, kwargs)
        return jitted(*dyn, **kwargs)

    def lower(*args, **kwargs):
        """The staged program for these arguments (JAX: pmap(f).lower(...)): `.as_text()`,
        `.compile()`, whose executable takes the arguments without the static ones."""
        jitted, dyn = jitted_for(args, kwargs)
        return jitted.lower(*dyn, **kwargs)
    pmapped.lower = lower
    return pmapped


def _call_with(fun, static, full, name, *dyn_args, **kwargs):
    it = iter(dyn_args)
    args = [full[i] if i in static else next(it) for i in range(len(full))]
    with AXIS_ENV.per_device(name):     # (the function runs per device, as in JAX)
        return fun(*args, **kwargs)


def static_key(v):
    try:
        hash(v)
        return v
    except TypeError:
        raise ValueError(f"Non-hashable static arguments are not supported. An error "
                         f"occurred while trying to hash an object of type {type(v)}, "
                         f"{v}.") from None


__all__ = ["pmap"]
