"""JAX: jax.interpreters.partial_eval: partial evaluation and DCE rule tables of
user-defined primitives.

mjax's partial evaluation and DCE are passes over its jaxpr dialect (--jaxpr-vjp,
--jaxpr-dce); these tables hold what user primitives register, not used yet (issue 21,
part 2).
"""
from __future__ import annotations

__all__ = ["custom_partial_eval_rules", "partial_eval_jaxpr_custom_rules", "dce_rules"]

custom_partial_eval_rules: dict = {}
partial_eval_jaxpr_custom_rules: dict = {}
dce_rules: dict = {}
