"""`mjax.nn.dot_product_attention`: scaled dot-product attention with grouped heads,
bias, boolean masks, causal/window masks and sequence lengths (JAX's "xla" path).

Composed from einsum, softmax and a vmap over query-head groups (JAX's composition, so
the program is JAX's), so jit, grad and vmap need no rules of their own.
"""
from __future__ import annotations

import functools

import numpy as _onp

from mjax.specs import dtypes as _dt
from mjax import lax
from mjax.tracing import registration
from mjax.dialect import dot_algorithms as _dot_algorithms
from mjax.lax.platform import current_platform
from mjax.passes.rules.tables import platform_rules
from mjax import numpy as jnp
from mjax.nn.functions import logsumexp, softmax


def _as_4d(t):
    t = jnp.asarray(t)
    return jnp.expand_dims(t, tuple(range(4 - t.ndim))) if t.ndim < 4 else t


def _check(t, shape, dtype, name):
    """JAX's checks and messages: rank, dtype, then each fixed (non -1) size."""
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for want, got in zip(shape, t.shape):
        if want != -1 and want != got:
            raise ValueError(f"{name} shape should be {list(shape)}: but got {t.shape}")


def _large_negative(dtype):
    """The masked logits' value: -0.7 times the dtype's largest value, capped at float32's
    (softmax runs in float32, where it must stay finite), computed in the dtype's own
    scalar arithmetic as JAX computes it."""
    top = min(_dt.finfo(dtype).max, _onp.finfo(_onp.float32).max)
    return jnp.asarray(-0.7 * top, dtype=dtype)


def _masked(logits, mask, is_causal, q_len, kv_len, window):
    """logits where every mask allows them, else the large negative value. The masks are
    and-ed in JAX's order, starting from all-true, so the program is JAX's."""
    if mask is None and not is_causal and q_len is None and kv_len is None and window is None:
        return logits
    keep = jnp.ones_like(logits, dtype=bool)
    if mask is not None:
        assert mask.dtype == _onp.dtype(bool)
        keep = jnp.logical_and(keep, mask)
    T, S = logits.shape[2], logits.shape[3]
    if is_causal:
        keep = jnp.logical_and(keep, jnp.tril(jnp.ones((T, S), dtype=bool))[None, None, :, :])
    if window is not None:
        rows, cols = jnp.array(range(T)), jnp.array(range(S))
        left, right = window
        within_left = rows[..., None] <= cols[..., None, :] + left
        within_right = rows[..., None] >= cols[..., None, :] - right
        keep = jnp.logical_and(keep, jnp.logical_and(within_right, within_left)[None, None])
    if q_len is not None or kv_len is not None:
        q_keep = kv_keep = True
        if q_len is not None:
            q_keep = jnp.arange(0, T)[None, :, None] < q_len[:, None, None]
        if kv_len is not None:
            kv_keep = jnp.arange(0, S)[None, None, :] < kv_len[:, None, None]
        keep = jnp.logical_and(keep, jnp.logical_and(q_keep, kv_keep)[:, None, :, :])
    return jnp.where(keep, logits, _large_negative(logits.dtype))


def _attend(query, key, value, bias, mask, *, is_causal, scale, q_len, kv_len, window,
            return_residual):
    """One group of query heads against the key/value heads: query BTKH, key and value
    BSKH, bias and mask B|1,K|1,T,S. vmapped over the groups by dot_product_attention."""
    logits_dtype = jnp.promote_types(query.dtype, _onp.float32)
    # bf16/f16 logits accumulate in float32 through an explicit dot algorithm (forwards and
    # backwards alike), as JAX asks; other dtypes take the default precision
    if query.dtype == _dt.bfloat16:
        precision = lax.DotAlgorithmPreset.BF16_BF16_F32
    elif query.dtype == _onp.float16:
        precision = lax.DotAlgorithmPreset.F16_F16_F32
    else:
        precision = None
    # (a target without that algorithm takes the default precision, as JAX's fallback; in
    # mjax the target's refusal comes only at lowering, too late for the except below)
    if precision is not None and platform_rules(current_platform()).dot_algorithm_presets \
            and precision.name not in _dot_algorithms.CPU_PRESETS:
        precision = None
    try:
        logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, precision=precision,
                            preferred_element_type=logits_dtype)
    except Exception:  # a platform without that algorithm: the default precision
        logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, precision=None,
                            preferred_element_type=logits_dtype)
    logits *= jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    padded = _masked(logits, mask, is_causal, q_len, kv_len, window)
    padded = padded.astype(_onp.float32)  # softmax always in float32
    probs = softmax(padded, axis=-1).astype(key.dtype)
    encoded = jnp.einsum("BNTS,BSNH->BTNH", probs, value)
    if q_len is not None:
        rows = jnp.arange(0, encoded.shape[1])[None, :] < q_len[:, None]
        encoded *= rows[:, :, None, None].astype(encoded.dtype)
    if not return_residual:
        return encoded
    lse = jnp.transpose(logsumexp(padded, axis=-1).astype(key.dtype), (0, 2, 1))  # BNT->BTN
    return encoded, lax.stop_gradient(lse)


def _by_group(t, K, G):
    """A bias or mask B,N|1,T,S split to B,K|1,G,T,S for the vmap over groups (a single
    head broadcast to every group)."""
    if t is None:
        return None
    tB, tN, tT, tS = t.shape
    if tN == 1:
        return jnp.broadcast_to(t[:, :, None, :, :], (tB, tN, G, tT, tS))
    return jnp.reshape(t, (tB, K, G, tT, tS))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """softmax(q k^T * scale + bias, masked) v over shapes BTNH/BSKH (or TNH/SKH), N a
    multiple of K (grouped-query attention). Logits and softmax are computed in at least
    float32; masked logits get a large negative value, so fully masked rows average v.
    JAX: jax.nn.dot_product_attention."""
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise NotImplementedError(
                "mjax.nn.dot_product_attention: implementation='cudnn' (cuDNN flash "
                "attention) is not available; use None or 'xla'")
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out_shape = jnp.asarray(query).shape
    q, k, v = _as_4d(query), _as_4d(key), _as_4d(value)
    bias = None if bias is None else _as_4d(bias)
    mask = None if mask is None else _as_4d(mask)
    q_len = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    B, S, K, H = k.shape
    _check(v, [B, S, K, H], k.dtype, "value")
    _check(q, [B, -1, -1, H], k.dtype, "query")
    _check(mask, [-1] * 4, _onp.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_len, [B], _onp.dtype("int32"), "query_seq_lengths")
    _check(kv_len, [B], _onp.dtype("int32"), "key_value_seq_lengths")
    T, N = q.shape[1], q.shape[2]
    if N % K:
        raise ValueError("The number of query heads must be a multiple of key/value heads, "
                         f"but got {N} vs {K}")
    scale = (1.0 / _onp.sqrt(H)) if scale is None else scale
    # JAX's "xla" path, structure for structure (so its program, and its bits): queries
    # split into K key heads by G groups, and one group's attention vmapped over the groups
    G = N // K
    qg = jnp.reshape(q, (B, T, K, G, H))
    core = functools.partial(_attend, is_causal=is_causal, scale=scale, q_len=q_len,
                             kv_len=kv_len, window=local_window_size,
                             return_residual=return_residual)
    per_group = registration.VMAP(lambda qg, k, v, bias, mask: core(qg, k, v, bias, mask),
                                  in_axes=(3, None, None, 2, 2), out_axes=3)
    out = per_group(qg, k, v, _by_group(bias, K, G), _by_group(mask, K, G))
    if not return_residual:
        return jnp.reshape(jnp.reshape(out, (B, T, N, H)), out_shape)
    encoded, lse = out
    return (jnp.reshape(jnp.reshape(encoded, (B, T, N, H)), out_shape),
            jnp.reshape(jnp.reshape(lse, (B, T, N)), out_shape[:-1]))
