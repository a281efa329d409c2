"""JAX: jax.interpreters.partial_eval: partial evaluation and DCE rule tables of
user-defined primitives.

mjax's partial evaluation and DCE are passes over its jaxpr dialect (--jaxpr-vjp,
--jaxpr-dce); these tables hold what user primitives register, not used yet (issue 21,
part 2).
"""
from __future__ import annotations

__all__ = ["custom_partial_eval_rules", "partial_eval_jaxpr_custom_rules", "dce_rules",
           "PartialVal"]

custom_partial_eval_rules: dict = {}
partial_eval_jaxpr_custom_rules: dict = {}
dce_rules: dict = {}


class PartialVal(tuple):
    """A value for partial evaluation: (aval, None) when unknown, (None, const) when
    known (JAX: pe.PartialVal). mjax's partial evaluation does not take them."""

    def __new__(cls, xs):
        pv, const = xs
        return tuple.__new__(cls, (pv, const))

    @classmethod
    def known(cls, const) -> "PartialVal":
        return PartialVal((None, const))

    @classmethod
    def unknown(cls, aval) -> "PartialVal":
        return PartialVal((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self):
        return self[1] if self[0] is None else None

    def get_aval(self):
        return self[0]
