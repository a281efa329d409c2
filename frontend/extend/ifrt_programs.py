"""JAX: jax.extend.ifrt_programs: jaxlib's IFRT program constructors (plugin programs
and their compile options), as JAX exports them. mjax compiles through PJRT clients and
makes no IFRT programs itself; a client that compiles them (an IFRT proxy) is jaxlib's."""
from jaxlib import _jax

ifrt_programs = _jax.ifrt_programs

del _jax
