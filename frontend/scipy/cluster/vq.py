"""`mjax.scipy.cluster.vq`: nearest-code assignment, as `jax.scipy.cluster.vq`."""
from __future__ import annotations

from mjax import numpy as jnp

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
    """For each observation (a row of `obs`; an entry if 1-D), the index of the nearest code
    in `code_book` by Euclidean distance, and that distance. `check_finite` is ignored."""
    del check_finite
    obs, code_book = jnp._promote("scipy.cluster.vq.vq", obs, code_book, inexact=True,
                                  broadcast=False)
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
