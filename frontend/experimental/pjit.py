"""JAX: jax.experimental.pjit: `pjit`, deprecated in JAX 0.10 in favour of `jax.jit`
(the same function: in/out shardings may be PartitionSpecs of the `with mesh:` mesh).
Reading `pjit` warns with JAX's DeprecationWarning."""
from __future__ import annotations

import warnings

from mjax.jit.jitted import jit as _jit

_MESSAGE = "jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` instead."


def _pjit(fun, in_shardings=None, out_shardings=None, static_argnums=None,
          static_argnames=None, donate_argnums=None, donate_argnames=None,
          keep_unused=False, device=None, backend=None, inline=False,
          compiler_options=None):
    """`jax.experimental.pjit.pjit` has been deprecated. Please use `jax.jit`."""
    return _jit(fun, in_shardings=in_shardings, out_shardings=out_shardings,
                static_argnums=static_argnums, static_argnames=static_argnames,
                donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                keep_unused=keep_unused, device=device, backend=backend, inline=inline,
                compiler_options=compiler_options)


def __getattr__(name):
    if name == "pjit":
        warnings.warn(_MESSAGE, DeprecationWarning, stacklevel=2)
        return _pjit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
