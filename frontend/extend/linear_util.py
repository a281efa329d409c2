"""JAX: jax.extend.linear_util: functions wrapped with a stack of transformations
(`WrappedFun`), the calling convention of JAX's tracing internals and of api_util.

A transformation is a generator function `gen(*extra, *args)` that yields the arguments
to call the inner function with, receives its result and yields the result to return
(`transformation`), or additionally yields auxiliary data (`transformation_with_aux`,
read after the call with the returned thunk); the `...2` forms are plain functions
`gen(f, *extra, *args)` that call `f` themselves.
"""
from __future__ import annotations

import functools
from typing import Callable  # noqa: F401  (re-exported, as JAX does)

__all__ = ["WrappedFun", "wrap_init", "transformation", "transformation_with_aux",
           "transformation2", "transformation_with_aux2", "merge_linear_aux", "cache",
           "StoreException", "Callable"]


class StoreException(Exception):
    """Reading an auxiliary output that was not stored (the function was not called),
    or storing one twice."""


class Store:
    """One auxiliary output, written once by a transformation."""
    _EMPTY = object()

    def __init__(self):
        self._val = Store._EMPTY

    def store(self, val):
        if self._val is not Store._EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    @property
    def val(self):
        if self._val is Store._EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __call__(self):
        return self.val


class WrappedFun:
    """`f` with transformations applied outermost last; call with `.call_wrapped`."""

    def __init__(self, f, transforms, params, debug_info=None):
        self.f, self.transforms, self.params = f, tuple(transforms), tuple(params)
        self.debug_info = debug_info

    @property
    def __name__(self):
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    def wrap(self, kind, gen, extra, store=None):
        return WrappedFun(self.f, self.transforms + ((kind, gen, extra, store),),
                          self.params, self.debug_info)

    def call_wrapped(self, *args, **kwargs):
        return self._call(len(self.transforms), args, kwargs)

    def _call(self, depth, args, kwargs):
        if depth == 0:
            return self.f(*args, **dict(self.params), **kwargs)
        kind, gen, extra, store = self.transforms[depth - 1]
        inner = lambda *a, **k: self._call(depth - 1, a, k)  # noqa: E731
        if kind == "function":
            return gen(inner, *extra, *args, **kwargs)
        if kind == "function-store":
            return gen(inner, store, *extra, *args, **kwargs)
        g = gen(*(extra + args), **kwargs)
        try:
            inner_args, inner_kwargs = next(g)
            ans = inner(*inner_args, **inner_kwargs)
            out = g.send(ans)
        finally:
            # (now, also when `inner` raised, not when the generator is collected: the
            # `with` blocks it is suspended in, such as a set_current_trace, end here)
            g.close()
        if store is not None:
            out, aux = out
            store.store(aux)
        return out

    def __eq__(self, other):
        return (type(other) is WrappedFun and self.f == other.f and
                self.params == other.params and
                [t[:3] for t in self.transforms] == [t[:3] for t in other.transforms])

    def __hash__(self):
        return hash((self.f, self.params, tuple(t[:2] for t in self.transforms)))

    def __repr__(self):
        return f"Wrapped function: {self.__name__} ({len(self.transforms)} transformations)"


def wrap_init(f, params=None, *, debug_info=None) -> WrappedFun:
    """`f` as a WrappedFun with no transformation (`params`: extra keyword arguments)."""
    return WrappedFun(f, (), tuple(sorted((params or {}).items())), debug_info)


def _curried(impl):
    """`t(gen)` is the decorator form of `t(gen, fun, *args)`, as JAX's `curry`."""
    @functools.wraps(impl)
    def curried(gen, *rest, **kwargs):
        if not rest:
            return functools.partial(impl, gen, **kwargs)
        return impl(gen, *rest, **kwargs)
    return curried


@_curried
def transformation(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """`fun` under generator transformation `gen(*static, *args)`, which yields the inner
    call's (args, kwargs), receives its result and yields the outer result."""
    return fun.wrap("generator", gen, gen_static_args)


@_curried
def transformation_with_aux(gen, fun: WrappedFun, *gen_static_args):
    """As transformation; `gen` finally yields (result, aux): returns (fun, aux thunk)."""
    store = Store()
    return fun.wrap("generator", gen, gen_static_args, store), store


@_curried
def transformation2(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """`fun` under `gen(inner, *static, *args)`, a plain function calling `inner`."""
    return fun.wrap("function", gen, gen_static_args)


@_curried
def transformation_with_aux2(gen, fun: WrappedFun, *gen_static_args,
                             use_eq_store: bool = False, unk_names: bool = False):
    """`fun` under `gen(inner, store, *static, *args)`, which writes `store.store(aux)`:
    returns (fun, aux thunk)."""
    store = Store()
    return fun.wrap("function-store", gen, gen_static_args, store), store


def merge_linear_aux(aux1, aux2):
    """The auxiliary output of whichever of two stores was written (JAX: for functions
    whose two branches each store one)."""
    try:
        out1 = aux1()
    except StoreException:
        try:
            out2 = aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
        return False, out2
    return True, out1


def cache(call: Callable, *, explain=None):
    """Memoizes `call(fun: WrappedFun, *args)` on (fun, args)."""
    memo: dict = {}

    def memoized(fun, *args):
        key = (fun, args)
        if key not in memo:
            memo[key] = call(fun, *args)
        return memo[key]
    memoized.cache_clear = memo.clear
    return memoized
