"""How custom_jvp/custom_vjp functions see their arguments, as JAX's: keywords bound to
positions with the function's defaults filled in (a rule with `nondiff_argnums` naming a
defaulted parameter gets its default), and the nondiff ones split from the others."""
from __future__ import annotations

import functools
import inspect

from mjax.base import trace_trees


def _positional(sig: inspect.Signature) -> tuple:
    """(how many parameters a call may fill by position, whether there is *args)."""
    kinds = [p.kind for p in sig.parameters.values()]
    return (sum(k in (inspect.Parameter.POSITIONAL_ONLY,
                      inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in kinds),
            inspect.Parameter.VAR_POSITIONAL in kinds)


@functools.lru_cache(maxsize=4096)
def _signature_of(fun):
    return _signature_uncached(fun)


def _signature_uncached(fun):
    if isinstance(fun, functools.partial):     # (opaque, as JAX treats it)
        return None, 0, True
    sig = inspect.signature(fun)
    return (sig, *_positional(sig))


def resolve_kwargs(fun, args, kwargs, kind: str) -> tuple:
    """`args` and `kwargs` of a call of the custom_`kind` function `fun` as one tuple of
    positional values, defaults included. JAX: api_util.resolve_kwargs."""
    try:
        try:
            sig, count, varargs = _signature_of(fun)
        except TypeError:       # (an unhashable callable)
            sig, count, varargs = _signature_uncached(fun)
        if not kwargs and (len(args) >= count if varargs else len(args) == count):
            return tuple(args)      # (nothing to bind, no default to fill)
        if sig is None:
            raise TypeError(f"The following keyword arguments could not be resolved to "
                            f"positions: {', '.join(kwargs)}")
        ba = sig.bind(*args, **kwargs)
        ba.apply_defaults()
        passed = [k for k in ba.kwargs if k in kwargs]
        if passed:
            raise TypeError(f"The following keyword arguments could not be resolved to "
                            f"positions: {', '.join(passed)}")
    except (TypeError, ValueError) as e:
        name = getattr(fun, "__name__", str(fun))
        raise TypeError(f"The input arguments to the custom_{kind}-decorated function "
                        f"{name} could not be resolved to positional-only arguments. "
                        f"Binding failed with the error:\n{e}") from None
    return ba.args


def split_static(args, nondiff_argnums):
    """(the nondiff arguments in `nondiff_argnums` order, the others, and a function
    putting new values of the others back among the nondiff ones)."""
    static = {i: args[i] for i in nondiff_argnums}
    dyn = [a for i, a in enumerate(args) if i not in static]

    def full(dyn_args):
        it = iter(dyn_args)
        return [static[i] if i in static else next(it) for i in range(len(args))]
    return [static[i] for i in nondiff_argnums], dyn, full


def nondiff_positions(fun, nondiff_argnums=(), nondiff_argnames=()) -> tuple:
    """The sorted positions of `nondiff_argnums` and of the parameters of `fun` named in
    `nondiff_argnames` (JAX 0.10.2's custom_vjp takes both)."""
    nums = set(nondiff_argnums)
    if nondiff_argnames:
        names = (nondiff_argnames,) if isinstance(nondiff_argnames, str) else nondiff_argnames
        params = list(inspect.signature(fun).parameters)
        for name in names:
            if name not in params:
                raise ValueError(f"custom_vjp nondiff_argnames: {name!r} is not a "
                                 f"parameter of {getattr(fun, '__name__', fun)} "
                                 f"(parameters: {params})")
            nums.add(params.index(name))
    return tuple(sorted(nums))


def cotangent_leaves(g, k: int) -> list:
    """The leaves of the cotangent a custom_vjp bwd gave for an argument of `k` leaves:
    None is zeros; an array given for a None argument (no leaves) is ignored, as in JAX."""
    if g is None:
        return [None] * k
    leaves = trace_trees.tree_leaves(g)
    return [] if k == 0 and len(leaves) == 1 and leaves[0] is g else leaves
