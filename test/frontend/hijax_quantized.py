"""The quantized array of JAX's docs/hijax_types.md, defined with one library's hijax
(test_hijax_types.py and test_hijax_jaxpr.py run it on jax and on mjax): QArray, its
HiType (printing as `q8[...]`, with an aval property and method), and the quantize,
dequantize and matmul_q primitives with straight-through VJP rules. With
`batch_rule_raises`, Quantize has a `batch` rule raising BatchRuleCalled, so a test sees
that vmap called it (without it, the libraries batch its expansion)."""
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np


class BatchRuleCalled(Exception):
    """What Quantize's `batch` rule raises, to see that vmap called it."""


def quantized(api, jnp, hijax, batch_rule_raises=False) -> SimpleNamespace:
    """QArray, QArrayTy, quantize, dequantize and matmul_q over `api`'s hijax."""

    @dataclass(frozen=True)
    class QArray:
        qvalue: object
        scale: object

    @dataclass(frozen=True)
    class QArrayTy(hijax.HiType):
        shape: tuple

        def lo_ty(self):
            return [hijax.ShapedArray(self.shape, jnp.dtype("int8")),
                    hijax.ShapedArray(self.shape[:-1], jnp.dtype("float32"))]

        def lower_val(self, q):
            return [q.qvalue, q.scale]

        def raise_val(self, qvalue, scale):
            return QArray(qvalue, scale)

        def to_tangent_aval(self):
            return hijax.ShapedArray(self.shape, jnp.dtype("float32"))

        def str_short(self, short_dtypes=False, mesh_axis_types=False):
            return f"q8[{','.join(map(str, self.shape))}]"
        __repr__ = str_short

        @hijax.aval_property
        def nbytes(self):        # (a tracer of the type answers it)
            return int(np.prod(self.aval.shape))

        @hijax.aval_method
        def rows(self):
            return self.aval.shape[0]

    hijax.register_hitype(QArray, lambda q: QArrayTy(tuple(q.qvalue.shape)))

    class Quantize(hijax.VJPHiPrimitive):
        def __init__(self, x_aval):
            self.in_avals, self.out_aval, self.params = (x_aval,), QArrayTy(x_aval.shape), {}
            super().__init__()

        def expand(self, x):
            scale = jnp.max(jnp.abs(x), axis=-1) / 127.
            return QArray(jnp.round(x / scale[..., None]).astype(jnp.int8), scale)

        def vjp_fwd(self, nzs_in, x):     # (straight-through estimator)
            return self(x), None

        def vjp_bwd_retval(self, _res, g):
            return (g,)

    def batch(self, axis_data, args, dims):
        raise BatchRuleCalled(dims)
    if batch_rule_raises:
        Quantize.batch = batch

    class Dequantize(hijax.VJPHiPrimitive):
        def __init__(self, q_aval):
            self.in_avals = (q_aval,)
            self.out_aval = hijax.ShapedArray(q_aval.shape, jnp.dtype("float32"))
            self.params = {}
            super().__init__()

        def expand(self, qx):
            return qx.qvalue.astype("float32") * qx.scale[..., None]

        def vjp_fwd(self, nzs_in, qx):
            return self(qx), None

        def vjp_bwd_retval(self, _res, g):
            return (g,)

    class MatmulQ(hijax.VJPHiPrimitive):
        def __init__(self, x_aval, q_aval):
            self.in_avals = (x_aval, q_aval)
            self.out_aval = hijax.ShapedArray((x_aval.shape[0], q_aval.shape[1]),
                                              jnp.dtype("float32"))
            self.params = {}
            super().__init__()

        def expand(self, x, qw):
            return (x * qw.scale) @ qw.qvalue.astype(jnp.float32)

        def vjp_fwd(self, nzs_in, x, qw):
            return self(x, qw), (x, qw)      # (a hi residual)

        def vjp_bwd_retval(self, res, g):
            x, qw = res
            w = dequantize(qw)
            return g @ w.T, x.T @ g

    def quantize(x):
        return Quantize(api.typeof(x))(x)

    def dequantize(q):
        return Dequantize(api.typeof(q))(q)

    def matmul_q(x, qw):
        return MatmulQ(api.typeof(x), api.typeof(qw))(x, qw)
    return SimpleNamespace(QArray=QArray, QArrayTy=QArrayTy, quantize=quantize,
                           dequantize=dequantize, matmul_q=matmul_q)
