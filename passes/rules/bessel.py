"""Rules for the exponentially scaled modified Bessel functions `bessel_i0e` and
`bessel_i1e` (dialect/ops/elementwise.py): lowering, derivatives, checks.

`bessel_i1e` is one CHLO op (`chlo.bessel_i1e`, which XLA expands). `bessel_i0e` has no
CHLO op: it lowers to Cephes' Chebyshev series for exp(-|x|) I0(x), evaluated by
Clenshaw's recurrence in JAX's order of operations (a 16-bit float computed in float32),
so XLA compiles the program JAX's lowering gives and the results agree to the bit.

Their derivatives are their own rules, not the derivatives of the series:
    d/dx i0e(x) = i1e(x) - sign(x) i0e(x)
    d/dx i1e(x) = i0e(x) - i1e(x) (sign(x) + 1/x),   1/2 at |x| <= eps
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
from jaxlib.mlir.dialects import chlo
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.ops import elementwise as E
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import hlo as H
from mjax.passes.rules.tables import lowering, nan_checked

# Cephes' i0.c: Chebyshev coefficients of exp(-x) I0(x) on [0, 8] (in x/2 - 2) and of
# exp(-x) sqrt(x) I0(x) on (8, inf) (in 32/x - 2). float32 uses the last 18 and 7 terms.
I0E_A = (-4.41534164647933937950e-18, 3.33079451882223809783e-17,
         -2.43127984654795469359e-16, 1.71539128555513303061e-15,
         -1.16853328779934516808e-14, 7.67618549860493561688e-14,
         -4.85644678311192946090e-13, 2.95505266312963983461e-12,
         -1.72682629144155570723e-11, 9.67580903537323691224e-11,
         -5.18979560163526290666e-10, 2.65982372468238665035e-9,
         -1.30002500998624804212e-8, 6.04699502254191894932e-8,
         -2.67079385394061173391e-7, 1.11738753912010371815e-6,
         -4.41673835845875056359e-6, 1.64484480707288970893e-5,
         -5.75419501008210370398e-5, 1.88502885095841655729e-4,
         -5.76375574538582365885e-4, 1.63947561694133579842e-3,
         -4.32430999505057594430e-3, 1.05464603945949983183e-2,
         -2.37374148058994688156e-2, 4.93052842396707084878e-2,
         -9.49010970480476444210e-2, 1.71620901522208775349e-1,
         -3.04682672343198398683e-1, 6.76795274409476084995e-1)
I0E_B = (-7.23318048787475395456e-18, -4.83050448594418207126e-18,
         4.46562142029675999901e-17, 3.46122286769746109310e-17,
         -2.82762398051658348494e-16, -3.42548561967721913462e-16,
         1.77256013305652638360e-15, 3.81168066935262242075e-15,
         -9.55484669882830764870e-15, -4.15056934728722208663e-14,
         1.54008621752140982691e-14, 3.85277838274214270114e-13,
         7.18012445138366623367e-13, -1.79417853150680611778e-12,
         -1.32158118404477131188e-11, -3.14991652796324136454e-11,
         1.18891471078464383424e-11, 4.94060238822496958910e-10,
         3.39623202570838634515e-9, 2.26666899049817806459e-8,
         2.04891858946906374183e-7, 2.89137052083475648297e-6,
         6.88975834691682398426e-5, 3.36911647825569408990e-3,
         8.04490411014108831608e-1)


def _chebyshev(x, coefficients):
    """Clenshaw's recurrence (Cephes' chbevl): b0 = x b1 - b2 + c per coefficient, then
    (b0 - b2) / 2, in that order of operations."""
    b0 = b1 = b2 = H.constant_like(x, 0)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = hlo.add(hlo.subtract(hlo.multiply(x, b1), b2), H.constant_like(x, c))
    return hlo.multiply(H.constant_like(x, 0.5), hlo.subtract(b0, b2))


def _i0e(x, wide: bool):
    a, b = (I0E_A, I0E_B) if wide else (I0E_A[-18:], I0E_B[-7:])
    ax = hlo.abs(x)
    le_8 = _chebyshev(hlo.subtract(hlo.multiply(H.constant_like(x, 0.5), ax),
                                   H.constant_like(x, 2.0)), a)
    gt_8 = _chebyshev(hlo.subtract(hlo.divide(H.constant_like(x, 32.0), ax),
                                   H.constant_like(x, 2.0)), b)
    gt_8 = hlo.divide(gt_8, hlo.sqrt(ax))
    return hlo.select(H.compare(ax, H.constant_like(x, 8.0), "LE"), le_8, gt_8)


@lowering(E.BesselI0eOp)
def _bessel_i0e_lower(ctx, x):
    dtype = np.dtype(ctx.avals_in[0].dtype)
    if dtype.itemsize >= 4:
        return _i0e(x, wide=dtype == np.float64)
    # (16-bit floats: the series in float32, as JAX's lowering sums it)
    return H.convert(_i0e(H.convert(x, np.float32), wide=False), dtype)


lowering(E.BesselI1eOp)(lambda ctx, x: chlo.bessel_i1e(x))


def _c(b, x, v):
    return AD.full_like(b, x, v)


# g (i1e(x) - sign(x) i0e(x)), JAX's form
AD.defjvp(E.BesselI0eOp, lambda b, t, x, *, ans: b.mul(
    t, b.sub(b.bessel_i1e(x), b.mul(b.sign(x), ans))))


def _bessel_i1e_jvp(b, t, x, *, ans):
    # i0e(x) - i1e(x) (sign(x) + 1/x), on x kept away from 0 (|x| <= eps: the limit 1/2)
    eps = ml_dtypes.finfo(AD.aval(x).dtype).eps
    not_tiny = b.gt(b.abs(x), _c(b, x, eps))
    safe = b.select_n(not_tiny, _c(b, x, eps), x)
    d = b.sub(b.bessel_i0e(safe),
              b.mul(ans, b.add(b.sign(safe), b.integer_pow(safe, y=-1))))
    return b.mul(t, b.select_n(not_tiny, _c(b, x, 0.5), d))


AD.defjvp(E.BesselI1eOp, _bessel_i1e_jvp)

nan_checked(E.BesselI0eOp, E.BesselI1eOp)
