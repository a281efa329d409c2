"""`mjax.lax`: one Python function per `jaxpr` primitive, as in `jax.lax`
(`def sin(x): return bind(SinOp, x)`), and what JAX composes from them.

The functions live in topic modules, each importing only those before it: sharding.py
(layout constraints), shapes.py, elementwise.py (ops, conversions, constants), dot.py,
region_reduce.py, reduce.py, control_flow.py, indexing.py, sorting.py, convolution.py,
windowed.py, parallel.py (collectives), linalg.py, special_functions.py, ragged.py,
rng.py (XLA's bit generator), solves.py, platform.py. lax never imports mjax.numpy or anything above it
(docs/design.md, floors).
"""
from __future__ import annotations

from mjax.lax import linalg  # noqa: F401
# (JAX's TPU eigh of matrices larger than 256, built on linalg_tpu's QDWH, registers its
# expansion for the eigh op when imported)
from mjax.lax import eigh_tpu  # noqa: F401,E402
from mjax.lax.composite import composite  # noqa: F401
from mjax.lax.control_flow import (associative_scan, cond, fori_loop, map, scan, switch,
                                   while_loop)
from mjax.lax.convolution import (ConvDimensionNumbers, ConvGeneralDilatedDimensionNumbers,
                                  conv, conv_dimension_numbers, conv_general_dilated,
                                  conv_general_dilated_local, conv_general_dilated_patches,
                                  conv_general_permutations, conv_general_shape_tuple,
                                  conv_shape_tuple, conv_transpose,
                                  conv_transpose_shape_tuple, conv_with_general_padding,
                                  padtype_to_pads)
from mjax.lax.dot import DotDimensionNumbers, batch_matmul, dot, dot_general
from mjax.lax.precision import DotAlgorithm, DotAlgorithmPreset, Precision, PrecisionLike
from mjax.lax.elementwise import (  # noqa: F401  (_LiteralArray, _prepare: used by numpy)
    IMPLICIT_BROADCAST, RoundingMethod, _is_python_scalar, _LiteralArray, _prepare, abs,
    acos, acosh, add, and_, asin, asinh, atan, atan2, atanh, bitcast_convert_type,
    bitwise_and, bitwise_not, bitwise_or, bitwise_xor, broadcasted_iota, cbrt, ceil, clamp,
    clz, complex, conj, convert_element_type, cos, cosh, digamma, div, dtype, empty, eq,
    erf, erf_inv, erfc, exp, exp2, expm1, floor, full, full_like, ge, gt, imag,
    implicit_broadcast, integer_pow, iota, is_finite, le, lgamma, log, log1p, logistic, lt,
    max, min, mul, mulhi, ne, neg, nextafter, not_, optimization_barrier, or_, polygamma,
    population_count, pow, real, reciprocal, reduce_precision, rem, round, rsqrt, select,
    select_n, shift_left, shift_right_arithmetic, shift_right_logical, sign, sin, sinh,
    sqrt, square, stop_gradient, sub, tan, tanh, xor, zeros_like_array)
from mjax.lax.indexing import (GatherDimensionNumbers,  # noqa: F401  (_mode: used by numpy)
                               GatherScatterMode, ScatterDimensionNumbers, _mode,
                               dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim,
                               dynamic_update_index_in_dim, dynamic_update_slice,
                               dynamic_update_slice_in_dim, gather, index_take, scatter,
                               scatter_add, scatter_apply, scatter_max, scatter_min,
                               scatter_mul, scatter_sub)
from mjax.lax.linalg import FftType, fft
from mjax.lax.platform import platform_dependent
from mjax.lax.parallel import (all_gather, all_to_all, axis_index, axis_size, pbroadcast,
                               pcast, pmax, pmean, pmin, ppermute, pshuffle, psum,
                               psum_scatter, pswapaxes)
from mjax.lax.ragged import RaggedDotDimensionNumbers, ragged_dot, ragged_dot_general
from mjax.lax.rng import RandomAlgorithm, rng_bit_generator, rng_uniform
from mjax.lax.reduce import (argmax, argmin, cumlogsumexp, cummax, cummin, cumprod, cumsum,
                             reduce, reduce_and, reduce_max, reduce_min, reduce_or,
                             reduce_prod, reduce_sum, reduce_xor)
from mjax.lax.shapes import (broadcast, broadcast_in_dim, broadcast_like, broadcast_shapes,
                             broadcast_to_rank, collapse, concatenate, expand_dims,
                             index_in_dim, pad, reshape, rev, slice, slice_in_dim, split,
                             squeeze, stack, tile, transpose, unstack)
from mjax.lax.sharding import with_sharding_constraint
from mjax.lax.solves import custom_linear_solve, custom_root
from mjax.lax.sorting import approx_max_k, approx_min_k, sort, sort_key_val, top_k
from mjax.lax.special_functions import (bessel_i0e, bessel_i1e, betainc, igamma,
                                        igamma_grad_a, igammac, random_gamma_grad, zeta)
from mjax.lax.windowed import reduce_window, reduce_window_shape_tuple
from mjax.tracing.primitive import FunctionPrimitive, op_primitives

# JAX's Primitive objects (`add_p`, ...): one per op of the dialect, from its registry,
# so libraries can key tables by them; and for the primitives JAX has that mjax composes
# from other ops, a named object whose bind calls the lax function.
globals().update(op_primitives())
for _name in ("after_all", "approx_top_k", "create_token", "dce_sink", "device_put",
              "eq_to", "igamma", "igamma_grad_a", "igammac", "le_to", "lt_to", "mulhi",
              "nextafter", "ragged_all_to_all", "regularized_incomplete_beta",
              "select_and_scatter", "stage", "tile", "zeta"):
    globals()[f"{_name}_p"] = FunctionPrimitive(_name, globals().get(_name))
del _name
linear_solve_p = FunctionPrimitive("custom_linear_solve", custom_linear_solve)
scatter_sub_p = FunctionPrimitive("scatter-sub", scatter_sub)
