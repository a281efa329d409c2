"""`mjax.numpy.vectorize`: NumPy's generalized-ufunc vectorization, built on `vmap`; and
`apply_along_axis` / `apply_over_axes`.

Each loop dimension (the broadcast of the arguments' non-core leading dims) becomes one
`vmap`, innermost last; an argument of size 1 along a loop dim is squeezed and left
unmapped there, and a loop dim no argument maps is added back to the result as size 1.
JAX: jax.numpy.vectorize (same semantics and error messages).
"""
from __future__ import annotations

import functools
import re

import numpy as np

from mjax.vmap.batching import vmap
from mjax.numpy.arguments import index_axis
from mjax.numpy.conversion import asarray
from mjax.numpy.shaping import expand_dims, squeeze


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to the 1-d slices of arr along axis (by vmapping it over the other
    axes). JAX: jnp.apply_along_axis."""
    arr = asarray(arr)
    axis = index_axis(axis, arr.ndim)
    fn = lambda x: func1d(x, *args, **kwargs)  # noqa: E731
    for i in range(1, arr.ndim - axis):
        fn = vmap(fn, in_axes=i, out_axes=-1)
    for _ in range(axis):
        fn = vmap(fn, in_axes=0, out_axes=0)
    return fn(arr)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, keeping dims. JAX: apply_over_axes."""
    a = asarray(a)
    for axis in axes:
        b = func(a, axis)
        a = b if b.ndim == a.ndim else expand_dims(b, axis)
    return a


_NAME = r"\w+"
_CORE = rf"(?:{_NAME}(?:,{_NAME})*)?"
_ARG = rf"\({_CORE}\)"
_ARGS = rf"{_ARG}(?:,{_ARG})*"
_SIGNATURE = rf"^{_ARGS}->{_ARGS}$"


def parse_signature(signature: str):
    """'(m,n),(n)->(m)' -> ([('m', 'n'), ('n',)], [('m',)])."""
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = signature.split("->")
    return ([tuple(re.findall(_NAME, a)) for a in re.findall(_ARG, ins)],
            [tuple(re.findall(_NAME, a)) for a in re.findall(_ARG, outs)])


def _record_core_sizes(sizes: dict, shape, core, context: str, *, is_input: bool):
    n = len(core)
    if is_input and len(shape) < n:
        raise ValueError(f"input with shape {tuple(shape)!r} does not have enough dimensions "
                         f"for all core dimensions {core!r} {context}")
    if not is_input and len(shape) != n:
        raise ValueError(f"output shape {tuple(shape)!r} does not match core dimensions "
                         f"{core!r} {context}")
    for name, size in zip(core, tuple(shape)[len(shape) - n:]):
        if sizes.setdefault(name, size) != size:
            raise ValueError(f"inconsistent size for core dimension {name!r}: {size!r} vs "
                             f"{sizes[name]!r} {context}")


def _split_excluded(func, excluded, args, kwargs):
    """(func with the excluded arguments bound, the other positional arguments)."""
    fixed = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
             if i < len(args)]
    rest = [a for i, a in enumerate(args) if i not in excluded]
    # Keyword arguments are passed through unvectorized, excluded or not (JAX vectorizes
    # only positional arguments).

    def bound(*dyn):
        full = list(dyn)
        for i, a in fixed:
            full.insert(i, a)
        return func(*full, **kwargs)
    return bound, rest


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """`pyfunc` mapped over the leading (loop) dimensions of its arguments with NumPy
    broadcasting; `signature` names the core dimensions it sees. JAX: jnp.vectorize."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError(f"jax.numpy.vectorize can only exclude integer or string arguments, "
                        f"but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        func, args = _split_excluded(pyfunc, excluded, args, kwargs)
        if signature is not None:
            in_core, out_core = parse_signature(signature)
        else:
            in_core, out_core = [()] * len(args), None
        nones = {i for i, a in enumerate(args) if a is None}
        if nones:
            if any(in_core[i] != () for i in nones if i < len(in_core)):
                raise ValueError(f"Cannot pass None at locations {nones} with "
                                 f"signature={signature!r}")
            func, args = _split_excluded(func, nones, args, {})
            in_core = [c for i, c in enumerate(in_core) if i not in nones]
        args = [asarray(a) for a in args]
        if len(args) != len(in_core):
            raise TypeError(f"wrong number of positional arguments: expected {len(in_core)!r}, "
                            f"got {len(args)!r} {context}")
        sizes: dict = {}
        loop_shapes = []
        for a, core in zip(args, in_core):
            _record_core_sizes(sizes, a.shape, core, context, is_input=True)
            loop_shapes.append(a.shape[:a.ndim - len(core)])
        loop_shape = np.broadcast_shapes(*loop_shapes)
        if out_core is not None:
            func = _checking_outputs(func, sizes, out_core, context)

        squeezed, filled = [], []
        for a, shape in zip(args, loop_shapes):
            filled.append((1,) * (len(loop_shape) - len(shape)) + tuple(shape))
            ones = tuple(i for i, s in enumerate(shape) if s == 1)
            squeezed.append(squeeze(a, axis=ones) if ones else a)
        # One vmap per loop dim, the last loop dim innermost.
        mapped, unmapped = func, []
        for k in reversed(range(len(loop_shape))):
            in_axes = tuple(None if f[k] == 1 else 0 for f in filled)
            if all(ax is None for ax in in_axes):
                unmapped.append(k)
            else:
                mapped = vmap(mapped, in_axes)
        out = mapped(*squeezed)
        if not unmapped:
            return out
        if isinstance(out, tuple):
            return tuple(expand_dims(o, axis=tuple(unmapped)) for o in out)
        return expand_dims(out, axis=tuple(unmapped))
    return wrapped


def _checking_outputs(func, sizes, out_core, context):
    def checked(*args):
        out = func(*args)
        outs = out if isinstance(out, tuple) else [out]
        if len(out_core) > 1 and not isinstance(out, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, "
                            f"got: {out!r}\n{context}")
        if len(outs) != len(out_core):
            raise TypeError(f"wrong number of output arguments: expected {len(out_core)!r}, "
                            f"got {len(outs)!r} {context}")
        known = dict(sizes)
        for o, core in zip(outs, out_core):
            _record_core_sizes(known, np.shape(o), core, context, is_input=False)
        return out
    return checked


__all__ = ["vectorize"]
