"""The mesh context of the code being traced: `set_mesh`, and `auto_axes` /
`explicit_axes`, which switch the types of mesh axes inside a function."""
from __future__ import annotations

import functools

from mjax.tracing.core import current_trace
from mjax.lax.sharding import reshard
from mjax.specs.sharding_impls import (AxisType, Mesh, get_abstract_mesh, swap_set_mesh,
                                       use_abstract_mesh)


class set_mesh:
    """Sets the mesh bare PartitionSpecs, shard_map and with_sharding_constraint use, for
    this thread: globally when called, until the block ends when used with `with`.
    JAX: jax.set_mesh (jax.sharding.set_mesh)."""

    def __init__(self, mesh: Mesh | None):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
        if current_trace() is not None:
            raise ValueError("`set_mesh` can only be used outside of `jax.jit`.")
        self._prev = swap_set_mesh(mesh)

    def __enter__(self):
        return None

    def __exit__(self, typ, value, traceback):
        swap_set_mesh(self._prev)
        return False

    def __repr__(self):
        # (what notebooks show for `jax.set_mesh(mesh)` on its own line: JAX's default
        # repr, which names the module JAX defines the class in)
        return f"<jax._src.sharding_impls.set_mesh object at {id(self):#x}>"


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """`f` run with the mesh axes `axes` (default: all) Auto, so the compiler lays out
    its values; its results laid out as `out_sharding`. JAX: jax.sharding.auto_axes."""
    return _retyped(f, axes, AxisType.Auto, "out_sharding", out_sharding)


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """`f` run with the mesh axes `axes` (default: all) Explicit, its arguments laid out
    as `in_sharding` (and typed so). JAX: jax.sharding.explicit_axes."""
    return _retyped(f, axes, AxisType.Explicit, "in_sharding", in_sharding)


def _retyped(f, axes, axis_type, keyword, default):
    if f is None:
        return lambda g: _retyped(g, axes, axis_type, keyword, default)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        layout = kwargs.pop(keyword, default)
        outer = get_abstract_mesh()
        if outer.empty:
            raise ValueError(f"{'auto' if axis_type == AxisType.Auto else 'explicit'}"
                             f"_axes needs a mesh: call it under `jax.set_mesh(mesh)`")
        names = outer.axis_names if axes is None else (
            (axes,) if isinstance(axes, str) else tuple(axes))
        inner = outer.update_axis_types({n: axis_type for n in names})
        trace = current_trace()
        if trace is not None and trace.type_specs is None:
            trace.type_specs = {}     # (types begin here, within this trace)
        with use_abstract_mesh(inner):
            if keyword == "in_sharding" and layout is not None:
                args = reshard(args, layout)
            out = f(*args, **kwargs)
        if keyword == "out_sharding" and layout is not None:
            out = reshard(out, layout)
        return out
    return wrapper
