"""`mjax.nn.dot_product_attention`: scaled dot-product attention with grouped heads,
bias, boolean masks, causal/window masks and sequence lengths (JAX's "xla" path).

Composed from einsum and softmax, so jit, grad and vmap need no rules of their own.
"""
from __future__ import annotations

import numpy as _onp

from mjax import dtypes as _dt
from mjax import lax
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


def _combined_mask(mask, is_causal, window, q_len, kv_len, B, N, T, S):
    """The (B|1, N|1, T, S) boolean mask of allowed logits, or None when all are."""
    keep = None if mask is None else mask

    def both(a, b):
        return b if a is None else jnp.logical_and(a, b)

    q_pos = jnp.arange(T)[:, None]
    k_pos = jnp.arange(S)[None, :]
    if is_causal:
        keep = both(keep, (q_pos >= k_pos)[None, None])
    if window is not None:
        left, right = window
        keep = both(keep, jnp.logical_and(q_pos <= k_pos + left,
                                          q_pos >= k_pos - right)[None, None])
    if q_len is not None:
        keep = both(keep, (jnp.arange(T)[None, :, None] < q_len[:, None, None])[:, None])
    if kv_len is not None:
        keep = both(keep, (jnp.arange(S)[None, None, :] < kv_len[:, None, None])[:, None])
    return keep


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
    G = N // K
    scale = (1.0 / _onp.sqrt(H)) if scale is None else scale
    logits_dtype = jnp.promote_types(q.dtype, _onp.float32)
    qg = jnp.reshape(q, (B, T, K, G, H))
    logits = jnp.einsum("BTKGH,BSKH->BKGTS", qg, k, preferred_element_type=logits_dtype)
    logits = jnp.reshape(logits, (B, N, T, S))
    logits = logits * jnp.asarray(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    keep = _combined_mask(mask, is_causal, local_window_size, q_len, kv_len, B, N, T, S)
    if keep is not None:
        # JAX's choice: -0.7 * max, capped at float32's range so float32 stays finite.
        big = min(float(_dt.finfo(logits.dtype).max), float(_onp.finfo(_onp.float32).max))
        logits = jnp.where(keep, logits, jnp.asarray(-0.7 * big, dtype=logits.dtype))
    logits32 = logits.astype(_onp.float32)
    probs = softmax(logits32, axis=-1).astype(k.dtype)
    probs = jnp.reshape(probs, (B, K, G, T, S))
    encoded = jnp.einsum("BKGTS,BSKH->BTKGH", probs, v)
    encoded = jnp.reshape(encoded, (B, T, N, H))
    if q_len is not None:
        rows = jnp.arange(T)[None, :] < q_len[:, None]
        encoded = encoded * rows[:, :, None, None].astype(encoded.dtype)
    encoded = jnp.reshape(encoded, out_shape)
    if not return_residual:
        return encoded
    lse = logsumexp(logits32, axis=-1).astype(k.dtype)  # B N T
    lse = jnp.reshape(jnp.transpose(lse, (0, 2, 1)), out_shape[:-1])
    return encoded, lax.stop_gradient(lse)
