"""Rules for `jaxpr.pallas_call` (dialect/ops/pallas.py).

Lowering: none here; `--jaxpr-pallas-interpret` turns the call into a loop over the grid
(passes/jaxpr_pallas_interpret.py), and on GPUs `--jaxpr-pallas-to-triton` lowers it to a
Triton custom call. No sharding rule (a kernel is opaque to propagation); no transpose
(reverse mode points to jax.custom_vjp, as JAX does).
"""
from __future__ import annotations

from mjax.dialect.ops.pallas import PallasCallOp
from mjax.passes.rules.tables import not_supported

REVERSE_ERROR = (
    "Linearization failed to produce known values for all output primals. This is "
    "typically caused by attempting to differentiate a function uses an operation that "
    "does not support reverse-mode autodiff. (pallas_call has no reverse-mode rule: "
    "define the backward pass as a second kernel and wrap both in jax.custom_vjp.)")

not_supported("lower", PallasCallOp, "a pallas_call is expanded first, by "
                                     "--jaxpr-pallas-interpret (a loop over its grid) or "
                                     "--jaxpr-pallas-to-triton")
not_supported("shard", PallasCallOp, "a Pallas kernel is opaque to sharding propagation")
not_supported("transpose", PallasCallOp, "pallas_call has no reverse mode; wrap the kernel "
                                         "and its backward kernel in jax.custom_vjp")
not_supported("batch", PallasCallOp, "batching rule not written yet")
not_supported("jvp", PallasCallOp, "JVP rule not written yet")
