"""Rewrite passes over the `jaxpr` dialect, their rule tables, and the `mjax-opt` driver.

Importing this package registers every pass (see `registry.PASSES`).
"""
from mjax.passes.registry import (PASSES, Pass, PassError, parse_pipeline, register_pass,
                                  run_pipeline)
from mjax.passes import jaxpr_verify, jaxpr_to_stablehlo  # noqa: F401  (register passes)
from mjax.passes.rules import (ad_util, transforms as _transform_rules,  # noqa: F401
                                reductions_ad, indexing_ad)  # noqa: F401
from mjax.passes import (jaxpr_jvp, jaxpr_vjp, jaxpr_expand_transforms, jaxpr_inline,  # noqa: F401
                         jaxpr_dce, jaxpr_cse, jaxpr_batch)
from mjax.passes import jaxpr_propagate_shardings  # noqa: F401,E402
from mjax.passes import jaxpr_pallas_to_triton  # noqa: F401,E402
from mjax.passes.rules import control_flow_ad  # noqa: F401,E402  (needs the passes above)
from mjax.passes import jaxpr_discharge_state, jaxpr_pallas_interpret  # noqa: F401,E402  (Pallas)
from mjax.passes.rules import pallas as _pallas_rules  # noqa: F401,E402  (needs the above)
from mjax.passes import jaxpr_checkify  # noqa: F401,E402  (needs control_flow_ad)

__all__ = ["PASSES", "Pass", "PassError", "parse_pipeline", "register_pass", "run_pipeline"]
