"""jit's static and donated arguments: the numbers and names a user gives, checked
against the function's signature and completed from each other, as JAX does."""
from __future__ import annotations

import inspect
import operator


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _as_tuple(v, one) -> tuple:
    if one is int:    # (NumPy integers too, as JAX's operator.index takes them: a falsy
        if hasattr(v, "__index__"):           # np.int64(0) is argument 0, not none)
            return (operator.index(v),)
        return tuple(operator.index(i) for i in (v or ()))
    return (v,) if isinstance(v, one) else tuple(v or ())


def check_numbers(sig, nums: tuple, what: str) -> None:
    """JAX's ValueError for argument numbers the function cannot take (any positive
    number is fine when it takes *args)."""
    kinds = [p.kind for p in sig.parameters.values()]
    if inspect.Parameter.VAR_POSITIONAL in kinds or not nums:
        return
    n = sum(k in _POSITIONAL for k in kinds)
    if max(nums) >= n or -min(nums) > n:
        raise ValueError(f"Jitted function has {what}={nums}, but only accepts {n} "
                         f"positional arguments.")


def check_names(sig, names: tuple, what: str) -> None:
    """JAX's ValueError for argument names the function cannot take by keyword (any name
    but its positional-only ones when it takes **kwargs)."""
    if not names:
        return       # (most jits: nothing to check, no sets built)
    params = sig.parameters
    positional_only = {n for n, p in params.items()
                       if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)} & set(names)
    if positional_only:
        raise ValueError(f"Jitted function has invalid argnames {positional_only} in "
                         f"{what}. These are positional-only")
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    unknown = set(names) - {n for n, p in params.items() if p.kind in _KEYWORD}
    if unknown:
        raise ValueError(f"Jitted function has invalid argnames {unknown} in {what}. "
                         f"Function does not take these args.")


def static_arguments(sig, static_argnums, static_argnames) -> tuple[tuple, tuple]:
    """(static_argnums, static_argnames), checked; as JAX, given one of them the other
    is inferred from the signature's positional-or-keyword parameters, given both
    neither is."""
    infer_nums, infer_names = static_argnums is None, static_argnames is None
    nums, names = _as_tuple(static_argnums, int), _as_tuple(static_argnames, str)
    if sig is None:
        return tuple(sorted(set(nums))), names
    check_numbers(sig, nums, "static_argnums")
    check_names(sig, names, "static_argnames")
    if infer_nums != infer_names:
        named = [(i, n) for i, (n, p) in enumerate(sig.parameters.items())
                 if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        if infer_nums:
            nums = tuple(i for i, n in named if n in names)
        else:
            names = tuple(n for i, n in named if i in nums)
    return tuple(sorted(set(nums))), names


def donated_arguments(sig, argnums, argnames, static_argnums, static_argnames):
    """(donate_argnums, donate_argnames), each completed from the other through the
    signature and checked as JAX does (no argument both static and donated)."""
    argnums, argnames = _as_tuple(argnums, int), _as_tuple(argnames, str)
    if sig is None:
        if argnames:
            raise ValueError("Getting the signature of the function failed. Pass "
                             "donate_argnums instead of donate_argnames.")
        return argnums, argnames
    check_numbers(sig, argnums, "donate_argnums")
    check_names(sig, argnames, "donate_argnames")
    positional = [n for n, p in sig.parameters.items() if p.kind in _POSITIONAL]
    argnums = tuple(sorted(set(argnums) | {positional.index(n) for n in argnames
                                           if n in positional}))
    argnames = tuple(dict.fromkeys(argnames + tuple(positional[i] for i in argnums
                                                    if i < len(positional))))
    clash = (set(argnums) & set(static_argnums)) | (set(argnames) & set(static_argnames))
    if clash:
        raise ValueError(f"static arguments cannot be donated: {sorted(map(str, clash))} "
                         f"are in both static_argnums/static_argnames and "
                         f"donate_argnums/donate_argnames")
    return argnums, argnames


def jit_arguments(fun, static_argnums, static_argnames, donate_argnums, donate_argnames):
    """(static_argnums, static_argnames, donate_argnums, donate_argnames) of jit(fun, ...),
    checked against fun's signature and completed from each other, as JAX does; with none
    given, the signature (~20 us a jit) is not read."""
    given = (static_argnums, static_argnames, donate_argnums, donate_argnames)
    if all(a is None or (type(a) is tuple and not a) for a in given):
        return (), (), (), ()
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        sig = None
    nums, names = static_arguments(sig, static_argnums, static_argnames)
    return (nums, names, *donated_arguments(sig, donate_argnums, donate_argnames, nums, names))


__all__ = ["check_names", "check_numbers", "donated_arguments", "jit_arguments",
           "static_arguments"]

