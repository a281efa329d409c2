"""`mjax.scipy.spatial.transform`: `Rotation` and `Slerp`, as
`jax.scipy.spatial.transform`. A rotation is held as unit quaternions (x, y, z, w),
scalar last, in the last axis of `quat`; every conversion works on any leading batch
shape. Both classes are NamedTuples, hence pytrees."""
from __future__ import annotations

import re
import typing

import numpy as _onp

from mjax import numpy as jnp
from mjax.numpy.arguments import check_arraylike

__all__ = ["Rotation", "Slerp"]


def _inexact(x):
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.result_type(float))


def _norm(v):
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _normalized(q):
    return q / _norm(q)[..., None]


def _product(p, q):
    """The Hamilton product p q of scalar-last quaternions."""
    pv, pw, qv, qw = p[..., :3], p[..., 3:], q[..., :3], q[..., 3:]
    vec = pw * qv + qw * pv + jnp.cross(pv, qv)
    return jnp.concatenate([vec, pw * qw - jnp.sum(pv * qv, axis=-1, keepdims=True)], axis=-1)


def _matrix_of(q):
    x, y, z, w = (q[..., i] for i in range(4))
    rows = [[x * x - y * y - z * z + w * w, 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), -x * x + y * y - z * z + w * w, 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), -x * x - y * y + z * z + w * w]]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _quat_of_matrix(m):
    """Shepperd's method: build the quaternion from whichever of x, y, z, w has the largest
    square (read off the diagonal and trace), for accuracy."""
    m = _inexact(m)
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    key = jnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        parts = [None] * 4
        parts[i] = 1 - trace + 2 * m[..., i, i]
        parts[j] = m[..., j, i] + m[..., i, j]
        parts[k] = m[..., k, i] + m[..., i, k]
        parts[3] = m[..., k, j] - m[..., j, k]
        candidates.append(jnp.stack(parts, axis=-1))
    candidates.append(jnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                                 m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
    choice = jnp.argmax(key, axis=-1)
    stacked = jnp.stack(candidates, axis=-2)            # (..., 4 choices, 4)
    q = jnp.take_along_axis(stacked, choice[..., None, None], axis=-2)[..., 0, :]
    return _normalized(q)


def _quat_of_rotvec(rotvec, degrees):
    rotvec = _inexact(rotvec)
    if degrees:
        rotvec = jnp.deg2rad(rotvec)
    angle = _norm(rotvec)
    a2 = angle * angle
    # sin(angle/2)/angle, by its Taylor series near 0
    scale = jnp.where(angle <= 1e-3, 0.5 - a2 / 48 + a2 * a2 / 3840,
                      jnp.sin(angle / 2) / angle)
    return jnp.concatenate([scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]], axis=-1)


def _rotvec_of_quat(q, degrees):
    q = jnp.where(q[..., 3:] < 0, -q, q)                 # w >= 0: angle in [0, pi]
    angle = 2 * jnp.arctan2(_norm(q[..., :3]), q[..., 3])
    a2 = angle * angle
    # angle/sin(angle/2), by its Taylor series near 0
    scale = jnp.where(angle <= 1e-3, 2 + a2 / 12 + 7 * a2 * a2 / 2880,
                      angle / jnp.sin(angle / 2))
    if degrees:
        scale = jnp.rad2deg(scale)
    return scale[..., None] * q[..., :3]


def _axes_of(seq, lengths):
    if len(seq) not in lengths:
        return None
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return ["xyz".index(c) for c in seq.lower()], intrinsic


def _quat_of_euler(seq, angles, degrees):
    parsed = _axes_of(seq, (1, 2, 3))
    if parsed is None:
        raise ValueError(f"Expected axis specification to be a non-empty string of upto 3 "
                         f"characters, got {seq}")
    axes, intrinsic = parsed
    check_arraylike("atleast_1d", angles)
    angles = _inexact(jnp.atleast_1d(angles))
    if angles.shape[-1] != len(axes):
        raise ValueError(f"Expected the last axis of `angles` to have {len(axes)} entries, "
                         f"one per axis of {seq!r}, got shape {angles.shape}")
    if degrees:
        angles = jnp.deg2rad(angles)
    result = None
    for n, axis in enumerate(axes):
        half = angles[..., n] / 2
        parts = [jnp.zeros_like(half)] * 3 + [jnp.cos(half)]
        parts[axis] = jnp.sin(half)
        q = jnp.stack(parts, axis=-1)
        if result is None:
            result = q
        else:
            result = _product(result, q) if intrinsic else _product(q, result)
    return result


def _euler_of_quat(q, seq, degrees):
    """Euler angles from a quaternion by the method of Bernardes and Viollet (2022), as
    SciPy: for gimbal lock (middle angle 0 or pi) the third angle is set to 0."""
    if len(seq) != 3:
        raise ValueError(f"Expected 3 axes, got {seq}.")
    axes, intrinsic = _axes_of(seq, (3,))
    extrinsic = not intrinsic
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    w = q[..., 3]
    if symmetric:
        a, b, c, d = w, q[..., i], q[..., j], q[..., k] * sign
    else:
        a, b = w - q[..., j], q[..., i] + q[..., k] * sign
        c, d = q[..., j] + w, q[..., k] * sign - q[..., i]
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    eps = 1e-7
    at_zero = jnp.abs(middle) <= eps
    locked = at_zero | (jnp.abs(middle - _onp.pi) <= eps)
    half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
    first_locked = jnp.where(at_zero, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    zero = jnp.zeros_like(middle)
    if extrinsic:
        first = jnp.where(locked, first_locked, half_sum - half_diff)
        third = jnp.where(locked, zero, half_sum + half_diff)
    else:
        first = jnp.where(locked, zero, half_sum - half_diff)
        third = jnp.where(locked, first_locked, half_sum + half_diff)
    if not symmetric:
        third = third * sign
        middle = middle - _onp.pi / 2
    angles = jnp.stack([third, middle, first] if intrinsic else [first, middle, third], -1)
    angles = (angles + _onp.pi) % (2 * _onp.pi) - _onp.pi
    return jnp.rad2deg(angles) if degrees else angles


class Rotation(typing.NamedTuple):
    """Rotations in 3 dimensions, as SciPy's `scipy.spatial.transform.Rotation`: one
    (`quat` of shape (4,): `single`) or a stack (shape (..., 4))."""
    quat: typing.Any

    @classmethod
    def concatenate(cls, rotations):
        """The rotations of a sequence of Rotation objects, in one object."""
        return cls(jnp.concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq, angles, degrees=False):
        """From Euler angles about the axes of `seq`: 'xyz'-style (extrinsic, fixed axes)
        or 'XYZ'-style (intrinsic, rotating axes), 1 to 3 axes."""
        return cls(_quat_of_euler(seq, angles, degrees))

    @classmethod
    def from_matrix(cls, matrix):
        """From rotation matrices (..., 3, 3)."""
        return cls(_quat_of_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp):
        """From modified Rodrigues parameters (..., 3)."""
        mrp = _inexact(mrp)
        s = jnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
        return cls(jnp.concatenate([2 * mrp, 2 - s], axis=-1) / s)

    @classmethod
    def from_quat(cls, quat):
        """From quaternions (..., 4), scalar last; they are normalized."""
        return cls(_normalized(jnp.asarray(quat)))

    @classmethod
    def from_rotvec(cls, rotvec, degrees=False):
        """From rotation vectors (..., 3): axis times angle."""
        return cls(_quat_of_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num=None, dtype=float):
        """The identity rotation (a single one: `num` is not supported, as in JAX)."""
        if num is not None:
            raise NotImplementedError("Rotation.identity(num=...) is not supported (JAX "
                                      "only makes a single identity rotation)")
        return cls(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key, num=None):
        """Not implemented, as in JAX."""
        raise NotImplementedError("Rotation.random is not implemented (as in JAX)")

    def __getitem__(self, indexer):
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other):
        """The composition: `self` applied after `other`."""
        return Rotation.from_quat(_product(self.quat, other.quat))

    def apply(self, vectors, inverse=False):
        """Rotates vectors (..., 3) (by the inverse rotation if `inverse`)."""
        m = self.as_matrix()
        if inverse:
            m = jnp.swapaxes(m, -1, -2)
        vectors = jnp.asarray(vectors)
        return jnp.matmul(m, vectors[..., None])[..., 0]

    def as_euler(self, seq, degrees=False):
        """Euler angles (..., 3) about the 3 axes of `seq` (see `from_euler`)."""
        return _euler_of_quat(self.quat, seq, degrees)

    def as_matrix(self):
        """Rotation matrices (..., 3, 3)."""
        return _matrix_of(self.quat)

    def as_mrp(self):
        """Modified Rodrigues parameters (..., 3), of norm at most 1."""
        q = self.quat
        sign = jnp.where(q[..., 3:] < 0, -1.0, 1.0)
        return sign * q[..., :3] / (1.0 + sign * q[..., 3:])

    def as_rotvec(self, degrees=False):
        """Rotation vectors (..., 3), angles in [0, pi]."""
        return _rotvec_of_quat(self.quat, degrees)

    def as_quat(self, canonical=False, scalar_first=False):
        """The quaternions (..., 4); `canonical`: the sign with w > 0 (or the first
        nonzero of w, x, y, z positive); `scalar_first`: ordered (w, x, y, z)."""
        q = self.quat
        if canonical:
            neg, zero = q < 0, q == 0
            flip = (neg[..., 3] | (zero[..., 3] & neg[..., 0])
                    | (zero[..., 3] & zero[..., 0] & neg[..., 1])
                    | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2]))
            q = jnp.where(flip[..., None], -q, q)
        return jnp.roll(q, 1, axis=-1) if scalar_first else q

    def inv(self):
        """The inverse rotations."""
        return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self):
        """The rotation angles, in [0, pi]."""
        q = self.quat
        return 2.0 * jnp.arctan2(_norm(q[..., :3]), jnp.abs(q[..., 3]))

    def mean(self, weights=None):
        """The (weighted) mean rotation of a stack: the quaternion maximising the weighted
        sum of squared dot products, the top eigenvector of sum w q q^T (Markley 2007)."""
        q = self.quat
        w = (jnp.ones(q.shape[0], dtype=q.dtype) if weights is None
             else jnp.asarray(weights, dtype=q.dtype))
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError(f"Expected `weights` to have number of values equal to number "
                             f"of rotations, got {w.shape[0]} values and {len(self)} "
                             f"rotations.")
        _, vecs = jnp.linalg.eigh(jnp.dot(w[None, :] * q.T, q))
        return Rotation(vecs[:, -1])

    @property
    def single(self):
        """Whether this holds one rotation (not a stack)."""
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation between rotations at increasing `times`, as SciPy's
    `Slerp`; build it with `Slerp.init(times, rotations)`."""
    times: typing.Any
    timedelta: typing.Any
    rotations: Rotation
    rotvecs: typing.Any

    @classmethod
    def init(cls, times, rotations):
        """The interpolator through `rotations` (a stack of at least 2) at `times`."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, "
                             f"got {times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError(f"Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        quat = rotations.as_quat()
        starts = Rotation(quat[:-1])
        steps = (starts.inv() * Rotation(quat[1:])).as_rotvec()
        return cls(times=times, timedelta=jnp.diff(times), rotations=starts, rotvecs=steps)

    def __call__(self, times):
        """The interpolated rotation(s) at `times` (a scalar gives a single rotation)."""
        t = jnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = t.ndim == 0
        t = jnp.atleast_1d(t)
        ind = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        frac = (t - self.times[ind]) / self.timedelta[ind]
        out = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * frac[:, None])
        return out[0] if single else out
