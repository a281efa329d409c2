"""The function make_jaxpr prints when the trace holds transformations: a copy of the
module with grad, jvp and vmap expanded and cleaned up as JAX's tracing leaves them
(mjax.passes.print_expansion), its cotangents typed as the trace typed them in explicit
sharding mode (mjax.jaxpr.pretty_types)."""
from __future__ import annotations

from mjax.passes import print_expansion
from mjax.jaxpr.pretty_types import mark_cotangent_types


def expanded_function(module, name: str, type_specs=None):
    """(copy of `module`, its function @name with transformations expanded), or None when
    the module holds no transformation op (the trace prints as it is). `type_specs`: the
    trace's sharding types of @name's values (explicit mode), which the cotangents the
    expansion makes are typed from."""
    def note_types(traced_fn, copy_fn):
        mark_cotangent_types(traced_fn, copy_fn, type_specs)
    return print_expansion.expanded_function(
        module, name, None if type_specs is None else note_types)


__all__ = ["expanded_function"]
