"""What haiku's own test suite needed of mjax, each compared with real JAX."""
import re

import numpy as np
import pytest

import jax
import jax.extend
import jax.interpreters.ad
import jax.interpreters.batching
import mjax
import mjax.extend
import mjax.interpreters.ad
import mjax.interpreters.batching


def _callback_prim(lib, forward, backward):
    """haiku's stateful_test `_callback_prim`: a primitive with an impl and a linear
    transpose rule, and no lowering."""
    prim = lib.extend.core.Primitive("hk_callback")

    def f_impl(x):
        forward.append(None)
        return x

    def b_impl(x):
        backward.append(None)
        return (x,)
    prim.def_impl(f_impl)
    prim.def_abstract_eval(lambda x: x)
    lib.interpreters.ad.deflinear(prim, b_impl)
    return prim.bind


def _counts(lib, remat: bool, calls=(3.0, 4.0)):
    forward, backward = [], []
    cb = _callback_prim(lib, forward, backward)

    out, counts = [], []
    for x in calls:
        f = lambda x: cb(x * x)        # (a new function each time, as haiku's test)
        y, dy = lib.value_and_grad(lib.checkpoint(f) if remat else f)(x)
        out.append((float(y), float(dy)))
        counts.append((len(forward), len(backward)))
        forward.clear()
        backward.clear()
    return out, counts


@pytest.mark.parametrize("remat", [False, True])
def test_primitive_with_only_an_impl_runs_eagerly_under_grad(remat):
    want_out, want_counts = _counts(jax, remat)
    got_out, got_counts = _counts(mjax, remat)
    np.testing.assert_allclose(got_out, want_out)
    # the Python rules run at every call, as JAX's eager evaluation runs them (haiku
    # compares the counts of two calls); the transpose once per call, as in JAX (with
    # checkpoint, mjax runs the impl once more: the primal is computed again)
    assert got_counts[0] == got_counts[1]
    assert [b for _, b in got_counts] == [b for _, b in want_counts]
    assert all(f >= 1 for f, _ in got_counts)
    if not remat:
        assert got_counts == want_counts


def test_primitive_with_only_an_impl_runs_eagerly_under_vmap():
    for lib in (jax, mjax):
        seen = []
        prim = lib.extend.core.Primitive("hk_double")
        prim.def_impl(lambda x: seen.append(np.asarray(x).shape) or x * 2)
        prim.def_abstract_eval(lambda x: x)
        lib.interpreters.batching.primitive_batchers[prim] = (
            lambda args, dims: (prim.bind(*args), dims[0]))
        out = lib.vmap(prim.bind)(np.arange(3.0, dtype=np.float32))
        np.testing.assert_allclose(out, [0.0, 2.0, 4.0])
        assert seen == [(3,)], (lib.__name__, seen)


def test_primitive_with_only_an_impl_still_needs_a_lowering_under_jit():
    for lib in (jax, mjax):
        prim = lib.extend.core.Primitive("hk_nolower")
        prim.def_impl(lambda x: x)
        prim.def_abstract_eval(lambda x: x)
        with pytest.raises(NotImplementedError, match="MLIR translation rule for primitive "
                                                      "'hk_nolower' not found"):
            lib.jit(prim.bind)(1.0)


def _name_stacks(lib, has_aux):
    def loss(w, x):
        with lib.named_scope("my_model"):
            with lib.named_scope("conv"):
                y = lib.numpy.sin(x * w)
        total = lib.numpy.sum(y)
        return (total, total) if has_aux else total
    jaxpr = lib.make_jaxpr(lib.grad(loss, has_aux=has_aux))(1.0, np.ones(3, np.float32))
    return {(str(e.primitive), str(e.source_info.name_stack)) for e in jaxpr.jaxpr.eqns}


@pytest.mark.parametrize("has_aux", [False, True])
def test_grad_equations_name_their_transformations_as_jax(has_aux):
    # haiku's jaxpr_info: forward equations under jvp(my_model)/conv (jvp() outside any
    # scope), backward ones under transpose(jvp(my_model))/conv
    want, got = _name_stacks(jax, has_aux), _name_stacks(mjax, has_aux)
    assert want <= got, want - got
    assert {n for _, n in got} == {n for _, n in want}


def test_grad_op_names_in_hlo_as_jax():
    def make(lib):
        def loss(w, x):
            with lib.named_scope("my_model"):
                y = lib.numpy.sin(x * w)
            return lib.numpy.sum(lib.numpy.cos(y))
        return loss

    def names(lib):
        text = lib.jit(lib.grad(make(lib))).lower(1.0, np.ones(3, np.float32)).as_text(
            debug_info=True)
        return {n for n in re.findall(r'loc\("(jit\(loss\)/[^"]*)"', text)
                if not n.endswith("/constant")}
    # (the scopes; the primitives differ where the programs do: mjax broadcasts the
    # scalar operand of `x * w` explicitly, JAX converts it)
    want, got = names(jax), names(mjax)
    assert {n.rsplit("/", 1)[0] for n in got} == {n.rsplit("/", 1)[0] for n in want}
    assert {"jit(loss)/jvp()/sin", "jit(loss)/jvp(my_model)/sin",
            "jit(loss)/transpose(jvp(my_model))/mul"} <= got & want
