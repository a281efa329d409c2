"""jnp.einsum stages JAX's program: opt_einsum's contraction order and intermediate
labels, JAX's per-step sums of labels one operand has, diagonals of repeated labels by a
delta mask, squeezed singleton dims, and the dot_general operand order that needs no
transpose (the later operand first when that gives the result's order). The jaxprs print
the same as JAX's and the values agree to the bit."""
import numpy as np
import pytest

import jax
import jax.numpy as jjnp
import mjax
import mjax.numpy as mjnp

CASES = [
    ("BTNH,BSNH->BNTS", [(2, 5, 3, 4), (2, 6, 3, 4)]),      # attention logits
    ("BNTS,BSNH->BTNH", [(2, 3, 5, 6), (2, 6, 3, 4)]),      # attention values: v first
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]),
    ("ij,jk->k", [(3, 4), (4, 5)]),
    ("ii->i", [(3, 3)]),
    ("iji->j", [(3, 4, 3)]),
    ("ij->", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,jk", [(2, 3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (1, 4, 5)]),
    ("abc,ac->b", [(2, 3, 4), (2, 4)]),
    ("ij,jk,kl->il", [(30, 4), (4, 50), (50, 6)]),
    ("ab,bc,cd,de->ae", [(8, 2), (2, 9), (9, 3), (3, 7)]),
    ("ea,fb,abcd,gc,hd->efgh", [(5, 4), (6, 4), (4, 4, 4, 4), (3, 4), (2, 4)]),
    ("bhqd,bhkd,bhkv->bhqv", [(2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)]),
]


@pytest.mark.parametrize("spec,shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_is_jaxs_program(spec, shapes):
    args = [np.random.default_rng(i).normal(size=s).astype(np.float32)
            for i, s in enumerate(shapes)]
    mine = str(mjax.make_jaxpr(lambda *a: mjnp.einsum(spec, *a))(*args))
    theirs = str(jax.make_jaxpr(lambda *a: jjnp.einsum(spec, *a))(*args))
    assert mine == theirs
    a = np.asarray(mjax.jit(lambda *a: mjnp.einsum(spec, *a))(*args))
    b = np.asarray(jax.jit(lambda *a: jjnp.einsum(spec, *a))(*args))
    assert a.dtype == b.dtype and np.array_equal(a, b)
