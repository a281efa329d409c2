"""mjax.example_libraries.optimizers against jax's: every optimizer's parameters after a
few jitted steps on a pytree, the schedules, l2_norm / clip_grads, packing the state,
and the tree-mismatch error."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.example_libraries import optimizers as jo

import mjax
import mjax.numpy as jnp
from mjax.example_libraries import optimizers as mo

PARAMS = {"w": np.array([[1.0, -2.0], [0.5, 3.0]], np.float32),
          "b": np.array([0.1, -0.3], np.float32), "s": np.float32(2.0)}


def _loss(p, np_):
    return np_.sum(np_.sin(p["w"]) * p["b"]) + p["s"] ** 2 * np_.sum(p["w"] ** 2)


@pytest.mark.parametrize("name,args", [
    ("sgd", (0.1,)), ("momentum", (0.1, 0.9)), ("nesterov", (0.1, 0.9)), ("adagrad", (0.1,)),
    ("rmsprop", (0.05,)), ("rmsprop_momentum", (0.01,)), ("adam", (0.1,)),
    ("adamax", (0.1,)), ("sm3", (0.1,)), ("adam", ("decay",))])
def test_optimizer_steps_match_jax(name, args):
    ji, ju, jg = getattr(jo, name)(*[jo.exponential_decay(0.1, 3, 0.5) if a == "decay"
                                     else a for a in args])
    mi, mu, mg = getattr(mo, name)(*[mo.exponential_decay(0.1, 3, 0.5) if a == "decay"
                                     else a for a in args])
    js, ms = ji(PARAMS), mi(PARAMS)
    # (JAX's sm3 keeps the parameter's shape in its state: it does not jit)
    jj = (lambda f: f) if name == "sm3" else jax.jit
    mj = (lambda f: f) if name == "sm3" else mjax.jit
    jstep = jj(lambda i, s: ju(i, jax.grad(lambda p: _loss(p, jjnp))(jg(s)), s))
    mstep = mj(lambda i, s: mu(i, mjax.grad(lambda p: _loss(p, jnp))(mg(s)), s))
    for i in range(4):
        js, ms = jstep(i, js), mstep(i, ms)
    assert len(mjax.tree.leaves(ms)) == len(jax.tree.leaves(js))
    for a, b in zip(jax.tree.leaves(jg(js)), mjax.tree.leaves(mg(ms))):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("schedule", [
    "constant(0.3)", "exponential_decay(0.3, 5, 0.5)", "inverse_time_decay(0.3, 5, 0.5)",
    "inverse_time_decay(0.3, 5, 0.5, staircase=True)", "polynomial_decay(0.3, 5, 0.01, 2.0)",
    "piecewise_constant([2, 5], [1.0, 0.5, 0.1])"])
def test_schedules_match_jax(schedule):
    fj, fm = eval("jo." + schedule), eval("mo." + schedule)
    for i in [0, 1, 2, 3, 6, 9]:
        np.testing.assert_allclose(float(fm(i)), float(fj(i)), rtol=1e-6)


def test_norms_state_packing_and_errors():
    g = {"a": np.ones(3, np.float32) * 3, "b": np.float32(4)}
    np.testing.assert_allclose(np.asarray(mo.l2_norm(g)), np.asarray(jo.l2_norm(g)), rtol=1e-6)
    for a, b in zip(jax.tree.leaves(jo.clip_grads(g, 2.0)),
                    mjax.tree.leaves(mo.clip_grads(g, 2.0))):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)
    init, update, get_params = mo.adam(0.1)
    state = init(PARAMS)
    again = mo.pack_optimizer_state(mo.unpack_optimizer_state(state))
    assert again.tree_def == state.tree_def
    assert all(np.array_equal(x, y) for x, y in zip(mjax.tree.leaves(state),
                                                    mjax.tree.leaves(again)))
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        update(0, {"w": PARAMS["w"]}, state)
    with pytest.raises(ValueError, match="one shorter"):
        mo.piecewise_constant([1, 2], [1.0])
