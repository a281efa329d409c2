"""`mjax.experimental.jet`: Taylor-mode higher-order forward differentiation (JAX:
jax.experimental.jet).

`jet(f, primals, series)` pushes a truncated Taylor polynomial through `f` in one pass,
rather than nesting first-order jvps. Given the derivatives of a path h at a point,
(h_0, (h_1, ..., h_K)) with h_k = d^k h / dt^k, it returns those of f(h(t)):
(f_0, (f_1, ..., f_K)). With `factorial_scaled=False` (or `jet2`) the terms are the
plain Taylor coefficients h_k / k! instead, on input and output.

    >>> f0, (f1, f2) = jet(jnp.sin, (x,), ((1.0, 0.0),))    # sin, cos, -sin at x

How: `f` is traced to a jaxpr and interpreted equation by equation on (primal,
coefficients) pairs (jet_interpreter.py), with one Taylor rule per primitive in
`jet_rules` (jet_taylor.py), keyed by Primitive object (`mjax.lax.sin_p`, or a user's
`mjax.extend.core.Primitive`). A primitive without a rule raises NotImplementedError.
"""
from mjax.experimental.jet_interpreter import (ZeroSeries, ZeroTerm, call_param_updaters,
                                               fact, jet, jet2, jet_rules, zero_series,
                                               zero_term)
from mjax.experimental.jet_taylor import (def_comp, def_deriv, defzero, deflinear,
                                          deriv_prop, linear_prop, zero_prop)

__all__ = ["jet", "jet2", "fact", "jet_rules", "zero_series", "zero_term", "ZeroSeries",
           "ZeroTerm", "call_param_updaters", "defzero", "zero_prop", "deflinear",
           "linear_prop", "def_deriv", "deriv_prop", "def_comp"]
