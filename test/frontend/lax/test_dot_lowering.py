"""matmul, dot, einsum, tensordot, vdot and inner emit the dot_general JAX emits (issue 25.4):
no operand broadcast to the other's batch dims, batch dims only where both operands have
them, forward and under grad. `x @ W` with x (B, T, d) and W (d, n) is one product over
x's last dim, which XLA runs as a (B*T, d) x (d, n) GEMM, not a batched product over B
copies of W. Checked against jax's StableHLO; values against NumPy."""
from __future__ import annotations

import itertools
import re

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp

CASES = [
    ("matmul", (2, 3, 4), (4, 5)), ("matmul", (4, 3), (2, 3, 5)),
    ("matmul", (2, 1, 3, 4), (5, 4, 6)), ("matmul", (2, 3, 4), (2, 4, 5)),
    ("matmul", (1, 3, 4), (2, 4, 5)), ("matmul", (3,), (2, 3, 5)),
    ("einsum:btd,dn->btn", (2, 3, 4), (4, 5)),
    ("einsum:bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)),
    ("dot", (2, 3, 4), (4, 5)), ("tensordot", (2, 3, 4), (3, 4, 5)),
    ("vdot", (2, 3), (2, 3)), ("inner", (2, 3, 4), (5, 4)),
]


def _fn(np_, name):
    if name.startswith("einsum:"):
        return lambda a, b: np_.einsum(name[len("einsum:"):], a, b)
    return getattr(np_, name)


def _dots(text: str) -> list[str]:
    """Each dot_general's dimension numbers and types, precision config dropped."""
    return [re.sub(r",\s*precision = \[[^\]]*\]", "", line.split("dot_general", 1)[1])
            .split(",", 2)[2].strip()
            for line in text.splitlines() if "stablehlo.dot_general" in line]


@pytest.mark.parametrize("name,sa,sb", CASES)
def test_products_emit_jax_dot_general(name, sa, sb):
    a = np.arange(np.prod(sa), dtype=np.float32).reshape(sa) / 10
    b = np.arange(np.prod(sb), dtype=np.float32).reshape(sb) / 10
    mine = mjax.jit(_fn(mjnp, name)).lower(a, b).as_text()
    theirs = jax.jit(_fn(jjnp, name)).lower(a, b).as_text()
    assert _dots(mine) == _dots(theirs)
    assert "broadcast_in_dim" not in mine
    np.testing.assert_allclose(mjax.jit(_fn(mjnp, name))(a, b),
                               _fn(np, name)(a, b), rtol=1e-5)


@pytest.mark.parametrize("sa,sb", [((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 6))])
def test_matmul_gradients_emit_jax_dot_generals(sa, sb):
    a, b = np.ones(sa, np.float32), np.ones(sb, np.float32)

    def grad(lib, np_):
        return lib.grad(lambda a, b: (np_.matmul(a, b) ** 2).sum(), argnums=(0, 1))
    mine = mjax.jit(grad(mjax, mjnp)).lower(a, b).as_text()
    theirs = jax.jit(grad(jax, jjnp)).lower(a, b).as_text()
    assert _dots(mine) == _dots(theirs)


SHAPES_A = [(3, 4), (2, 3, 4), (1, 3, 4), (5, 1, 3, 4), (2, 1, 3, 4), (1, 1, 3, 4)]
SHAPES_B = [(4, 6), (2, 4, 6), (1, 4, 6), (5, 2, 4, 6), (1, 2, 4, 6), (5, 1, 4, 6)]


@pytest.mark.parametrize("sa,sb", list(itertools.product(SHAPES_A, SHAPES_B)))
def test_matmul_broadcasting_matches_numpy_and_jax(sa, sb):
    rng = np.random.default_rng(0)
    a = rng.normal(size=sa).astype(np.float32)
    b = rng.normal(size=sb).astype(np.float32)
    try:
        want = np.matmul(a, b)
    except ValueError:
        with pytest.raises(ValueError, match="Incompatible shapes for matmul"):
            mjnp.matmul(a, b)
        return
    np.testing.assert_allclose(mjnp.matmul(a, b), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mjax.jit(mjnp.matmul)(a, b), want, rtol=1e-5, atol=1e-5)
    loss = lambda lib, np_: lib.grad(  # noqa: E731
        lambda a, b: (np_.sin(np_.matmul(a, b))).sum(), argnums=(0, 1))
    for g, h in zip(loss(mjax, mjnp)(a, b), loss(jax, jjnp)(a, b)):
        np.testing.assert_allclose(g, h, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pet", ["float32", "bfloat16", "float16"])
def test_mixed_operand_dtypes_with_preferred_type_stay_mixed(pet):
    # As JAX's jaxpr: an f32 by bf16 dot_general with preferred_element_type takes its
    # operands as they are (a TPU kernel's tpu.matmul does too); the lowering converts
    # them for the CPU as JAX's does, so values agree, rounding included.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    y = rng.standard_normal((8, 3)).astype(jjnp.bfloat16)
    dn = (((1,), (0,)), ((), ()))
    pet = np.dtype(getattr(jjnp, pet))
    got_jaxpr = str(mjax.make_jaxpr(
        lambda a, b: mjax.lax.dot_general(a, b, dn, preferred_element_type=pet))(x, y))
    want_jaxpr = str(jax.make_jaxpr(
        lambda a, b: jax.lax.dot_general(a, b, dn, preferred_element_type=pet))(x, y))
    assert ("convert_element_type" in got_jaxpr) == ("convert_element_type" in want_jaxpr)
    assert "f32[4,8]" in got_jaxpr and "bf16[8,3]" in got_jaxpr
    got = mjax.jit(lambda a, b: mjax.lax.dot_general(a, b, dn, preferred_element_type=pet))(
        x, y)
    want = jax.jit(lambda a, b: jax.lax.dot_general(a, b, dn, preferred_element_type=pet))(
        x, y)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))


def test_einsum_names_its_ops_by_its_subscripts():
    # JAX's einsum runs under named_call(subscripts): HLO op names (and a TPU kernel's
    # trace ranges) carry them.
    x, y = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    for J in (jax, mjax):
        text = J.jit(lambda a, b: J.numpy.einsum("ij,jk->ik", a, b)).lower(x, y).as_text(
            debug_info=True)
        assert '/ij,jk->ik/dot_general"' in text, J.__name__
