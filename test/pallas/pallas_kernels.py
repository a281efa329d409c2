"""Kernels from the Pallas documentation, written once over (pl, jnp, lax) so the same
code runs under mjax and under JAX (the oracle)."""

import numpy as np


def add(pl, jnp, lax, jax, x, y, *, block=None, interpret=True):
    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]
    if block is None:
        return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              interpret=interpret)(x, y)
    n = x.shape[0]
    spec = pl.BlockSpec((block,), lambda i: (i,))
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid=(pl.cdiv(n, block),), in_specs=[spec, spec], out_specs=spec,
                          interpret=interpret)(x, y)


def matmul(pl, jnp, lax, jax, x, y, *, bm=16, bn=16, bk=16, interpret=True):
    """Blocked matmul: each (i, j) block accumulates over K in a fori_loop."""
    m, k = x.shape
    _, n = y.shape
    nk = k // bk

    def kernel(x_ref, y_ref, o_ref):
        def body(kk, acc):
            a = x_ref[:, pl.ds(kk * bk, bk)]
            b = y_ref[pl.ds(kk * bk, bk), :]
            return acc + pl.dot(a, b)
        acc = lax.fori_loop(0, nk, body, jnp.zeros((bm, bn), jnp.float32))
        o_ref[...] = acc.astype(o_ref.dtype)

    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((m, n), x.dtype), grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, k), lambda i, j: (i, 0)),
                  pl.BlockSpec((k, bn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)), interpret=interpret)(x, y)


def matmul_k_grid(pl, jnp, lax, jax, x, y, scratch, *, bm=16, bn=16, bk=16, interpret=True):
    """Blocked matmul with K as the last grid axis and a scratch accumulator, zeroed at
    k == 0 and written out at the last k (pl.when)."""
    m, k = x.shape
    _, n = y.shape
    nk = k // bk

    def kernel(x_ref, y_ref, o_ref, acc_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)

        acc_ref[...] += pl.dot(x_ref[...], y_ref[...])

        @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
        def _():
            o_ref[...] = acc_ref[...].astype(o_ref.dtype)

    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((m, n), x.dtype), grid=(m // bm, n // bn, nk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                  pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[scratch((bm, bn), jnp.float32)], interpret=interpret)(x, y)


def softmax(pl, jnp, lax, jax, x, *, rows=1, interpret=True):
    """Fused row softmax: one block of `rows` rows per program."""
    m, n = x.shape

    def kernel(x_ref, o_ref):
        v = x_ref[...].astype(jnp.float32)
        v = v - jnp.max(v, axis=-1, keepdims=True)
        e = jnp.exp(v)
        o_ref[...] = (e / jnp.sum(e, axis=-1, keepdims=True)).astype(o_ref.dtype)

    spec = pl.BlockSpec((rows, n), lambda i: (i, 0))
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid=(pl.cdiv(m, rows),), in_specs=[spec], out_specs=spec,
                          interpret=interpret)(x)


def layer_norm(pl, jnp, lax, jax, *, eps=1e-5, interpret=True):
    """Layer norm over the last axis: a forward kernel (one row per program, squeezed
    row dim) and a backward kernel, combined by custom_vjp."""

    def fwd_kernel(x_ref, w_ref, b_ref, o_ref, mean_ref, rstd_ref):
        x = x_ref[...]
        mean = jnp.mean(x)
        xc = x - mean
        rstd = 1.0 / jnp.sqrt(jnp.mean(xc * xc) + eps)
        o_ref[...] = xc * rstd * w_ref[...] + b_ref[...]
        mean_ref[...] = mean
        rstd_ref[...] = rstd

    def bwd_kernel(x_ref, w_ref, mean_ref, rstd_ref, do_ref, dx_ref, dw_ref, db_ref):
        x, w, do = x_ref[...], w_ref[...], do_ref[...]
        xhat = (x - mean_ref[...]) * rstd_ref[...]
        wdo = w * do
        n = x.shape[-1]
        c1 = jnp.sum(xhat * wdo) / n
        c2 = jnp.sum(wdo) / n
        dx_ref[...] = (wdo - (xhat * c1 + c2)) * rstd_ref[...]
        dw_ref[...] = do * xhat
        db_ref[...] = do

    def call(kernel, args, out_shapes, row_flags):
        m = args[0].shape[0]
        def spec(a, per_row):
            if not per_row:
                return pl.BlockSpec(a.shape, lambda i: (0,) * len(a.shape))
            if len(a.shape) == 1:
                return pl.BlockSpec((None,), lambda i: (i,))
            return pl.BlockSpec((None, a.shape[1]), lambda i: (i, 0))
        in_specs = [spec(a, r) for a, r in zip(args, row_flags)]
        out_specs = [spec(s, True) for s in out_shapes]
        return pl.pallas_call(kernel, out_shape=out_shapes, grid=(m,), in_specs=in_specs,
                              out_specs=out_specs, interpret=interpret)(*args)

    def forward(x, w, b):
        m, n = x.shape
        shapes = (jax.ShapeDtypeStruct((m, n), x.dtype), jax.ShapeDtypeStruct((m,), x.dtype),
                  jax.ShapeDtypeStruct((m,), x.dtype))
        return call(fwd_kernel, (x, w, b), shapes, (True, False, False))

    @jax.custom_vjp
    def ln(x, w, b):
        return forward(x, w, b)[0]

    def ln_fwd(x, w, b):
        y, mean, rstd = forward(x, w, b)
        return y, (x, w, mean, rstd)

    def ln_bwd(res, do):
        x, w, mean, rstd = res
        m, n = x.shape
        shapes = (jax.ShapeDtypeStruct((m, n), x.dtype), jax.ShapeDtypeStruct((m, n), x.dtype),
                  jax.ShapeDtypeStruct((m, n), x.dtype))
        dx, dw, db = call(bwd_kernel, (x, w, mean, rstd, do), shapes,
                          (True, False, True, True, True))
        return dx, dw.sum(axis=0), db.sum(axis=0)

    ln.defvjp(ln_fwd, ln_bwd)
    return ln


def flash_attention(pl, jnp, lax, jax, q, k, v, *, bq=8, bk=8, interpret=True):
    """Flash-attention forward for one head: each program takes a block of queries and
    walks the key/value blocks in a fori_loop with an online softmax."""
    sq, d = q.shape
    sk = k.shape[0]
    scale = 1.0 / np.sqrt(d)

    def kernel(q_ref, k_ref, v_ref, o_ref):
        qb = q_ref[...].astype(jnp.float32) * scale

        def body(j, carry):
            m, l, acc = carry
            kb = k_ref[pl.ds(j * bk, bk), :].astype(jnp.float32)
            vb = v_ref[pl.ds(j * bk, bk), :].astype(jnp.float32)
            s = pl.dot(qb, kb, trans_b=True)
            m_new = jnp.maximum(m, jnp.max(s, axis=1))
            p = jnp.exp(s - m_new[:, None])
            alpha = jnp.exp(m - m_new)
            l_new = alpha * l + jnp.sum(p, axis=1)
            acc = acc * alpha[:, None] + pl.dot(p, vb)
            return m_new, l_new, acc

        init = (jnp.full((bq,), -jnp.inf, jnp.float32), jnp.zeros((bq,), jnp.float32),
                jnp.zeros((bq, d), jnp.float32))
        m, l, acc = lax.fori_loop(0, sk // bk, body, init)
        o_ref[...] = (acc / l[:, None]).astype(o_ref.dtype)

    return pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype), grid=(sq // bq,),
        in_specs=[pl.BlockSpec((bq, d), lambda i: (i, 0)),
                  pl.BlockSpec((sk, d), lambda i: (0, 0)),
                  pl.BlockSpec((sk, d), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((bq, d), lambda i: (i, 0)), interpret=interpret)(q, k, v)


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_attention(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[-1])
    return np_softmax(s) @ v


def np_layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


