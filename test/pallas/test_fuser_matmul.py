"""A fusible matmul kernel (pl.pallas_call with PrefetchScalarGridSpec, interpreted)
fused with the ops around it by fuser.fuse, run with jax and with mjax: equal values,
the same values read by each fusion, and NumPy's result. In the style of JAX's
tests/pallas/tpu_fusible_matmul_test.py (its PALLAS_CALL form)."""
import numpy as np
import pytest

import jax  # noqa: F401  (the oracle; fuser_programs imports it)
from fuser_programs import fusible_matmul, namespace

RNG = np.random.RandomState(0)
X = RNG.randn(16, 256).astype(np.float32)
Y = RNG.randn(256, 256).astype(np.float32)
Y2 = RNG.randn(512, 256).astype(np.float32)
B = RNG.randn(256).astype(np.float32)
Y4 = RNG.randn(2, 3, 256, 256).astype(np.float32)
Y5 = RNG.randn(4, 2, 3, 256, 256).astype(np.float32)
X4 = RNG.randn(4, 4, 16, 256).astype(np.float32)
B4 = RNG.randn(4, 4, 1, 256).astype(np.float32)
C2 = RNG.randn(2, 128, 128).astype(np.float32)
C3 = RNG.randn(4, 2, 128, 128).astype(np.float32)
I0, I1, I2 = np.int32(1), np.int32(2), np.int32(3)


def _programs(ns, record):
    jnp, lax = ns.jnp, ns.lax
    mm = lambda x, y, **kw: fusible_matmul(ns, x, y, record=record, **kw)
    bf16 = jnp.bfloat16
    return {
        "plain": (lambda x, y: mm(x, y), (X, Y), lambda x, y: x @ y),
        "relu": (lambda x, y: jnp.maximum(mm(x, y), 0.0), (X, Y),
                 lambda x, y: np.maximum(x @ y, 0)),
        "bias": (lambda x, y, b: jnp.maximum(mm(x, y) + jnp.expand_dims(b, 0), 0.0),
                 (X, Y, B), lambda x, y, b: np.maximum(x @ y + b, 0)),
        "input_ops": (lambda x, y: mm(jnp.tanh(x) * 2, y.astype(bf16).astype(jnp.float32)),
                      (X, Y), lambda x, y: (np.tanh(x) * 2) @ np.asarray(
                          y.astype(np.dtype(bf16)).astype(np.float32))),
        "slice": (lambda x, y: mm(x, y[128:384]), (X, Y2), lambda x, y: x @ y[128:384]),
        "dynamic_slice": (lambda x, y, i: mm(x, lax.dynamic_slice(y, (i * 128, 0),
                                                                   (256, 256))),
                          (X, Y2, np.int32(1)), lambda x, y, i: x @ y[128:384]),
        "rhs_transpose": (lambda x, y: mm(x, y.T + 1), (X, Y), lambda x, y: x @ (y.T + 1)),
        "reduce_sum": (lambda x, y: jnp.sum(mm(x, y, bn=256), axis=1), (X, Y),
                       lambda x, y: (x @ y).sum(1)),
        "out_transpose": (lambda x, y: mm(x, y).T * 3, (X, Y), lambda x, y: (x @ y).T * 3),
        "bfloat16": (lambda x, y: mm(x.astype(bf16), y.astype(bf16)), (X, Y),
                     lambda x, y: np.asarray(x.astype(np.dtype(bf16)), np.float32)
                     @ np.asarray(y.astype(np.dtype(bf16)), np.float32)),
        "concat_contract": (lambda x, ys: mm(x, jnp.concatenate(ys, axis=0)),
                            (X, [Y[:128], Y[128:]]),
                            lambda x, ys: x @ np.concatenate(ys, axis=0)),
        "concat_output": (lambda x, ys: mm(x, jnp.concatenate(ys, axis=1)),
                          (X, [Y[:, :128], Y[:, 128:]]),
                          lambda x, ys: x @ np.concatenate(ys, axis=1)),
        # (JAX's tpu_fusible_matmul_test cases, at smaller shapes)
        "multi_slice": (lambda x, y: mm(x, y[1, 1]), (X, Y4), lambda x, y: x @ y[1, 1]),
        "multiple_slices": (lambda x, y: mm(x, y[1][1]), (X, Y4),
                            lambda x, y: x @ y[1][1]),
        "multiple_dynamic_slices": (lambda x, y, i, j: mm(x, y[i][j]), (X, Y4, I0, I1),
                                    lambda x, y, i, j: x @ y[i][j]),
        "mixed_slices": (lambda x, y, i, j: mm(x, y[2][i, j]), (X, Y5, I0, I1),
                         lambda x, y, i, j: x @ y[2, i, j]),
        "mixed_slices_and_bias": (
            lambda x, y, b, i, j, k: mm(x[k][3], y[2][i, j]) + b[i, j],
            (X4, Y5, B4, I0, I1, I2),
            lambda x, y, b, i, j, k: x[k][3] @ y[2][i, j] + b[i, j]),
        "double_concat": (lambda x, ys, y3: mm(x, jnp.concatenate(
            [jnp.concatenate(ys, axis=0), y3], axis=1)), (X, [Y[:128, :128],
                                                          Y[128:, :128]], Y[:, 128:]),
            lambda x, ys, y3: x @ np.concatenate([np.concatenate(ys, 0), y3], 1)),
        "slice_concat": (lambda x, y1, y2: mm(x, jnp.concatenate([y1, y2[1, 0]], axis=0)),
                         (X, C2[0], C3), lambda x, y1, y2: x @ np.concatenate(
                             [y1, y2[1, 0]], 0)),
        "slice_concat_slice": (
            lambda x, y1, y2: mm(x, jnp.concatenate([y1, y2[3]], axis=1)[1]),
            (X, C2, C3), lambda x, y1, y2: x @ np.concatenate([y1, y2[3]], 1)[1]),
        "dynamic_slice_concat": (
            lambda x, y1, y2, i, j: mm(x, jnp.concatenate([y1, y2[i]], axis=1)[j]),
            (X, C2, C3, I2, I0),
            lambda x, y1, y2, i, j: x @ np.concatenate([y1, y2[i]], 1)[j]),
        "rhs_transpose_after_slice": (lambda x, y: mm(x, y[:, 128:384].T), (X, Y2.T),
                                      lambda x, y: x @ y[:, 128:384].T),
        "lhs_transpose": (lambda x, y: mm(x.T, y), (X.T.copy(), Y),
                          lambda x, y: x.T @ y),
        "out_transpose_mul": (lambda x, y: mm(x, y).T * Y[:, :16], (X, Y),
                              lambda x, y: (x @ y).T * Y[:, :16]),
        "reduce_sum_broadcast": (lambda x, y: jnp.broadcast_to(
            jnp.sum(mm(x, y, bn=256), axis=1, keepdims=True), (16, 128)), (X, Y),
            lambda x, y: np.broadcast_to((x @ y).sum(1, keepdims=True), (16, 128))),
    }


def _run(lib, name):
    ns = namespace(lib)
    record = []
    f, args, ref = _programs(ns, record)[name]
    out = np.asarray(ns.jax.jit(ns.fuser.fuse(f))(*args))
    return out, record, ref(*args)


NAMES = ["bias", "plain", "input_ops", "dynamic_slice", "rhs_transpose", "relu", "slice",
         "reduce_sum", "out_transpose", "concat_contract", "concat_output",
         "bfloat16", "multi_slice", "multiple_slices", "multiple_dynamic_slices",
         "mixed_slices", "mixed_slices_and_bias", "double_concat", "slice_concat",
         "slice_concat_slice", "dynamic_slice_concat", "rhs_transpose_after_slice",
         "lhs_transpose", "out_transpose_mul", "reduce_sum_broadcast"]


@pytest.mark.parametrize("name", NAMES)
def test_fused_matmul_matches_jax_and_numpy(name):
    got, got_record, ref = _run("mjax", name)
    want, want_record, _ = _run("jax", name)
    assert got_record == want_record        # (the fusions read the same arrays)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-3)


def test_fusions_are_fused_into_the_kernel():
    # (the input fusion's tanh runs in the kernel: the pallas_call reads x itself)
    ns = namespace("mjax")
    record = []
    f = lambda x, y: fusible_matmul(ns, ns.jnp.tanh(x), y, record=record)
    text = str(ns.jax.make_jaxpr(ns.fuser.fuse(f))(X, Y))
    outer = text.split("pallas_call")[0]
    assert "tanh" not in outer
    assert record[0][0] == [(16, 256)]
