"""Kernels whose loops and `%` JAX 0.10.2 traces differently from the user's program:
fori_loop carries the body returns unchanged (JAX's scan and while_loop make them
constants), carries nothing reads (pallas_call's DCE of the kernel drops them), and
remainder by a scalar (computed on the scalar, as jnp.remainder's jit gets it). Written
once against a `jax`-like module; test_mosaic_loops.py compares both libraries' Mosaic
modules and interpreted values.

Also small kernels of JAX's tpu_pallas_test (scalar ops in SMEM, scalar and vector casts,
jnp.where with a Python scalar, pow with an integer exponent, sign, floor division) whose
Mosaic differed: JAX's per-use constants, its sign and pow rules, one sitofp per cast.

`kernels(J, pl, pltpu)` -> {name: (f, [(shape, dtype), ...], numpy_reference)}.
"""
from __future__ import annotations

import numpy as np

F32, I32 = np.float32, np.int32


def _call(J, pl, kernel, out_shape, dtype, **kw):
    return lambda *xs: pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(out_shape, dtype),
                                      **kw)(*xs)


def kernels(J, pl, pltpu) -> dict:
    jnp, lax = J.numpy, J.lax
    K = {}

    def forwarded(x_ref, o_ref):       # b is returned as it came: a constant in the loop
        def body(i, c):
            a, b = c
            return a + b, b
        a, b = lax.fori_loop(0, 4, body, (x_ref[...], x_ref[...] * 2))
        o_ref[...] = a + b
    K["fori_forwarded"] = (_call(J, pl, forwarded, (8, 128), F32),
                           [((8, 128), F32)], lambda x: x + 4 * (2 * x) + 2 * x)

    def unused(x_ref, o_ref):          # b is never read: dropped with its load
        def body(i, c):
            a, b = c
            return a + 1.0, b * 2.0
        a, _ = lax.fori_loop(0, 4, body, (x_ref[...], x_ref[...] + 3.0))
        o_ref[...] = a
    K["fori_unused"] = (_call(J, pl, unused, (8, 128), F32), [((8, 128), F32)],
                        lambda x: x + 4.0)

    def chained(x_ref, o_ref):         # c reads b, nothing reads c: both go (a fixpoint);
        def body(i, c):                # i is read by the kept carry: it stays
            a, b, d = c
            return a + x_ref[pl.ds(i, 1), :], b + 1.0, d * b
        a, _, _ = lax.fori_loop(0, 3, body, (jnp.zeros((1, 128), jnp.float32),
                                             x_ref[0:1, :], x_ref[1:2, :]))
        o_ref[...] = jnp.broadcast_to(a, o_ref.shape)
    K["fori_unused_chain"] = (_call(J, pl, chained, (8, 128), F32), [((8, 128), F32)],
                              lambda x: np.broadcast_to(x[0:1] + x[1:2] + x[2:3], (8, 128)))

    def dynamic(n_ref, x_ref, o_ref):  # a dynamic trip count: a while; b forwarded
        def body(i, c):
            a, b = c
            return a + b * i.astype(jnp.float32), b
        a, b = lax.fori_loop(0, n_ref[0], body, (x_ref[...], x_ref[...] + 1.0))
        o_ref[...] = a - b
    K["fori_dynamic_forwarded"] = (
        _call(J, pl, dynamic, (8, 128), F32,
              in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec()]),
        [((1,), I32), ((8, 128), F32)],
        lambda n, x: x + (x + 1) * (n[0] * (n[0] - 1) / 2) - (x + 1))

    def nested(x_ref, o_ref):          # an inner loop forwarding the outer's carry
        def outer(i, acc):
            def inner(j, c):
                s, y = c
                return s + y, y
            s, _ = lax.fori_loop(0, 2, inner, (acc, x_ref[...]))
            return s
        o_ref[...] = lax.fori_loop(0, 3, outer, jnp.zeros((8, 128), jnp.float32))
    K["fori_nested_forwarded"] = (_call(J, pl, nested, (8, 128), F32),
                                  [((8, 128), F32)], lambda x: 6 * x)

    def effects(x_ref, o_ref):         # the body writes a ref; its carry is never read
        def body(i, c):
            o_ref[pl.ds(i, 1), :] = x_ref[pl.ds(i, 1), :] * c
            return c + 1.0
        lax.fori_loop(0, 8, body, jnp.ones((1, 128), jnp.float32))
    K["fori_effects_unused_carry"] = (
        _call(J, pl, effects, (8, 128), F32), [((8, 128), F32)],
        lambda x: x * (1 + np.arange(8, dtype=F32))[:, None])

    # `%` by a scalar: the zero check and the sign on the scalar, then broadcast
    def rem_int(x_ref, o_ref):
        o_ref[...] = x_ref[...] % 3 + x_ref[...] % -5
    K["rem_int_scalar"] = (_call(J, pl, rem_int, (8, 128), I32), [((8, 128), I32)],
                           lambda x: x % 3 + x % -5)

    def rem_float(x_ref, o_ref):
        o_ref[...] = x_ref[...] % 2.5 + 1.5 % x_ref[...]
    K["rem_float_scalar"] = (_call(J, pl, rem_float, (8, 128), F32), [((8, 128), F32)],
                             lambda x: x % F32(2.5) + F32(1.5) % x)

    def rem_smem(s_ref, x_ref, o_ref):   # a scalar read from SMEM
        o_ref[...] = x_ref[...] % s_ref[0]
    K["rem_smem_scalar"] = (
        _call(J, pl, rem_smem, (8, 128), I32,
              in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec()]),
        [((1,), I32), ((8, 128), I32)], lambda s, x: x % s[0])

    def rem_vectors(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] % y_ref[...]
    K["rem_vectors"] = (_call(J, pl, rem_vectors, (8, 128), F32),
                        [((8, 128), F32), ((8, 128), F32)], lambda x, y: x % y)

    # boolean comparisons with a scalar operand (JAX broadcasts it twice)
    def bool_scalar(x_ref, s_ref, o_ref):
        v, s = x_ref[...] > 0, s_ref[0] > 0
        out = (v == s).astype(jnp.int32) + 2 * (s != v).astype(jnp.int32)
        out += 4 * (v < s).astype(jnp.int32) + 8 * (s > v).astype(jnp.int32)
        o_ref[...] = out + 16 * (v == True).astype(jnp.int32)  # noqa: E712
    K["bool_compare_scalar"] = (
        _call(J, pl, bool_scalar, (8, 128), I32,
              in_specs=[pl.BlockSpec(), pl.BlockSpec(memory_space=pltpu.SMEM)]),
        [((8, 128), I32), ((1,), I32)],
        lambda x, s: ((v := x > 0) == (t := s[0] > 0)).astype(I32) + 2 * (t != v)
        + 4 * (v < t) + 8 * (t > v) + 16 * v)
    K.update(_jax_test_kernels(J, pl, pltpu))
    return K


_SCALAR_OPS = ("maximum", "minimum", "bitwise_and", "bitwise_or", "floor_divide",
               "multiply", "remainder", "subtract")


def _jax_test_kernels(J, pl, pltpu) -> dict:
    jnp, lax = J.numpy, J.lax
    bf16 = jnp.bfloat16
    smem = dict(in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
                out_specs=pl.BlockSpec(memory_space=pltpu.SMEM))
    K = {}
    # JAX's test_{max,min}_operation and *_op_canonicalization: i32/u32/f32 scalars
    for dt in (I32, np.uint32, F32):
        for name in _SCALAR_OPS:
            if dt == F32 and name.startswith("bitwise"):
                continue

            def scalar_op(x_ref, y_ref, fn=getattr(jnp, name)):
                y_ref[0] = fn(x_ref[1], x_ref[2])
            K[f"smem_{name}_{np.dtype(dt).name}"] = (
                _call(J, pl, scalar_op, (1,), dt, **smem), [((3,), dt)],
                lambda x, fn=getattr(np, name): fn(x[1:2], x[2:3]))
    # JAX's test_scalar_casting: one sitofp/fptosi/ext/trunc per cast
    for src in (np.int8, np.int16, I32, F32, bf16):
        for dst in (np.int8, np.int16, I32, F32):
            def cast(x_ref, o_ref, dst=dst):
                o_ref[0] = x_ref[0].astype(dst)
            K[f"scalar_cast_{np.dtype(src).name}_{np.dtype(dst).name}"] = (
                _call(J, pl, cast, (1,), dst, **smem), [((1,), src)],
                lambda x, dst=dst: x.astype(np.float32).astype(dst))
    for src in (np.int8, np.int16):         # the same on vectors
        for dst in (F32, bf16):
            def vcast(x_ref, o_ref, dst=dst):
                o_ref[...] = x_ref[...].astype(dst)
            K[f"vector_cast_{np.dtype(src).name}_{np.dtype(dst).name}"] = (
                _call(J, pl, vcast, (32, 128), dst), [((32, 128), src)],
                lambda x, dst=dst: x.astype(dst))
    # JAX's test_bool_select_operation: jnp.where's Python 0 cast from int32 in the kernel
    for dt in (I32, np.int16, np.int8, F32, bf16):
        def select(c_ref, x_ref, o_ref):
            o_ref[...] = jnp.where(c_ref[...], x_ref[...], 0)
        K[f"bool_select_{np.dtype(dt).name}"] = (
            _call(J, pl, select, (8, 128), dt), [((8, 128), np.bool_), ((8, 128), dt)],
            lambda c, x: np.where(c, x, np.zeros((), x.dtype)))
    # JAX's test_pow_unsigned_exponent, and pow's other forms (a literal base 2: exp2)

    def pow_kernel(x_ref, e_ref, y_ref):
        y_ref[...] = lax.pow(x_ref[...], e_ref[...])
    for dt in (np.uint32, I32):
        K[f"pow_{np.dtype(dt).name}_exponent"] = (
            _call(J, pl, pow_kernel, (8, 128), F32), [((8, 128), F32), ((8, 128), dt)],
            lambda x, e: np.power(x.astype(np.float64), e.astype(np.float64)).astype(F32))

    def exp2_kernel(e_ref, y_ref):
        y_ref[...] = lax.pow(2.0, e_ref[...])
    K["pow_base_2"] = (_call(J, pl, exp2_kernel, (8, 128), F32), [((8, 128), F32)],
                       lambda e: np.exp2(e))
    # jnp.sign (JAX's bit form for floats, per-use zeros for ints) and floor division
    for dt in (F32, bf16, I32, np.uint32, np.int16):
        def sign(x_ref, o_ref):
            o_ref[...] = jnp.sign(x_ref[...])
        K[f"sign_{np.dtype(dt).name}"] = (_call(J, pl, sign, (16, 128), dt),
                                          [((16, 128), dt)], np.sign)

        def floordiv(x_ref, o_ref):
            o_ref[...] = x_ref[...] // (x_ref[...] + 3)
        K[f"floordiv_{np.dtype(dt).name}"] = (
            _call(J, pl, floordiv, (16, 128), dt), [((16, 128), dt)],
            lambda x: np.floor_divide(x.astype(np.float64), x.astype(np.float64) + 3
                                      ).astype(x.dtype))
    # jitted jnp functions given Python scalars (JAX makes their constants at the call)
    lse = J.scipy.special.logsumexp
    for name, fn, ref in (
            ("clip", lambda x: jnp.clip(x, 0.0, 6.0), lambda x: np.clip(x, 0, 6)),
            ("clip_int_bounds", lambda x: jnp.clip(x, 0, 6), lambda x: np.clip(x, 0, 6)),
            ("where_literals", lambda x: jnp.where((x > 0) & (x < 1), 1.0, 0.0),
             lambda x: np.where((x > 0) & (x < 1), 1.0, 0.0)),
            ("isfinite", lambda x: jnp.where(jnp.isfinite(x), x, 0.0), lambda x: x),
            ("floordiv_by_scalar", lambda x: x // 2.0 + 2.0 // x,
             lambda x: np.floor_divide(x, F32(2)) + np.floor_divide(F32(2), x)),
            ("copysign", lambda x: jnp.copysign(1.0, x), lambda x: np.copysign(F32(1), x)),
            ("heaviside", lambda x: jnp.heaviside(x, 0.5), lambda x: np.heaviside(x, F32(.5))),
            ("nan_to_num", lambda x: jnp.nan_to_num(x / (x > 0)),
             lambda x: np.nan_to_num(x / (x > 0)).astype(F32)),
            ("logaddexp", lambda x: jnp.logaddexp(x, 0.5),
             lambda x: np.logaddexp(x, F32(0.5))),
            ("var", lambda x: jnp.broadcast_to(jnp.var(x, axis=1, keepdims=True), x.shape),
             lambda x: np.broadcast_to(x.astype(np.float64).var(1, keepdims=True),
                                       x.shape)),
            ("logsumexp", lambda x: jnp.broadcast_to(lse(x, axis=1, keepdims=True),
                                                     x.shape),
             lambda x: np.broadcast_to(np.log(np.exp(x.astype(np.float64)).sum(
                 1, keepdims=True)), x.shape))):
        def unary(x_ref, o_ref, fn=fn):
            o_ref[...] = fn(x_ref[...]).astype(o_ref.dtype)
        K[f"jnp_{name}"] = (_call(J, pl, unary, (8, 128), F32), [((8, 128), F32)], ref)
    return K
