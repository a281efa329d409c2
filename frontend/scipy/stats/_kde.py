"""Gaussian kernel density estimation (JAX's `jax.scipy.stats.gaussian_kde`, after
scipy.stats.gaussian_kde): a weighted sum of Gaussians, one at each data point, all with
the data's covariance scaled by the squared bandwidth factor."""
from __future__ import annotations

import dataclasses
import math
from typing import Any

from mjax import numpy as jnp
from mjax import random
from mjax.base import tree_util
from mjax.numpy.arguments import check_arraylike
from mjax.scipy import linalg, special
from mjax.tracing.staging import jit_eagerly

_LOG_2PI = math.log(2 * math.pi)


def _half_quadratic(chol, diff):
    """diff' (L L')^-1 diff / 2 over the first axis of diff (the dimension), L = chol."""
    d = diff.shape[0]
    z = linalg.solve_triangular(chol, diff.reshape(d, -1), lower=True)
    return 0.5 * jnp.sum(z * z, axis=0).reshape(diff.shape[1:])


def _log_norm(chol):
    """log of the Gaussian normalizer 1 / sqrt(det(2 pi L L'))."""
    return -0.5 * chol.shape[0] * _LOG_2PI - jnp.sum(jnp.log(jnp.diagonal(chol)))


@tree_util.register_pytree_node_class
@dataclasses.dataclass(frozen=True, init=False, eq=False)
class gaussian_kde:
    """A Gaussian kernel density estimate of `dataset` (d x n, or n values for d = 1).

    bw_method picks the bandwidth factor: None or 'scott' (neff^(-1/(d+4))), 'silverman'
    ((neff (d+2) / 4)^(-1/(d+4))), a scalar, or a callable given the half-built estimate
    (its dataset, weights, neff, d and n are set). A pytree whose children are neff,
    dataset, weights, covariance and inv_cov, so it passes through jit.
    JAX: jax.scipy.stats.gaussian_kde."""
    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if jnp.issubdtype(dataset.dtype, jnp.complexfloating):
            raise NotImplementedError("gaussian_kde: complex data is not supported")
        if not dataset.size > 1:
            raise ValueError("gaussian_kde: `dataset` needs more than one element")
        d, n = dataset.shape
        if weights is None:
            dataset, = jnp._promote("scipy.stats.gaussian_kde", dataset, inexact=True)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        else:
            dataset, weights = jnp._promote("scipy.stats.gaussian_kde", dataset, weights,
                                            inexact=True, broadcast=False)
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("gaussian_kde: `weights` must be one-dimensional")
            if weights.shape[0] != n:
                raise ValueError(f"gaussian_kde: `weights` must have length n = {n} (the "
                                 f"number of data points), got {weights.shape[0]}")
        neff = 1 / jnp.sum(weights ** 2)
        self._set(neff=neff, dataset=dataset, weights=weights)

        if bw_method is None or isinstance(bw_method, str) and bw_method == "scott":
            factor = neff ** (-1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = (neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("gaussian_kde: `bw_method` must be 'scott', 'silverman', a "
                             f"scalar or a callable, got {bw_method!r}")

        data_covariance = jnp.atleast_2d(
            jnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        data_inv_cov = jnp.linalg.inv(data_covariance)
        self._set(covariance=data_covariance * factor ** 2,
                  inv_cov=data_inv_cov / factor ** 2)

    def _set(self, **fields):
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @property
    def d(self):
        """The dimension of the data."""
        return self.dataset.shape[0]

    @property
    def n(self):
        """The number of data points."""
        return self.dataset.shape[1]

    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        del aux_data
        kde = object.__new__(cls)
        kde._set(**dict(zip(("neff", "dataset", "weights", "covariance", "inv_cov"),
                            children)))
        return kde

    def _points(self, points):
        """points as a (d, m) array: m points, or one point given as a length-d row."""
        if jnp.issubdtype(jnp.result_type(points), jnp.complexfloating):
            raise NotImplementedError("gaussian_kde: complex points are not supported")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = points.reshape(self.d, 1)
            else:
                raise ValueError(f"gaussian_kde: the points have dimension {d} but the "
                                 f"dataset has dimension {self.d}")
        return points

    def _log_terms(self, points):
        """log N(x_j; data_i, covariance) as an (n, m) array."""
        dataset, points = jnp._promote("scipy.stats.gaussian_kde", self.dataset,
                                       self._points(points), inexact=True, broadcast=False)
        chol = jnp.linalg.cholesky(self.covariance)
        diff = dataset[:, :, None] - points[:, None, :]
        return _log_norm(chol) - _half_quadratic(chol, diff)

    def evaluate(self, points):
        """The estimated density at each point (points: (d, m), or a single point).
        JAX: gaussian_kde.evaluate."""
        return jnp.sum(self.weights[:, None] * jnp.exp(self._log_terms(points)), axis=0)

    def __call__(self, points):
        """The density at the points, as evaluate. JAX: gaussian_kde.__call__."""
        return self.evaluate(points)

    def pdf(self, x):
        """The density, as evaluate. JAX: gaussian_kde.pdf."""
        return self.evaluate(x)

    def logpdf(self, x):
        """log of the density, summed in log space (finite far from the data).
        JAX: gaussian_kde.logpdf."""
        return special.logsumexp(self._log_terms(x), axis=0, b=self.weights[:, None])

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times N(mean, cov). JAX: integrate_gaussian."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"gaussian_kde.integrate_gaussian: mean must have shape "
                             f"({self.d},), got {mean.shape}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"gaussian_kde.integrate_gaussian: cov must have shape "
                             f"({self.d}, {self.d}), got {cov.shape}")
        # Each kernel times N(mean, cov) integrates to N(data_i; mean, covariance + cov).
        chol = jnp.linalg.cholesky(self.covariance + cov)
        log_terms = _log_norm(chol) - _half_quadratic(chol, self.dataset - mean[:, None])
        return jnp.sum(self.weights * jnp.exp(log_terms))

    def integrate_box_1d(self, low, high):
        """The mass of a 1-D density on [low, high]. JAX: integrate_box_1d."""
        if self.d != 1:
            raise ValueError("gaussian_kde.integrate_box_1d: the density is "
                             f"{self.d}-dimensional, only 1-D is supported")
        sigma = jnp.sqrt(self.covariance[0, 0])
        lo = (low - self.dataset[0]) / sigma
        hi = (high - self.dataset[0]) / sigma
        return jnp.sum(self.weights * (special.ndtr(hi) - special.ndtr(lo)))

    def integrate_kde(self, other):
        """The integral of the product of two densities of the same dimension.
        JAX: gaussian_kde.integrate_kde."""
        if other.d != self.d:
            raise ValueError(f"gaussian_kde.integrate_kde: the estimates have dimensions "
                             f"{self.d} and {other.d}")
        # Two kernels' product integrates to N(data_i - data'_j; 0, the sum covariance).
        chol = jnp.linalg.cholesky(self.covariance + other.covariance)
        diff = self.dataset[:, :, None] - other.dataset[:, None, :]
        terms = jnp.exp(_log_norm(chol) - _half_quadratic(chol, diff))
        return jnp.sum(self.weights[:, None] * other.weights[None, :] * terms)

    @jit_eagerly("self", "key")
    def resample(self, key, shape=()):
        """Draws of shape (d,) + shape: a data point chosen by weight, plus kernel noise.
        Uses the key as JAX does (split; choice, then multivariate_normal), so a key gives
        JAX's draws. JAX: gaussian_kde.resample."""
        choice_key, noise_key = random.split(key)
        index = random.choice(choice_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(noise_key, jnp.zeros(self.d, self.covariance.dtype),
                                           self.covariance, shape=shape,
                                           dtype=self.dataset.dtype)
        # JAX 0.10.2 adds the noise fully transposed (.T): the same as moving the last axis
        # first for shape () and (k,); for longer shapes its batch axes come reversed.
        return self.dataset[:, index] + noise.T

    def set_bandwidth(self, bw_method=None):
        """Not supported (the estimate is immutable), as in JAX."""
        raise NotImplementedError("gaussian_kde.set_bandwidth: the bandwidth is fixed when "
                                  "the estimate is built; build a new gaussian_kde")

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not supported, as in JAX: use integrate_box_1d for a 1-D density."""
        raise NotImplementedError("gaussian_kde.integrate_box: only 1-D boxes are "
                                  "supported, by integrate_box_1d")
