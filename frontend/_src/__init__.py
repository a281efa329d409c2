"""JAX-private names (`jax._src.X`) that several libraries of JAX's ecosystem import
(issue 21.4): only small, stable ones, each a thin alias of mjax's own. Under
mjax.alias_jax, `jax._src.X` resolves here; docs/ecosystem.md lists which library uses
which. Everything else of `jax._src` is missing on purpose."""
