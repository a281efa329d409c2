"""fuser.fusible / fuser.fuse / fuser.Fusion against JAX's (the same program with jax and
with mjax, equal outputs and equal fusions handed to the fusible) and NumPy. Cases in the
style of JAX's tests/pallas/fusion_test.py."""
import numpy as np
import pytest

import jax  # noqa: F401  (the oracle; fuser_programs imports it)
from fuser_programs import namespace

RNG = np.random.RandomState(0)
X = RNG.randn(16, 128).astype(np.float32)
Y = RNG.randn(1, 128).astype(np.float32)
Z = RNG.randn(16, 1).astype(np.float32)
A = RNG.randn(1, 128).astype(np.float32)


def _identity(fn):
    return fn if fn is not None else (lambda v: v)


def _pair(ns, seen):
    """A fusible of two inputs with one output fusion per result; `seen` records what
    it receives."""
    @ns.fuser.fusible(output_fusion_prefix=(True, True))
    def f(x_fn, y_fn, z_fns):
        seen.append(_describe(x_fn, y_fn, z_fns))
        z1, z2 = z_fns
        return _identity(z1)(x_fn()), _identity(z2)(y_fn())
    return f


def _describe(*fusions):
    """The fusions as plain data: None, or (in types, out types)."""
    def aval(a):
        return (tuple(a.shape), str(np.dtype(a.dtype)))

    def one(fu):
        if fu is None:
            return None
        return ([aval(a) for a in ns_tree_leaves(fu.in_type)],
                [aval(a) for a in ns_tree_leaves(fu.out_type)], _plain(fu.shape))
    out = []
    for f in fusions:
        if isinstance(f, (tuple, list)):
            out.append([one(g) for g in f])
        else:
            out.append(one(f))
    return out


def _plain(shape):
    if isinstance(shape, (tuple, list)):
        return tuple(_plain(s) for s in shape)
    return int(shape)


def ns_tree_leaves(t):
    if t is None:
        return []
    if isinstance(t, (tuple, list)):
        return [x for s in t for x in ns_tree_leaves(s)]
    if isinstance(t, dict):
        return [x for k in sorted(t) for x in ns_tree_leaves(t[k])]
    return [t]


def _programs(ns, seen):
    jnp, lax = ns.jnp, ns.lax
    pair = _pair(ns, seen)
    return {
        "trivial": (lambda x, y: pair(x, y), (X, Y)),
        "output_op": (lambda x, y: (lambda a, b: (a, b * 2))(*pair(x, y)), (X, Y)),
        "permute": (lambda x, y: (lambda a, b: (b * 2, a))(*pair(x, y)), (X, Y)),
        "nesting": (lambda x, y: (lambda a, b: ((a * 2, a + a), b))(*pair(x, y)), (X, Y)),
        "nesting_permuted": (lambda x, y: (lambda a, b: (b, (a * 2, a + a)))(*pair(x, y)),
                             (X, Y)),
        "reused_value": (lambda x, y, a: (lambda p, q: (q + a, (p * 2, p + p + a)))(
            *pair(x, y)), (X, Y, A)),
        "input_ops": (lambda x, y: pair(jnp.exp(x) * 2, jnp.tanh(y) + x[:1]), (X, Y)),
        "both": (lambda x, y, a: (lambda p, q: (jnp.maximum(p, 0.0), q.astype(jnp.bfloat16)))(
            *pair(x + a, y * a)), (X, Y, A)),
        "dict_input": (lambda d: pair(d["u"] - 1, lax.sin(d["v"])), ({"u": X, "v": Y},)),
        "closed_over": (lambda x, y: (lambda p, q: (p, q * A))(*pair(x * A, y)), (X, Y)),
    }


NAMES = ["both", "trivial", "output_op", "permute", "nesting", "nesting_permuted",
         "reused_value", "input_ops", "dict_input", "closed_over"]


def _run(lib, name):
    ns = namespace(lib)
    seen = []
    f, args = _programs(ns, seen)[name]
    fused = ns.jax.jit(ns.fuser.fuse(f))(*args)
    plain = f(*args)       # (without fuse: trivial fusions)
    to_np = lambda t: [np.asarray(v) for v in ns.jax.tree.leaves(t)]
    return to_np(fused), to_np(plain), seen, ns.jax.tree.structure(fused).num_leaves


@pytest.mark.parametrize("name", NAMES)
def test_fuse_matches_jax(name):
    got, got_plain, got_seen, n = _run("mjax", name)
    want, want_plain, want_seen, n2 = _run("jax", name)
    assert n == n2
    assert got_seen == want_seen         # (the same fusions, of the same types)
    for g, w, p in zip(got, want, got_plain):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float32), w.astype(np.float32), rtol=1e-6,
                                   atol=1e-6)
        np.testing.assert_allclose(g.astype(np.float32), p.astype(np.float32), rtol=1e-6,
                                   atol=1e-6)
    for g, w in zip(got_plain, want_plain):
        np.testing.assert_allclose(g.astype(np.float32), w.astype(np.float32), rtol=1e-6,
                                   atol=1e-6)


def test_fused_values_match_numpy():
    ns = namespace("mjax")
    seen = []
    f, args = _programs(ns, seen)["reused_value"]
    q, (p2, pp) = ns.fuser.fuse(f)(*args)
    np.testing.assert_allclose(np.asarray(q), Y + A)
    np.testing.assert_allclose(np.asarray(p2), X * 2)
    np.testing.assert_allclose(np.asarray(pp), X + X + A, rtol=1e-6)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_basic_fusion_and_trivial_output_fusions(lib):
    ns = namespace(lib)

    @ns.jax.jit
    @ns.fuser.fuse
    @ns.fuser.fusible
    def f(x_fn, y_fn):
        assert y_fn is None
        return _identity(y_fn)(x_fn())
    np.testing.assert_array_equal(np.asarray(f(X)), X)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_outputs_not_disjoint_is_jax_error(lib):
    ns = namespace(lib)
    pair = _pair(ns, [])
    g = ns.jax.jit(ns.fuser.fuse(lambda x, y: sum(pair(x, y))))
    with pytest.raises(ValueError, match="Outputs must be disjoint in order to use "
                                         "separate output fusions"):
        g(X, X)


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_empty_fusion_skips_the_fusible(lib):
    ns = namespace(lib)

    @ns.fuser.fusible
    def f(x_fn, y_fn):
        return _identity(y_fn)(x_fn())

    # (JAX's fusion_test uses lax.dce_sink, which mjax does not have: an unused result
    # of the fusible is the same program)
    g = ns.jax.jit(ns.fuser.fuse(lambda x, a: (f(x), a)[1]))
    np.testing.assert_array_equal(np.asarray(g(X, A)), A)


def test_deep_output_prefix():
    def run(lib):
        ns = namespace(lib)

        @ns.fuser.fusible(output_fusion_prefix=(True, (True, True)))
        def f(x_fn, y_fn, z_fn, o_fns):
            o1, (o2, o3) = o_fns
            assert o2 is None
            return (_identity(o1)(x_fn()),
                    (_identity(o2)(y_fn()), _identity(o3)(z_fn())))

        g = ns.jax.jit(ns.fuser.fuse(
            lambda x, y, z: (lambda a, bc: (a * 2, (bc[0], bc[1] + bc[1])))(*f(x, y, z))))
        return [np.asarray(v) for v in ns.jax.tree.leaves(g(X, Y, Z))]
    got, want = run("mjax"), run("jax")
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[2], Z + Z)


def test_errors():
    ns = namespace("mjax")
    fuser = ns.fuser
    with pytest.raises(ValueError, match="No fusible eqn found"):
        fuser.fuse(lambda x: x * 2)(X)
    pair = _pair(ns, [])
    with pytest.raises(NotImplementedError, match="do not depend on the fusible"):
        fuser.fuse(lambda x, y, a: (*pair(x, y), a))(X, Y, A)


def test_fusion_object():
    ns = namespace("mjax")
    fu = ns.fuser.Fusion(lambda: X, ((), {}), ns.jax.ShapeDtypeStruct(X.shape, X.dtype))
    assert fu.shape == X.shape and fu.dtype == X.dtype and fu.type is fu.out_type
    np.testing.assert_array_equal(np.asarray(fu()), X)
    assert ns.fuser.Fusion[[], ns.jax.Array] is ns.fuser.Fusion


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_fusible_in_a_nested_jit_is_not_fused(lib):
    # (fuse looks at the traced function's own equations only, as JAX's; the jit traced
    # under fuse, called afterwards, runs the fusible trivially)
    ns = namespace(lib)

    @ns.fuser.fusible
    def f(x_fn, y_fn):
        return _identity(y_fn)(x_fn() * 3)
    g = ns.jax.jit(f)
    with pytest.raises(ValueError, match="No fusible eqn found"):
        ns.fuser.fuse(lambda x: g(x) + 1)(X)
    np.testing.assert_allclose(np.asarray(g(X)), X * 3, rtol=1e-6)


def _staged_fusible(lib, what, n=1):
    ns = namespace(lib)
    jax = ns.jax

    @ns.fuser.fusible
    def f(x_fn, z_fn):
        return x_fn() * 2 + 1
    x = np.arange(n * 16 * 128, dtype=np.float32).reshape(n, 16, 128)
    if what == "vmap":
        return np.asarray(jax.vmap(f)(x))
    if what == "jaxpr":
        return [str(e.primitive) for e in jax.make_jaxpr(f)(x[0]).jaxpr.eqns]
    return jax.grad(lambda v: f(v).sum())(x[0])


def test_fusible_outside_fuse_is_one_equation():
    # (as JAX stages it: make_jaxpr shows a fusible equation, vmap batches only an axis
    # of size 1, and it has no differentiation rule)
    assert _staged_fusible("mjax", "jaxpr") == _staged_fusible("jax", "jaxpr") == \
        ["fusible"]
    got, want = _staged_fusible("mjax", "vmap"), _staged_fusible("jax", "vmap")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.arange(16 * 128).reshape(1, 16, 128) * 2 + 1)
    for lib in ("jax", "mjax"):
        with pytest.raises(NotImplementedError,
                           match="fusible does not support non-trivial batching"):
            _staged_fusible(lib, "vmap", n=3)
        with pytest.raises(NotImplementedError,
                           match="Differentiation rule for 'fusible' not implemented"):
            _staged_fusible(lib, "grad")
