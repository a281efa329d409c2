"""`mjax.numpy`: NumPy's API over `mjax.lax` (JAX's `jax.numpy`).

Arguments are promoted with JAX's rules (weak Python scalars, x64 canonicalization) and
broadcast NumPy-style, then handed to `lax`. No new primitives are defined here. This file
only re-exports; the functions live in modules named by topic, each importing only the
ones before it in this order (lowest first):

    concrete_values, array_api, arguments                 argument checks, decorators
    conversion, scalar_types, promotion                   asarray, dtypes, JAX's promotion
    elementwise, floating_point                           the ufuncs as plain functions
    shaping, creation, indexing                           reshape/stack, zeros, take/getitem
    reductions, sorting                                   sum/mean/cumsum, sort
    products, einsum, linalg                              matmul/dot/vecdot, jnp.linalg
    searching, selection, repetition                      searchsorted/nonzero, where, repeat
    index_tricks, insertion, arraypad                     mgrid/r_/ix_, insert/put, pad
    statistics, calculus, windows, polynomial             cov, diff/gradient, hanning, poly*
    arraysetops, histograms, nanfunctions, quantiles      unique, histogram, nan*, median
    vectorize, bit_packing, file_io, fft, ufuncs          vectorize, packbits, load, jnp.fft,
                                                          the ufunc objects (jnp.add, ...)
"""
from __future__ import annotations

from mjax.numpy.array_api import __array_api_version__, __array_namespace_info__
from mjax.numpy.indexing import take, take_along_axis
from mjax.numpy.conversion import array, asarray, astype, copy, from_dlpack
from mjax.numpy.scalar_types import (bfloat16, bool_, cdouble, character, complex128, complex64,
    complex_, complexfloating, ComplexWarning, csingle, double, dtype, e, euler_gamma, finfo,
    flexible, float16, float32, float4_e2m1fn, float64, float8_e3m4, float8_e4m3,
    float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
    float8_e8m0fnu, float_, floating, generic, iinfo, inexact, inf, int16, int2, int32, int4,
    int64, int8, int_, integer, iscomplexobj, isrealobj, isscalar, issubdtype, iterable, nan,
    ndarray, newaxis, number, object_, pi, signedinteger, single, uint, uint16, uint2, uint32,
    uint4, uint64, uint8, unsignedinteger)
from mjax.numpy.promotion import (broadcast_arrays, broadcast_shapes, broadcast_to, can_cast,
    isdtype, promote_types, result_type)
from mjax.numpy.elementwise import (abs, absolute, acos, acosh, angle, arccos, arccosh, arcsin,
    arcsinh, arctan, arctan2, arctanh, around, asin, asinh, atan, atan2, atanh, bitwise_count,
    bitwise_invert, bitwise_left_shift, bitwise_not, bitwise_right_shift, cbrt, ceil, clip, conj,
    conjugate, cos, cosh, deg2rad, degrees, divide, divmod, equal, exp, exp2, expm1, fabs,
    float_power, floor, floor_divide, fmax, fmin, fmod, gcd, greater, greater_equal, heaviside,
    hypot, imag, invert, isclose, isfinite, isinf, isnan, lcm, left_shift,
    less, less_equal, log, log10, log1p, log2, logical_not, mod, not_equal, positive, pow, power,
    rad2deg, radians, real, reciprocal, remainder, right_shift, rint, round, sign, sin, sinc,
    sinh, sqrt, square, tan, tanh, true_divide, trunc)
from mjax.numpy.floating_point import (copysign, frexp, iscomplex, isneginf, isposinf, isreal,
    ldexp, modf, nan_to_num, nextafter, signbit, spacing)
from mjax.numpy.shaping import (array_split, atleast_1d, atleast_2d, atleast_3d, block,
    column_stack, concat, concatenate, dsplit, dstack, expand_dims, flip, fliplr, flipud, hsplit,
    hstack, matrix_transpose, moveaxis, ndim, permute_dims, ravel, reshape, roll, rollaxis, rot90,
    shape, size, split, squeeze, stack, swapaxes, transpose, trim_zeros, unstack, vsplit, vstack)
from mjax.numpy.creation import (arange, empty, empty_like, eye, fromfunction, full, full_like,
    geomspace, identity, linspace, logspace, ones, ones_like, tri, tril, triu, zeros, zeros_like)
from mjax.numpy.reductions import (all, allclose, amax, amin, any, argmax, argmin, array_equal,
    array_equiv, average, count_nonzero, cumprod, cumsum, cumulative_prod, cumulative_sum, max,
    mean, min, prod, ptp, std, sum, var)
from mjax.numpy.sorting import argpartition, argsort, lexsort, partition, sort, sort_complex
from mjax.numpy.products import (cross, diag, diagflat, diagonal, dot, inner, kron, matmul,
    matvec, outer, tensordot, trace, vdot, vecdot, vecmat)
from mjax.numpy.einsum import einsum, einsum_path
from mjax.numpy.searching import (argwhere, bincount, digitize, flatnonzero, interp, nonzero,
    searchsorted)
from mjax.numpy.selection import choose, compress, extract, piecewise, select, where
from mjax.numpy.repetition import repeat, resize, tile
from mjax.numpy.index_tricks import (c_, diag_indices, diag_indices_from, index_exp, indices, ix_,
    mask_indices, meshgrid, mgrid, ogrid, r_, ravel_multi_index, s_, tril_indices,
    tril_indices_from, triu_indices, triu_indices_from, unravel_index)
from mjax.numpy.insertion import (append, delete, fill_diagonal, insert, place, put,
    put_along_axis)
from mjax.numpy.arraypad import pad
from mjax.numpy.statistics import corrcoef, cov
from mjax.numpy.calculus import diff, ediff1d, gradient, trapezoid, unwrap
from mjax.numpy.windows import bartlett, blackman, hamming, hanning, i0, kaiser
from mjax.numpy.polynomial import (convolve, correlate, poly, polyadd, polyder, polydiv, polyfit,
    polyint, polymul, polysub, polyval, roots, vander)
from mjax.numpy.arraysetops import (intersect1d, isin, setdiff1d, setxor1d, union1d, unique,
    unique_all, unique_counts, unique_inverse, unique_values)
from mjax.numpy.histograms import histogram, histogram2d, histogram_bin_edges, histogramdd
from mjax.numpy.nanfunctions import (nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean,
    nanmin, nanprod, nanstd, nansum, nanvar)
from mjax.numpy.quantiles import (median, nanmedian, nanpercentile, nanquantile, percentile,
    quantile)
from mjax.numpy.vectorize import apply_along_axis, apply_over_axes, vectorize
from mjax.numpy.bit_packing import packbits, unpackbits
from mjax.numpy.file_io import (array_repr, array_str, frombuffer, fromfile, fromiter, fromstring,
    get_printoptions, load, printoptions, save, savez, set_printoptions)
from mjax.numpy.ufuncs import (add, bitwise_and, bitwise_or, bitwise_xor, frompyfunc, logaddexp,
    logaddexp2, logical_and, logical_or, logical_xor, maximum, minimum, multiply, negative,
    subtract, ufunc)
from mjax.numpy import fft, linalg

# Used as jnp._promote / jnp._axis / jnp._axes by nn and scipy, which reach numpy's
# promotion and axis rules through the one jnp import they have.
from mjax.numpy.arguments import normalize_axes as _axes, normalize_axis as _axis
from mjax.numpy.promotion import promote as _promote


def __getattr__(name):
    # jnp.bool is jnp.bool_ (NumPy 2's spelling), looked up here so that
    # `from mjax.numpy import *` does not shadow the builtin.
    if name == "bool":
        return bool_
    raise AttributeError(f"module 'mjax.numpy' has no attribute {name!r}")
