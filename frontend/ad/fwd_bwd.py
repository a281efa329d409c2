"""`fwd_and_bwd`: vjp's forward and backward passes as two separately jitted functions.
JAX: jax.fwd_and_bwd."""
from __future__ import annotations

import operator

from mjax.ad.reverse import _check_callable, vjp
from mjax.jit.jitted import jit


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """(fwd, bwd): `fwd(*args)` is `vjp` of `fun` in the arguments `argnums` (the others
    held fixed), `(y, f_vjp[, aux])`; `bwd(f_vjp, y_bar)` applies f_vjp, giving one
    cotangent when argnums is an int, else a tuple. Both are jitted unless jitted=False,
    so each compiles once and f_vjp (a pytree) crosses between them."""
    _check_callable(fun)
    single = not isinstance(argnums, (tuple, list))
    nums = (operator.index(argnums),) if single else tuple(map(operator.index, argnums))

    def fwd(*args, **kwargs):
        pos = [i + len(args) if i < 0 else i for i in nums]
        if any(not 0 <= i < len(args) for i in pos):
            raise ValueError(f"fwd_and_bwd: argnums {argnums} out of range for "
                             f"{len(args)} positional arguments")

        def partial(*dyn):
            full = list(args)
            for i, x in zip(pos, dyn):
                full[i] = x
            return fun(*full, **kwargs)
        return vjp(partial, *[args[i] for i in pos], has_aux=has_aux)

    def bwd(f_vjp, outgrad):
        g = f_vjp(outgrad)
        return g[0] if single else g

    if jitted:
        fwd, bwd = jit(fwd), jit(bwd)
    return fwd, bwd
