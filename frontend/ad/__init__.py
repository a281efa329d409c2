"""Automatic differentiation API (JAX's signatures), staged as transformation ops.

`grad(f)(x)` traces `f` once into a private `@f` of the module being built and emits
`jaxpr.vjp @f(x, 1.0)`; `value_and_grad` adds `jaxpr.call @f(x)`. The passes in
mjax.passes (`--jaxpr-expand-transforms`) turn these into plain ops when the module is
compiled, at any nesting depth. Called with no trace active, each API runs as a jit of
itself (traced and compiled once per argument shapes).

`vjp` and `linearize` split the work as JAX does: the forward part runs once and saves
residuals; the returned function runs only the linear part on them (for `linearize`,
the transpose of the backward function, so neither re-runs the forward pass).
"""

from mjax.ad.custom import custom_jvp, custom_vjp
from mjax.ad.remat import checkpoint, remat
from mjax.ad import custom_eval  # noqa: F401  (jaxpr equations of custom calls bind through it)
from mjax.ad import defjvp  # noqa: F401  (fills registration.DEFJVP for lax.igamma)
from mjax.ad.forward import jvp
from mjax.ad.fwd_bwd import fwd_and_bwd
from mjax.ad.grad_markers import DidntWant, DontWant, GradRef, GradValue
from mjax.ad.jacobians import hessian, jacfwd, jacobian, jacrev
from mjax.ad.reverse import grad, linearize, value_and_grad, vjp
from mjax.ad.staging import stage_function, staged
from mjax.ad.transpose import linear_transpose
from mjax.tracing.staging import call_args, emit, emit_call

__all__ = ["call_args", "emit", "emit_call", "stage_function", "staged", "jvp", "grad",
           "linearize", "value_and_grad", "vjp", "hessian", "jacfwd", "jacobian", "jacrev",
           "checkpoint", "custom_jvp", "custom_vjp", "remat", "fwd_and_bwd", "linear_transpose",
           "DidntWant", "DontWant", "GradRef", "GradValue"]
