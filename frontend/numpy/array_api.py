"""The array API standard's inspection namespace (`jnp.__array_namespace_info__()`).

JAX: jax.numpy.__array_namespace_info__ / ArrayNamespaceInfo. The answers follow JAX's:
no boolean indexing or data-dependent shapes under jit, 64 dimensions at most, `None`
(let the runtime choose) listed among the devices, default dtypes that follow x64.
"""
from __future__ import annotations

import functools

import numpy as np

from mjax.specs import dtypes as _dt
from mjax.base import errors
from mjax.arrays.array import Array
from mjax.config import config
from mjax.tracing import fused_units
from mjax.tracing.core import Tracer, _state as trace_state
from mjax.arrays.eager_fast import fast_fused
from mjax.jit.jitted import jit
from mjax.arrays.placement import device_put as _device_put, devices as _devices
from mjax.base.trace_trees import tree_leaves
from mjax.runtime.backend import backend_platforms

__array_api_version__ = "2024.12"

# The dtype kinds the standard names, each as the dtypes it holds (before x64 narrowing).
_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]


class ArrayNamespaceInfo:
    """What this array library supports, as the array API standard asks."""

    __module__ = "mjax.numpy"

    def capabilities(self) -> dict:
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": 64}

    def default_device(self):
        return None

    def devices(self) -> list:
        """None (uncommitted), then the devices of every backend, as JAX lists them: on a
        TPU machine the chip's, then the host CPU's."""
        platforms = backend_platforms(config.read("jax_platforms"))
        return [None, *(d for p in platforms for d in _devices(p))]

    def default_dtypes(self, *, device=None) -> dict:
        return {"real floating": _dt.default_float(),
                "complex floating": _dt.default_complex(),
                "integral": _dt.default_int(), "indexing": _dt.default_int()}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """Supported dtypes by name, of one kind, of a tuple of kinds, or all of them."""
        if kind is None:
            names = _KINDS["bool"] + _KINDS["numeric"]
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            unknown = [k for k in kinds if k not in _KINDS]
            if unknown:
                raise ValueError(f"dtypes: unknown kind {unknown[0]!r}; expected one of "
                                 f"{sorted(_KINDS)} or a tuple of them")
            names = tuple(n for k in kinds for n in _KINDS[k])
        # With x64 off the 64-bit types do not exist (they narrow to 32 bits).
        out = {}
        for n in names:
            if _dt.canonicalize_dtype(np.dtype(n)) == np.dtype(n):
                out.setdefault(n, np.dtype(n))
        return out


def __array_namespace_info__() -> ArrayNamespaceInfo:
    return ArrayNamespaceInfo()


# ---- the standard's keywords on existing functions ------------------------------------
# The creation functions (and astype) take `device=` as JAX's do: the result is placed
# there (a device or a Sharding; None leaves it where it was made). They are decorated
# where they are defined; so are the functions taking JAX's keyword-only `out_sharding=`
# (lax.sharding.takes_out_sharding) and the ones fused when eager (below).
def with_device_keyword(fn):
    """`fn` with a keyword-only `device=None` added to its call and its signature."""
    import functools
    import inspect

    @functools.wraps(fn)
    def placed(*args, device=None, **kwargs):
        out = fn(*args, **kwargs)
        return out if device is None else _put(out, device)

    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    device = inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None)
    placed.__signature__ = sig.replace(parameters=params + [device])
    return placed


def _put(x, device):
    # (Under a trace the value's placement is decided by jit, as in JAX without shardings.)
    return x if isinstance(x, Tracer) else _device_put(x, device)


# ---- one compiled program per eager call of a composite function ---------------------
# Eagerly, every primitive compiles once per new shape; a composite such as std (a dozen
# primitives) compiled a dozen programs per shape, several times JAX's time, which jits
# each jnp function whole. Called on concrete arrays, the functions decorated with
# fused_when_eager run under mjax.jit instead:
# arguments holding arrays are traced, the rest (axes, dtypes, Python scalars) are static.
_PLAIN_STATIC = (type(None), int, bool, str)
_VALUES = config._values   # (process-wide option values: read when no override is active)


def _exact_key(v):
    """`v` as a cache key that tells apart what == equates but the results do not: 1, 1.0
    and True (result dtypes), 0.0 and -0.0 (signs), NaNs (never equal to themselves), and
    NumPy scalars of different dtypes (np.float16(1) == np.float32(1))."""
    if isinstance(v, np.generic):
        return type(v), repr(v)
    if isinstance(v, (float, complex)):
        return type(v), repr(v)
    if isinstance(v, (bool, int)):
        return type(v), v
    if type(v) in (tuple, list):
        # (a list is a static argument as its tuple is: jnp.mean(x, axis=[1, 2]) compiles
        # as one program, as JAX's jitted reductions do after making the axes a tuple)
        return type(v), tuple(_exact_key(e) for e in v)
    return v


def _copied(v):
    """`v` with its lists copied: a list bound into a cached program is the caller's,
    who may change it afterwards."""
    if type(v) in (tuple, list):
        return type(v)(_copied(e) for e in v)
    return v


class _Exact:
    """A static argument that jit's cache compares by `_exact_key` instead of ==."""

    __slots__ = ("value", "key")

    def __init__(self, value):
        self.value, self.key = value, _exact_key(value)

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return type(other) is _Exact and self.key == other.key


def _unwrapping(fn):
    def call(*args, **kwargs):
        return fn(*(a.value if type(a) is _Exact else a for a in args), **kwargs)
    return call


def _unreduced_call(args, kwargs) -> bool:
    """An out_sharding unreduced over mesh axes, or an unreduced or reduced argument:
    eager ops run those one at a time (jit refuses unreduced arrays; each op keeps
    reduced axes as JAX's rules do)."""
    out = kwargs.get("out_sharding")
    if out is not None and getattr(getattr(out, "spec", out), "unreduced", None):
        return True
    return any(type(a) is Array and getattr(a._sharding, "spec", None) is not None and
               (a._sharding.spec.unreduced or a._sharding.spec.reduced) for a in args)


def fused_when_eager(fn=None, *, traced=()):
    """`fn`, run as one jit-compiled program when no argument is being traced.
    `traced`: positions (and keyword names) of parameters JAX's jitted function traces: a
    Python number there is an argument of the program (weakly typed), not a constant XLA
    would fold (pow(x, 3) would become x*x*x, rounding otherwise than JAX's eager call)."""
    if fn is None:
        return functools.partial(fused_when_eager, traced=traced)
    # A function that needs concrete values (data-dependent shapes) runs op by op instead.
    needs_values = (errors.ConcretizationTypeError, errors.TracerIntegerConversionError,
                    errors.TracerArrayConversionError)
    by_pattern = {}

    def holds_array(v):
        # (a NumPy bool, float or complex scalar too: JAX's jitted functions take it as an
        # argument; made a constant, XLA would fold it: prod(x, where=np.False_) with an
        # infinite initial value gave inf+0j for JAX's inf+nanj; integer ones stay static:
        # axes, counts)
        return any(isinstance(leaf, np.ndarray) or hasattr(leaf, "_buf") or (
            isinstance(leaf, np.generic) and leaf.dtype.kind not in "iu")
                   for leaf in tree_leaves(v))

    def dynamic(position, v):
        # (an argument of the program: an array, or a Python number JAX's function traces)
        return holds_array(v) or (position in traced and type(v) in (bool, int, float, complex))

    def plain_key(args, kwargs):
        """The key below for arguments that are mjax Arrays (traced) or None/int/bool/str
        (static) and keywords all static, without its tree walks (None otherwise)."""
        static_pos = ()
        for i, a in enumerate(args):
            if type(a) is not Array:
                if type(a) not in _PLAIN_STATIC:
                    return None
                static_pos += (i,)
        for v in kwargs.values():
            if type(v) not in _PLAIN_STATIC:
                return None
        return (len(args), static_pos,
                tuple(sorted((k, _exact_key(v)) for k, v in kwargs.items())) if kwargs else ())

    def exact(args, static_pos):
        return tuple(_Exact(a) if i in static_pos else a for i, a in enumerate(args))

    @functools.wraps(fn)
    def call(*args, **kwargs):
        # The commonest eager call, `jnp.sum(x)`: Arrays on their own device only (none
        # unreduced, nothing static), the program of pattern (n, (), ()) below.
        if not kwargs and not trace_state.stack:
            for a in args:
                if type(a) is not Array or a._sharding is not None:
                    break
            else:
                jitted = by_pattern.get((len(args), (), ()))
                if jitted is not None and not (
                        config.read("jax_disable_jit") if config._overriding
                        else _VALUES["jax_disable_jit"]):
                    try:
                        return jitted(*args)
                    except needs_values:
                        return fn(*args)
        if trace_state.stack:
            # Under a trace its primitives are staged into the trace, as JAX's jaxprs show
            # them (a nested jit would print as `jit[name=call]`), even for arguments that
            # are all concrete (jnp.eye(3) in a jitted function).
            fused_units.note_call(fn.__name__)
            return fn(*args, **kwargs)
        if _unreduced_call(args, kwargs):   # (op by op: mjax/lax/unreduced.py)
            return fn(*args, **kwargs)
        key = plain_key(args, kwargs)
        jitted = None if key is None else by_pattern.get(key)
        if jitted is not None and not config.read("jax_disable_jit"):
            try:
                # (every keyword is static: bound in the partial)
                return jitted(*exact(args, key[1]))
            except needs_values:
                return fn(*args, **kwargs)
        if config.read("jax_disable_jit") or any(
                isinstance(leaf, Tracer) for leaf in tree_leaves((args, kwargs))):
            return fn(*args, **kwargs)
        static_pos = tuple(i for i, a in enumerate(args) if not dynamic(i, a))
        # (static keywords are bound in a partial: jit's static_argnames would look them up
        # by position in the signature, which *args functions such as meshgrid do not have)
        static_kw = tuple(sorted((k, v) for k, v in kwargs.items() if not dynamic(k, v)))
        try:
            key = (len(args), static_pos, tuple((k, _exact_key(v)) for k, v in static_kw))
            hash(key)
            hash(tuple(_exact_key(args[i]) for i in static_pos))
        except TypeError:  # (an unhashable static argument, e.g. a list of ints)
            return fn(*args, **kwargs)
        if key not in by_pattern:
            by_pattern[key] = jit(_unwrapping(functools.partial(
                fn, **{k: _copied(v) for k, v in static_kw})),
                                  static_argnums=static_pos)
        dynamic_kw = {k: v for k, v in kwargs.items() if dynamic(k, v)}
        try:
            return by_pattern[key](*exact(args, static_pos), **dynamic_kw)
        except needs_values:
            return fn(*args, **kwargs)

    def learn(*args, **kwargs):   # (eager_fast's C path: the jit `call` runs for these)
        key = plain_key(args, kwargs)
        return None if key is None or key[1] else by_pattern.get(key)
    return fast_fused(call, learn, needs_values)
