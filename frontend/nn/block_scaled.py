"""`mjax.nn`'s block-scaled (microscaling) matmuls: scaled_matmul, scaled_dot_general and
get_scaled_dot_general_config (JAX: jax._src.nn.functions over
jax._src.cudnn.scaled_matmul_stablehlo).

A block-scaled operand is a low-precision array (float8, float4) of shape (B, M, K) and a
scale array (B, M, K // block): each run of `block` elements along K shares one scale.
JAX lowers the matmul to XLA's `__op$block_scaled_dot` custom call, which XLA's GPU
compiler runs with cuDNN where the types allow (Blackwell) and otherwise expands into
"dequantize, then dot": each operand and its scales converted to the result type, the
scales repeated over their blocks and multiplied in, then a dot_general with that result
type. mjax composes that expansion from its ops on every platform (JAX has no CPU lowering
and raises NotImplementedError there), so `jit`, `vmap` and `grad` need no new rules.

scaled_dot_general quantizes its high-precision operands itself (per block: the largest
magnitude over the data type's largest value, as an e8m0 power of two for mxfp8 or a
float8_e4m3fn value under a global scale for nvfp4), multiplies them block-scaled, and
differentiates by quantizing the cotangent the same way (a custom_vjp).
"""
from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any

import ml_dtypes
import numpy as _onp

from mjax.specs import dtypes as _dt
from mjax import lax
from mjax import numpy as jnp
from mjax.ad import custom_vjp
from mjax.jit.api import jit

__all__ = ["BlockScaleConfig", "scaled_matmul", "get_scaled_dot_general_config",
           "scaled_dot_general"]

_DOT_RESULT_TYPES = (_onp.dtype("float32"), _onp.dtype(ml_dtypes.bfloat16),
                     _onp.dtype("float16"))


@dataclasses.dataclass(slots=True)
class BlockScaleConfig:
    """How scaled_dot_general quantizes one operand. JAX:
    jax._src.cudnn.scaled_matmul_stablehlo.BlockScaleConfig."""
    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


# ---- scaled_matmul ---------------------------------------------------------------------

def _dequantize(x, scales, dtype):
    """x * (its scales repeated over their blocks along the last axis), both as `dtype`."""
    *lead, k = x.shape
    blocks = scales.shape[-1]
    s = jnp.broadcast_to(scales.astype(dtype)[..., None], (*lead, blocks, k // blocks))
    return x.astype(dtype) * s.reshape(x.shape)


@functools.partial(jit, static_argnames=("preferred_element_type",))
def _block_scaled_matmul(a, b, a_scales, b_scales, preferred_element_type):
    a = _dequantize(a, a_scales, preferred_element_type)
    b = _dequantize(b, b_scales, preferred_element_type)
    return lax.dot_general(a, b, (((2,), (2,)), ((0,), (0,))),
                           preferred_element_type=preferred_element_type)


def _matmul_result_type(preferred_element_type, fun_name):
    dtype = _dt.check_user_dtype(preferred_element_type, fun_name)
    if dtype not in _DOT_RESULT_TYPES:
        raise TypeError(f"{fun_name}: preferred_element_type must be float32, bfloat16 or "
                        f"float16 (the types a block-scaled dot produces), got {dtype}")
    return dtype


def _check_blocks(name, x, scales):
    k, blocks = x.shape[-1], scales.shape[-1]
    if blocks == 0 or k % blocks:
        raise ValueError(f"scaled_matmul requires the contract dimension of {name} ({k}) "
                         f"to be a multiple of that of its scales ({blocks}), but got "
                         f"shapes {x.shape} and {scales.shape}")


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=_onp.float32):
    """Block-scaled matmul of (B, M, K) and (B, N, K) arrays with (B, M, K_a) and
    (B, N, K_b) scales: einsum('BMK,BNK->BMN', lhs * repeated lhs_scales, rhs * repeated
    rhs_scales), in `preferred_element_type`. JAX: jax.nn.scaled_matmul."""
    a, b, a_scales, b_scales = lhs, rhs, lhs_scales, rhs_scales
    if not all(x.ndim == 3 for x in (a, b, a_scales, b_scales)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    (B_a, M_a, K_a), (B_b, N_b, K_b) = a.shape, b.shape
    if K_a != K_b or B_a != B_b:
        raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) "
                         f"and contract (K) dimensions, but got shapes {a.shape} and "
                         f"{b.shape}")
    (B_as, M_as, K_as), (B_bs, N_bs, K_bs) = a_scales.shape, b_scales.shape
    if K_as != K_bs or B_as != B_bs:
        raise ValueError("scaled_matmul requires scales to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {a_scales.shape} and "
                         f"{b_scales.shape}")
    if M_as != M_a or N_bs != N_b:
        raise ValueError("scaled_matmul requires scales to match non-contract dimensions "
                         f"of inputs, but got shapes a: {a.shape}, b: {b.shape}, "
                         f"a_scales: {a_scales.shape}, b_scales: {b_scales.shape}")
    _check_blocks("a", a, a_scales)
    _check_blocks("b", b, b_scales)
    dtype = _matmul_result_type(preferred_element_type, "scaled_matmul")
    return _block_scaled_matmul(a, b, a_scales, b_scales, preferred_element_type=dtype)


# ---- configs and quantization ----------------------------------------------------------

def get_scaled_dot_general_config(mode, global_scale=None):
    """The quantization config of `mode` ('mxfp8' or 'nvfp4') for scaled_dot_general.
    JAX: jax.nn.get_scaled_dot_general_config."""
    if mode == "nvfp4":
        return BlockScaleConfig(
            mode="nvfp4", block_size=16, data_type=ml_dtypes.float4_e2m1fn,
            scale_type=ml_dtypes.float8_e4m3fn,
            global_scale=jnp.ones((1,), dtype=_onp.float32) if global_scale is None
            else global_scale, infer_only=False)
    if mode == "mxfp8":
        return BlockScaleConfig(
            mode="mxfp8", block_size=32, data_type=ml_dtypes.float8_e4m3fn,
            scale_type=ml_dtypes.float8_e8m0fnu, global_scale=None, infer_only=False)
    raise ValueError(f"Unsupported mode: {mode}")


def _finfo_max(dtype, like):
    return jnp.asarray(float(ml_dtypes.finfo(dtype).max), like.dtype)


def _e8m0_rounding_up(x):
    """The e8m0 bits (a biased exponent, uint8) of the power of two at or above each
    non-negative float32 value (a denormal at most half the smallest normal rounds down)."""
    bits = x.astype(_onp.float32).view(_onp.uint32)
    exp, mant = bits >> 23, bits & 0x7FFFFF
    up = (mant > 0) & (exp != 0xFE) & ~((exp == 0) & (mant <= 0x400000))
    return jnp.where(up, exp + 1, exp).astype(_onp.uint8)


def _e8m0_value(bits, dtype):
    """The power of two of e8m0 exponent bits, as `dtype` (0 bits: a tiny positive value,
    so dividing by it stays finite)."""
    value = (bits.astype(_onp.uint32) << 23).view(_onp.float32)
    tiny = 2.0 ** -15 if _onp.dtype(dtype) == _onp.float16 else 2.0 ** -127
    return jnp.where(value == 0, jnp.asarray(tiny, _onp.float32), value).astype(dtype)


def _quantize(x, config):
    """(x as config.data_type, per-block scales as config.scale_type) of a (B, M, K) x."""
    shape, block = x.shape, config.block_size
    if shape[-1] < block or shape[-1] % block:
        raise AssertionError(f"scaled_dot_general: the contracting size {shape[-1]} must be a "
                             f"multiple of the {config.mode} block size {block}")
    x = x.reshape(shape[:-1] + (shape[-1] // block, block))
    big = _finfo_max(config.data_type, x)

    def block_scales(values):
        return jnp.max(jnp.abs(values), axis=-1, keepdims=True) / big

    if config.mode == "mxfp8":
        if config.global_scale is not None or config.scale_type != ml_dtypes.float8_e8m0fnu:
            raise AssertionError("an mxfp8 config has float8_e8m0fnu scales and no global "
                                 "scale")
        scales = _e8m0_rounding_up(block_scales(x))
        scaled = x / _e8m0_value(scales, x.dtype)
    elif config.mode == "nvfp4":
        if config.scale_type != ml_dtypes.float8_e4m3fn or jnp.asarray(
                config.global_scale).dtype != _onp.float32:
            raise AssertionError("an nvfp4 config has float8_e4m3fn scales and a float32 "
                                 "global scale")
        x = x / config.global_scale
        scales = jnp.clip(block_scales(x), 0, _finfo_max(config.scale_type, big))
        scales = lax.optimization_barrier(scales.astype(config.scale_type))
        scaled = x / scales.astype(_onp.float32)
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    x_q = jnp.clip(scaled, -big, big).astype(config.data_type).reshape(shape)
    return x_q, scales.reshape(scales.shape[:-1]).view(config.scale_type)


# ---- scaled_dot_general ----------------------------------------------------------------

def _to_3d(x, contracting, batch):
    """x transposed to (batch dims, other dims, contracting dims) and flattened to 3-D."""
    others = [d for d in range(x.ndim) if d not in contracting and d not in batch]
    batch, contracting = sorted(batch), sorted(contracting)

    def size(dims):
        return int(_onp.prod([x.shape[d] for d in dims], dtype=_onp.int64))
    t = jnp.transpose(x, batch + others + contracting)
    return t.reshape((size(batch), size(others), size(contracting)))


def _dot_shape(lhs_shape, rhs_shape, lhs_dn, rhs_dn):
    """dot_general's result shape: batch dims, then lhs's and rhs's free dims."""
    (lc, lb), (rc, rb) = lhs_dn, rhs_dn
    return (tuple(d for i, d in enumerate(lhs_shape) if i in lb)
            + tuple(d for i, d in enumerate(lhs_shape) if i not in lc and i not in lb)
            + tuple(d for i, d in enumerate(rhs_shape) if i not in rc and i not in rb))


def _scaled_dot(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_q, lhs_s = _quantize(_to_3d(lhs, lc, lb), configs[0])
    rhs_q, rhs_s = _quantize(_to_3d(rhs, rc, rb), configs[1])
    nvfp4 = configs[0].mode == "nvfp4"
    out = _block_scaled_matmul(lhs_q, rhs_q, lhs_s, rhs_s, preferred_element_type=(
        _onp.dtype(_onp.float32) if nvfp4 else preferred_element_type))
    if nvfp4:
        out = out * (configs[0].global_scale * configs[1].global_scale)
        out = out.astype(preferred_element_type)
    return out.reshape(_dot_shape(lhs.shape, rhs.shape, (lc, lb), (rc, rb)))


def _free(ndim, *used):
    return [d for d in range(ndim) if not any(d in u for u in used)]


def _lhs_cotangent(g, x, y, dimension_numbers, preferred_element_type, configs,
                   swap_ans=False):
    """The cotangent of dot_general's lhs x, given its result's cotangent g (the result of
    dot_general(y, x) when swap_ans), as a block-scaled dot of g and y."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = _free(x.ndim, x_contract, x_batch)
    y_kept = _free(y.ndim, y_contract, y_batch)
    nb = len(x_batch)
    ans_batch = list(range(nb))
    if swap_ans:
        ans_y = list(range(nb, nb + len(y_kept)))
    else:
        ans_y = list(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
    x_contract_by_y = [x_contract[i] for i in _onp.argsort(y_contract)]
    out_axes = tuple(int(i) for i in _onp.argsort(list(x_batch) + x_kept + x_contract_by_y))
    y_3d = _to_3d(y, y_kept, y_batch)
    g_3d = _to_3d(g, ans_y, ans_batch)
    if configs[0].mode != "nvfp4":
        g_q, g_s = _quantize(g_3d, configs[0])
        y_q, y_s = _quantize(y_3d, configs[1])
        out = _block_scaled_matmul(g_q, y_q, g_s, y_s,
                                   preferred_element_type=preferred_element_type)
    else:
        out = jnp.matmul(g_3d, jnp.swapaxes(y_3d, 1, 2),
                         preferred_element_type=preferred_element_type)
    out = out.reshape(_dot_shape(g.shape, y.shape, (ans_y, ans_batch), (y_kept, y_batch)))
    return lax.transpose(out, out_axes)


@functools.partial(custom_vjp, nondiff_argnums=(2, 3, 4))
def _scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    return _scaled_dot(lhs, rhs, dimension_numbers, preferred_element_type, configs)


def _scaled_dot_fwd(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    return _scaled_dot(lhs, rhs, dimension_numbers, preferred_element_type,
                       configs), (lhs, rhs)


def _scaled_dot_bwd(dimension_numbers, preferred_element_type, configs, res, g):
    lhs, rhs = res
    (lc, rc), (lb, rb) = dimension_numbers
    grad_lhs = _lhs_cotangent(g, lhs, rhs, dimension_numbers, preferred_element_type,
                              [configs[2], configs[1]])
    grad_rhs = _lhs_cotangent(g, rhs, lhs, ((rc, lc), (rb, lb)), preferred_element_type,
                              [configs[2], configs[0]], swap_ans=True)
    if configs[2].mode == "nvfp4":
        # A straight-through estimator that zeroes what quantization clipped.
        def unclipped(x, config):
            limit = (float(ml_dtypes.finfo(config.data_type).max)
                     * float(ml_dtypes.finfo(config.scale_type).max))
            return jnp.abs(x) <= config.global_scale * jnp.asarray(limit, x.dtype)
        grad_lhs = jnp.where(unclipped(lhs, configs[0]), grad_lhs, 0)
        grad_rhs = jnp.where(unclipped(rhs, configs[1]), grad_rhs, 0)
    return grad_lhs, grad_rhs


_scaled_dot_general.defvjp(_scaled_dot_fwd, _scaled_dot_bwd)


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=_onp.float32,
                       configs=None, implementation=None):
    """dot_general of lhs and rhs quantized block-wise by configs (lhs's, rhs's and the
    cotangent's; see get_scaled_dot_general_config); without configs, lax.dot_general.
    JAX: jax.nn.scaled_dot_general."""
    if implementation is not None:
        warnings.warn("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning, stacklevel=2)
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    try:
        dtype = _onp.dtype(preferred_element_type) if preferred_element_type else None
    except TypeError:
        dtype = None
    if dtype not in _DOT_RESULT_TYPES:
        raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                        f"{preferred_element_type if dtype is None else dtype}")
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) for d in dims) for dims in (lc, rc, lb, rb))
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    # Without batch dimensions, a trailing unit one on each side (squeezed after).
    added = not lb or not rb
    if not lb:
        lhs, lb = jnp.expand_dims(lhs, lhs.ndim), (lhs.ndim,)
    if not rb:
        rhs, rb = jnp.expand_dims(rhs, rhs.ndim), (rhs.ndim,)
    out = _scaled_dot_general(lhs, rhs, ((lc, rc), (lb, rb)), dtype, configs)
    return jnp.squeeze(out, axis=0) if added else out
