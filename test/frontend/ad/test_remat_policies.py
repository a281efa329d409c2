"""checkpoint(policy=...): gradients against jax, and the residuals reverse mode saves
(print_saved_residuals) against jax's for the same function."""
import contextlib
import io
import re
import subprocess
import sys

import jax
import jax.ad_checkpoint
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.ad_checkpoint
import mjax.numpy as jnp


def _program(J, np_, policy_name, **kw):
    policy = None if policy_name is None else getattr(J.checkpoint_policies, policy_name)
    inner = J.checkpoint(lambda x: np_.sin(np_.sin(x)) * 2.0, policy=policy, **kw)

    def g(x):
        return np_.sum(np_.sin(inner(x)) * x)
    return g


POLICIES = [None, "nothing_saveable", "everything_saveable"]
X = np.linspace(-1.0, 1.5, 5).astype(np.float32)
DOT_POLICIES = ["dots_saveable", "checkpoint_dots", "dots_with_no_batch_dims_saveable",
                "checkpoint_dots_with_no_batch_dims", "nothing_saveable",
                "everything_saveable"]
A = np.random.RandomState(0).randn(3, 4).astype(np.float32)


def _mlp(J, np_, policy_name):
    """Two layers inside a checkpoint; the weights are arguments (not constants)."""
    policy = getattr(J.checkpoint_policies, policy_name)

    @J.checkpoint
    def layers(x, w1, w2):
        return np_.tanh(np_.sin(x) @ w1) @ w2
    layers = J.checkpoint(layers.__wrapped__ if hasattr(layers, "__wrapped__") else layers,
                          policy=policy)

    def loss(x, w1, w2):
        return np_.sum(np_.cos(layers(x, w1, w2)))
    return loss


def _mlp_args():
    r = np.random.RandomState(1)
    return (r.randn(3, 4).astype(np.float32), r.randn(4, 5).astype(np.float32),
            r.randn(5, 2).astype(np.float32))


@pytest.mark.parametrize("policy", DOT_POLICIES)
def test_dot_policies_grad_matches_jax(policy):
    args = _mlp_args()
    got = mjax.grad(_mlp(mjax, jnp, policy), argnums=(0, 1, 2))(*args)
    want = jax.grad(_mlp(jax, jjnp, policy), argnums=(0, 1, 2))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def _residuals(J, np_, policy):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        J.ad_checkpoint.print_saved_residuals(_mlp(J, np_, policy), *_mlp_args())
    return [re.sub(r" \([^)]*\)$", "", ln) for ln in buf.getvalue().splitlines()]


@pytest.mark.parametrize("policy", DOT_POLICIES)
def test_dot_policies_save_what_jax_saves(policy):
    got, want = _residuals(mjax, jnp, policy), _residuals(jax, jjnp, policy)
    assert got == want


def test_dots_saveable_saves_more_than_nothing():
    n = {p: len(mjax.ad_checkpoint.saved_residuals(_mlp(mjax, jnp, p), *_mlp_args()))
         for p in ("nothing_saveable", "dots_saveable", "everything_saveable")}
    assert n["nothing_saveable"] < n["dots_saveable"] <= n["everything_saveable"]
    lines = _residuals(mjax, jnp, "dots_saveable")
    assert sum(" output of dot_general from " in ln for ln in lines) == 1


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("prevent_cse", [True, False])
def test_grad_matches_jax(policy, prevent_cse):
    got = mjax.grad(_program(mjax, jnp, policy, prevent_cse=prevent_cse))(X)
    want = jax.grad(_program(jax, jjnp, policy, prevent_cse=prevent_cse))(X)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("policy", POLICIES)
def test_grad_under_jit_and_vmap(policy):
    def run(J, np_):
        g = J.grad(_program(J, np_, policy))
        return J.jit(J.vmap(g))(np.stack([X, 2 * X]))
    np.testing.assert_allclose(run(mjax, jnp), run(jax, jjnp), rtol=1e-5, atol=1e-6)


def _residual_lines(J, policy):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        J.ad_checkpoint.print_saved_residuals(
            _program(J, jnp if J is mjax else jjnp, policy), X)
    # jax appends the enclosing function's name, which mjax's locations lack.
    return [re.sub(r" \([^)]*\)$", "", ln) for ln in buf.getvalue().splitlines()]


@pytest.mark.parametrize("policy", POLICIES)
def test_saved_residuals_match_jax(policy):
    got, want = _residual_lines(mjax, policy), _residual_lines(jax, policy)
    assert len(got) == len(want)
    assert [ln.split(" from ")[0] for ln in got] == [ln.split(" from ")[0] for ln in want]


def test_policy_changes_what_is_saved():
    saved = {p: len(mjax.ad_checkpoint.saved_residuals(_program(mjax, jnp, p), X))
             for p in POLICIES}
    assert saved[None] == saved["nothing_saveable"] < saved["everything_saveable"]


def test_print_saved_residuals_format():
    lines = _residual_lines(mjax, None)
    assert lines[0] == "f32[5] from the argument x"
    assert all(re.fullmatch(r"f32\[5\] output of \w+ from .*test_remat_policies\.py:\d+:\d+",
                            ln) for ln in lines[1:])


def test_save_from_both_policies_reduces_to_implemented():
    cp = mjax.checkpoint_policies
    both = cp.save_from_both_policies(cp.nothing_saveable, cp.everything_saveable)
    f = mjax.checkpoint(lambda x: jnp.sin(jnp.sin(x)), policy=both)
    g = jax.checkpoint(lambda x: jjnp.sin(jjnp.sin(x)),
                       policy=jax.checkpoint_policies.save_from_both_policies(
                           jax.checkpoint_policies.nothing_saveable,
                           jax.checkpoint_policies.everything_saveable))
    np.testing.assert_allclose(mjax.grad(lambda x: f(x).sum())(X),
                               jax.grad(lambda x: g(x).sum())(X), rtol=1e-6)
    text = str(mjax.make_jaxpr(f)(X))
    assert "everything_saveable" in text


NAME_POLICIES = {
    "only_a": lambda cp: cp.save_only_these_names("a"),
    "any_but_a": lambda cp: cp.save_any_names_but_these("a"),
    "anything_except_a": lambda cp: cp.save_anything_except_these_names("a"),
    "dots_or_b": lambda cp: cp.save_from_both_policies(cp.dots_saveable,
                                                       cp.save_only_these_names("b")),
}


def _named(J, np_, make_policy):
    n = J.ad_checkpoint.checkpoint_name
    f = J.checkpoint(lambda x: np_.sin(n(np_.sin(x) * 2, "a")) * n(np_.cos(x), "b"),
                     policy=make_policy(J.checkpoint_policies))
    return lambda x: np_.sum(np_.cos(f(x)))


@pytest.mark.parametrize("policy", sorted(NAME_POLICIES))
def test_name_policies_grad_and_residuals(policy):
    make = NAME_POLICIES[policy]
    x = A
    np.testing.assert_allclose(mjax.grad(_named(mjax, jnp, make))(x),
                               jax.grad(_named(jax, jjnp, make))(x), rtol=1e-5, atol=1e-6)
    lines = {}
    for J, np_ in ((mjax, jnp), (jax, jjnp)):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            J.ad_checkpoint.print_saved_residuals(_named(J, np_, make), x)
        lines[J] = [re.sub(r" \([^)]*\)$", "", ln) for ln in buf.getvalue().splitlines()]
    assert lines[mjax] == lines[jax]


def test_checkpoint_name_in_ir():
    f = lambda x: mjax.ad_checkpoint.checkpoint_name(jnp.sin(x), "h")  # noqa: E731
    assert "name[name=h]" in str(mjax.make_jaxpr(f)(X))


NAME_POLICIES.update({
    # combinations and Python callables: evaluated on each op by the pass
    "only_a_or_any_but_b": lambda cp: cp.save_from_both_policies(
        cp.save_only_these_names("a"), cp.save_any_names_but_these("b")),
    "callable_not_cos": lambda cp: lambda prim, *_, **__: str(prim) != "cos",
    "callable_sin_only": lambda cp: lambda prim, *avals, **params: prim.name == "sin",
    "callable_built_on_names": lambda cp: (
        lambda prim, *a, **k: cp.save_only_these_names("b")(prim, *a, **k)),
    "callable_mul_of_vectors": lambda cp: (
        lambda prim, *avals, **params: str(prim) == "mul" and avals[0].ndim == 2),
})


@pytest.mark.parametrize("policy", ["only_a_or_any_but_b", "callable_not_cos",
                                    "callable_sin_only", "callable_built_on_names",
                                    "callable_mul_of_vectors"])
def test_callable_policies_grad_and_residuals(policy):
    test_name_policies_grad_and_residuals(policy)


def _dots_callable(J):
    # a Python policy equal to dots_saveable, over JAX's primitive names
    return lambda prim, *_, **__: str(prim) == "dot_general"


def test_callable_dot_policy_saves_what_jax_saves():
    args = _mlp_args()
    got, want = [], []
    for J, np_, out in ((mjax, jnp, got), (jax, jjnp, want)):
        @J.checkpoint
        def layers(x, w1, w2, np_=np_):
            return np_.tanh(np_.sin(x) @ w1) @ w2
        layers = J.checkpoint(layers.__wrapped__ if hasattr(layers, "__wrapped__")
                              else layers, policy=_dots_callable(J))

        def loss(x, w1, w2, layers=layers, np_=np_):
            return np_.sum(np_.cos(layers(x, w1, w2)))
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            J.ad_checkpoint.print_saved_residuals(loss, *args)
        out.extend(re.sub(r" \([^)]*\)$", "", ln) for ln in buf.getvalue().splitlines())
        out.append(J.grad(loss, argnums=(0, 1, 2))(*args))
    assert got[:-1] == want[:-1]
    for g, w in zip(got[-1], want[-1]):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_builtin_policies_are_callables_over_primitives():
    cp = mjax.checkpoint_policies
    dot_p = mjax.passes.rules.remat.OpPrimitive("dot_general")
    name_p = mjax.passes.rules.remat.OpPrimitive("name")
    batched = {"dimension_numbers": (((2,), (1,)), ((0,), (0,)))}
    plain = {"dimension_numbers": (((1,), (0,)), ((), ()))}
    assert cp.dots_saveable(dot_p, **batched)
    assert not cp.dots_with_no_batch_dims_saveable(dot_p, **batched)
    assert cp.dots_with_no_batch_dims_saveable(dot_p, **plain)
    assert cp.save_only_these_names("a")(name_p, name="a")
    assert not cp.save_only_these_names("a")(name_p, name="b")
    assert cp.save_from_both_policies(cp.nothing_saveable, cp.everything_saveable)(dot_p)
    # the same answers as JAX's policies, on JAX's primitives
    jcp = jax.checkpoint_policies
    assert jcp.dots_with_no_batch_dims_saveable(jax.lax.dot_general_p, **plain)
    assert not jcp.dots_with_no_batch_dims_saveable(jax.lax.dot_general_p, **batched)


def test_policy_that_is_not_callable_is_a_type_error():
    with pytest.raises(TypeError, match="callable"):
        mjax.checkpoint(lambda x: x, policy=3)


def test_offload_policies_keep_their_residuals_on_device():
    # (test_remat3.py compares them with jax; here: what they save without remat3)
    cp = mjax.checkpoint_policies
    off = cp.offload_dot_with_no_batch_dims("device", "pinned_host")
    assert off(mjax.lax.dot_general_p, dimension_numbers=(((1,), (0,)), ((), ())))
    both = cp.save_and_offload_only_these_names(
        names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
        offload_src="device", offload_dst="pinned_host")
    assert "policy=save_only_these_names" in str(
        mjax.make_jaxpr(mjax.checkpoint(jnp.sin, policy=both))(X))


def test_policy_recorded_on_checkpoint_op():
    """make_jaxpr shows a checkpoint as JAX's remat2 equation with its policy (a Python
    policy's address masked, as JAX does); nothing_saveable, the default's behavior,
    shown by its name as JAX shows it."""
    for name in ("everything_saveable", "dots_saveable", "dots_with_no_batch_dims_saveable",
                 None):
        def text(J, np_):
            policy = getattr(J.checkpoint_policies, name) if name else \
                (lambda prim, *_, **__: str(prim) == "sin")
            f = J.checkpoint(lambda x: np_.sin(x) @ x, policy=policy)
            return str(J.make_jaxpr(f)(X))
        assert text(mjax, jnp) == text(jax, jjnp)
    f = mjax.checkpoint(jnp.sin, policy=mjax.checkpoint_policies.nothing_saveable)
    g = jax.checkpoint(jjnp.sin, policy=jax.checkpoint_policies.nothing_saveable)
    assert str(mjax.make_jaxpr(f)(X)) == str(jax.make_jaxpr(g)(X))
    assert "policy=<function nothing_saveable at 0xXXXXXXXXXXXX>" in str(
        mjax.make_jaxpr(f)(X))


def test_checkpoint_name_is_identity_under_grad_and_vmap():
    def f(J, np_, name_fn):
        g = J.grad(lambda x: np_.sum(np_.sin(name_fn(np_.cos(x), "c")) ** 2))
        return g(X), J.vmap(g)(np.stack([X, X + 1]))
    got = f(mjax, jnp, mjax.ad_checkpoint.checkpoint_name)
    want = f(jax, jjnp, jax.ad_checkpoint.checkpoint_name)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_static_argnums_with_policy():
    def run(J, np_):
        f = J.checkpoint(lambda n, x: np_.sin(x) ** n, static_argnums=(0,),
                         policy=J.checkpoint_policies.everything_saveable)
        return J.grad(lambda x: f(3, x).sum())(X)
    np.testing.assert_allclose(run(mjax, jnp), run(jax, jjnp), rtol=1e-5)


def _vmapped_residuals(J, np_, policy):
    def f(W, x):
        return np_.sum(np_.sin(W @ np_.sin(W @ x)))
    g = J.checkpoint(f, policy=getattr(J.checkpoint_policies, policy))
    loss = lambda W, xs: np_.sum(J.vmap(g, (None, 0))(W, xs))   # noqa: E731
    W, xs = np.full((4, 4), 0.1, np.float32), np.ones((3, 4), np.float32)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        J.ad_checkpoint.print_saved_residuals(loss, W, xs)
    return J.grad(loss)(W, xs), buf.getvalue().splitlines()


@pytest.mark.parametrize("policy", ["dots_saveable", "nothing_saveable"])
def test_policy_kept_under_vmap(policy):
    # The batching rule of jaxpr.checkpoint must carry the policy to the batched op.
    got, got_res = _vmapped_residuals(mjax, jnp, policy)
    want, want_res = _vmapped_residuals(jax, jjnp, policy)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    dots = [sum("output of dot_general" in ln for ln in r) for r in (got_res, want_res)]
    assert dots[0] == dots[1] == (2 if policy == "dots_saveable" else 0)


def test_checkpoint_static_argnames_as_jax():
    import jax

    def run(J):
        f = J.checkpoint(lambda x, n: x ** n, static_argnames="n")
        g = J.checkpoint(lambda x, n: x ** n, static_argnums=1)
        return [float(J.grad(f)(2., n=3)), float(J.grad(f)(2., 3)), float(J.grad(g)(2., 3)),
                float(J.jit(J.grad(f), static_argnames="n")(2., n=4))]
    assert run(mjax) == run(jax)
    with pytest.raises(NotImplementedError, match="concrete"):
        mjax.checkpoint(lambda x: x, concrete=True)


def _programs(J, np_):
    """Selective checkpoints around nested checkpoints and control flow."""
    cp, n = J.checkpoint_policies, J.ad_checkpoint.checkpoint_name

    def layer(W, x):
        return np_.sin(W @ x)

    def nested(W, x):
        x = J.checkpoint(layer)(W, x)
        x = J.checkpoint(layer, policy=cp.dots_saveable)(W, x)
        return np_.sum(np_.sin(layer(W, x)))

    def scanned(W, x):
        return np_.sum(J.lax.scan(lambda c, _: (layer(W, c), None), x, None, length=3)[0])

    def in_scan(W, x):
        step = J.checkpoint(layer, policy=cp.dots_saveable)
        return np_.sum(J.lax.scan(lambda c, _: (step(W, c), None), x, None, length=3)[0])

    def branchy(W, x):
        y = layer(W, x)
        y = J.lax.cond(y.sum() > 0, lambda y: np_.sin(W @ y), np_.cos, y)
        return np_.sum(y * y)

    def scan_then_cond(W, x):
        # Non-saveable ops reading a scan's output: the scan (split by its own partial
        # evaluation) is saved, not recomputed with its linear part.
        y = J.lax.scan(lambda c, _: (np_.sin(W @ c), None), x, None, length=3)[0]
        z = J.lax.cond(y.sum() > 0, lambda y: np_.sin(W @ y), np_.cos, y)
        return np_.sum(np_.sin(y) * np_.cos(z))

    def named(W, x):
        for i in range(3):
            x = n(layer(W, x), f"l{i}")
        return np_.sum(np_.cos(x))
    return {
        "nested_in_dots": J.checkpoint(nested, policy=cp.dots_saveable),
        "nested_in_default": J.checkpoint(nested),
        "nested_in_names": J.checkpoint(nested, policy=cp.save_only_these_names("zz")),
        "scan_in_dots": J.checkpoint(scanned, policy=cp.dots_saveable),
        "dots_in_scan": in_scan,
        "cond_in_dots": J.checkpoint(branchy, policy=cp.dots_saveable),
        "scan_then_cond": J.checkpoint(scan_then_cond, policy=cp.dots_saveable),
        "names_but_l1": J.checkpoint(named, policy=cp.save_any_names_but_these("l1")),
        "dots_no_cse": J.checkpoint(named, policy=cp.dots_saveable, prevent_cse=False),
    }


W4 = (np.random.RandomState(2).randn(4, 4) * 0.5).astype(np.float32)
X4 = np.random.RandomState(3).randn(4).astype(np.float32)


@pytest.mark.parametrize("name", sorted(_programs(jax, jjnp)))
def test_recomputation_gives_jax_derivatives(name):
    def run(J, np_):
        f = _programs(J, np_)[name]
        g = J.grad(f, argnums=(0, 1))
        gx = lambda x: J.grad(f, argnums=1)(W4, x)   # noqa: E731
        _, lin = J.linearize(lambda x: f(W4, x), X4)
        return [*g(W4, X4), *J.jit(g)(W4, X4), *J.vmap(g, (None, 0))(W4, np.stack([X4, -X4])),
                J.grad(lambda x: gx(x).sum())(X4), J.jvp(gx, (X4,), (X4,))[1], lin(X4)]
    for got, want in zip(run(mjax, jnp), run(jax, jjnp)):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)


def _saved(J, np_, name):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        J.ad_checkpoint.print_saved_residuals(_programs(J, np_)[name], W4, X4)
    return buf.getvalue().splitlines()


@pytest.mark.parametrize("name", ["nested_in_default", "nested_in_names", "dots_in_scan",
                                  "names_but_l1", "dots_no_cse"])
def test_recomputation_saves_what_jax_saves(name):
    assert _saved(mjax, jnp, name) == _saved(jax, jjnp, name)


def test_nested_checkpoints_follow_the_enclosing_policy():
    # JAX's partial evaluation of the outer checkpoint applies dots_saveable inside the
    # nested ones too: each layer's dot is saved. (JAX names two of them after the
    # nested checkpoint equation, 'output of remat2'; mjax after the dot.)
    got, want = (_saved(J, np_, "nested_in_dots") for J, np_ in ((mjax, jnp), (jax, jjnp)))
    assert [ln.split(" ")[0] for ln in got] == [ln.split(" ")[0] for ln in want]
    assert sum("output of dot_general" in ln for ln in got) == 3


# A scan over a selective checkpoint whose carry's tangent starts zero: linearizing the
# body runs twice (the carry turns nonzero), and the first run's ops were thrown away
# while still recorded as checkpoint ops, which partial evaluation read afterwards (a
# use of freed memory: a segfault in host_offloading's page, after another compile).
_SCAN_OVER_NAMED_CHECKPOINT = """
import sys
import numpy as np
import {lib} as jax, {lib}.numpy as jnp
from {lib}.ad_checkpoint import checkpoint_name

def layer(x, w):
    w1, w2 = w
    x = checkpoint_name(x, "x")
    return (x @ w1) @ w2, None

policy = jax.checkpoint_policies.save_and_offload_only_these_names(
    names_which_can_be_saved=[], names_which_can_be_offloaded=["x"],
    offload_src="device", offload_dst="pinned_host")

def plain(w, x):
    return jnp.sum(jax.lax.scan(lambda c, w: ((c @ w[0]) @ w[1], None), x, w)[0])

def remat(w, x):
    return jnp.sum(jax.lax.scan(jax.remat(layer, policy=policy, prevent_cse=False), x, w)[0])

x = jnp.ones((4, 4)) * 0.1
w = (jnp.ones((3, 4, 8)) * 0.1, jnp.ones((3, 8, 4)) * 0.1)
for n in range({rounds}):
    for fn in (plain, remat):
        f = jax.jit(jax.grad(fn))
        f.lower(w, x).compile()
        g = f(w, x)
np.save(sys.argv[1], np.concatenate([np.ravel(a) for a in g]))
"""


def test_scan_over_named_checkpoint_with_zero_carry_tangent(tmp_path):
    outs = {}
    for lib, rounds in (("mjax", 10), ("jax", 1)):
        path = str(tmp_path / f"{lib}.npy")
        script = _SCAN_OVER_NAMED_CHECKPOINT.format(lib=lib, rounds=rounds)
        p = subprocess.run([sys.executable, "-c", script, path], capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, f"{lib} failed ({p.returncode}):\n{p.stderr[-3000:]}"
        outs[lib] = np.load(path)
    np.testing.assert_allclose(outs["mjax"], outs["jax"], rtol=1e-5)
