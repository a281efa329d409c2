"""Rewrite passes over the `jaxpr` dialect, their rule tables, and the `mjax-opt` driver.

Importing this package fills every rule table (`rules/`) and registers every pass (see
`registry.PASSES`).
"""
from mjax.passes.registry import (PASSES, Pass, PassError, parse_pipeline, register_pass,
                                  run_pipeline)
from mjax.passes import rules  # noqa: F401  (fills the rule tables)
from mjax.passes import (jaxpr_verify, jaxpr_to_stablehlo, jaxpr_jvp, jaxpr_vjp,  # noqa: F401
                         jaxpr_batch, jaxpr_expand_transforms, jaxpr_checkify,
                         jaxpr_inline, jaxpr_dce, jaxpr_cse, jaxpr_propagate_shardings,
                         jaxpr_discharge_state, jaxpr_pallas_interpret,
                         jaxpr_pallas_to_triton)

__all__ = ["PASSES", "Pass", "PassError", "parse_pipeline", "register_pass", "run_pipeline"]
