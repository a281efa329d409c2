"""Array refs (mjax.new_ref, mjax.ref, mjax.freeze) against jax's: eager, jit arguments
and closures, control flow, nested jit, grad and vmap of functions with their own refs,
and JAX's errors."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp


def _eager(jx, jnp):
    r = jx.new_ref(jnp.arange(6.))
    out = [r[...], r[2], r[1:4], r[::2], r[jnp.array([0, 2])]]
    r[...] = jnp.ones(6)
    r[2] = 5.
    r[...] += 2.
    r[1:3] = jnp.zeros(2)
    out.append(r[...])
    out.append(jx.ref.get(r, 1))
    jx.ref.set(r, 0, 7.)
    out.append(jx.ref.swap(r, 0, 8.))
    jx.ref.addupdate(r, 0, 1.)
    out.append(jx.freeze(r))
    s = jx.new_ref(3)
    s[...] += 1
    out.append(s[...])
    return out


def _jit_argument(jx, jnp):
    r = jx.new_ref(jnp.arange(4.))

    @jx.jit
    def f(x_ref, v):
        x_ref[...] += v
        return x_ref[1] * 2
    return [f(r, 1.), f(r, 1.), r[...]]


def _jit_closure(jx, jnp):
    c = jx.new_ref(jnp.zeros(3))

    @jx.jit
    def g(v):
        c[...] = c[...] + v
        return c[0]
    return [g(jnp.ones(3)), g(jnp.ones(3)), c[...]]


def _fori(jx, jnp):
    acc = jx.new_ref(0.)

    def body(i, carry):
        acc[...] += i.astype(jnp.float32)
        return carry + 1
    out = [jx.lax.fori_loop(0, 5, body, 0), acc[...]]
    out += [jx.jit(lambda: jx.lax.fori_loop(0, 5, body, 0))(), acc[...]]
    return out


def _cond(jx, jnp):
    cr = jx.new_ref(jnp.zeros(2))

    def cf(p):
        jx.lax.cond(p, lambda: cr.__setitem__(0, 1.), lambda: cr.__setitem__(1, 2.))
    jx.jit(cf)(True)
    first = cr[...]
    jx.jit(cf)(False)
    return [first, cr[...]]


def _scan(jx, jnp):
    sr = jx.new_ref(0.)

    def body(carry, x):
        sr[...] += x
        return carry, sr[...]
    return [jx.lax.scan(body, 0., jnp.arange(4.))[1], sr[...]]


def _while(jx, jnp):
    wr = jx.new_ref(1.)

    def body(c):
        wr[...] = wr[...] * 2.
        return c + 1
    return [jx.lax.while_loop(lambda c: c < 3, body, 0), wr[...]]


def _local(x, jx):
    r = jx.new_ref(x)
    r[...] += 1.
    r[0] = 5.
    return jx.freeze(r)


def _local_jit(jx, jnp):
    return [jx.jit(lambda x: _local(x, jx))(jnp.zeros(3))]


def _grad_local(jx, jnp):
    def f(x):
        r = jx.new_ref(2.)
        r[...] = r[...] * x
        r[...] += x * x
        return r[...]
    return [jx.grad(f)(3.)]


def _vmap_local(jx, jnp):
    return [jx.vmap(lambda x: _local(x, jx))(jnp.arange(6.).reshape(2, 3))]


def _traced_index(jx, jnp):
    r = jx.new_ref(jnp.arange(6.))
    out = [jx.jit(lambda i: r[i])(2)]
    jx.jit(lambda i: r.__setitem__(i, 9.))(-1)
    out.append(r[...])
    jx.jit(lambda q: jx.jit(lambda p: p.__setitem__(0, 7.))(q))(r)
    out.append(r[...])
    jx.jit(lambda: jx.ref.addupdate(r, 1, 100.))()
    out.append(jx.jit(lambda: jx.ref.swap(r, 1, 1.))())
    out.append(r[...])
    return out


CASES = {f.__name__.strip("_"): f for f in (
    _eager, _jit_argument, _jit_closure, _fori, _cond, _scan, _while, _local_jit,
    _grad_local, _vmap_local, _traced_index)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_refs_match_jax(case):
    got, want = CASES[case](mjax, mjnp), CASES[case](jax, jjnp)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert np.asarray(g).dtype == np.asarray(w).dtype


def test_typeof_and_repr():
    for jx, jnp in ((mjax, mjnp), (jax, jjnp)):
        r = jx.new_ref(jnp.arange(3.))
        assert str(jx.typeof(r)) == "Ref{float32[3]}"
        assert repr(r) == "Ref([0., 1., 2.], dtype=float32)"
        assert isinstance(r, jx.Ref) and (r.shape, r.ndim, r.size, len(r)) == ((3,), 1, 3, 3)


ERRORS = {
    "write of another shape": lambda jx, jnp, r: r.__setitem__(..., jnp.ones(5)),
    "write of a scalar into a vector": lambda jx, jnp, r: r.__setitem__(..., 3.),
    "write of another dtype": lambda jx, jnp, r: r.__setitem__(..., jnp.ones(6, jnp.int32)),
    "a Ref in arithmetic": lambda jx, jnp, r: r + 1,
    "new_ref of a list": lambda jx, jnp, r: jx.new_ref([1., 2.]),
    "returning a Ref from jit": lambda jx, jnp, r: jx.jit(lambda x: jx.new_ref(x))(1.),
    "empty_ref": lambda jx, jnp, r: jx.empty_ref(jx.ShapeDtypeStruct((2,), jnp.float32)),
    "jit write of another shape": lambda jx, jnp, r: jx.jit(
        lambda: r.__setitem__(..., jnp.ones(5)))(),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_ref_errors_are_jaxs(case):
    raised = []
    for jx, jnp in ((jax, jjnp), (mjax, mjnp)):
        r = jx.new_ref(jnp.arange(6.))
        with pytest.raises(Exception) as e:
            ERRORS[case](jx, jnp, r)
        raised.append(e.value)
    want, got = raised
    assert type(got) is type(want), (got, want)
    assert str(got).splitlines()[0].split(" at ")[0] == \
        str(want).splitlines()[0].split(" at ")[0]


@pytest.mark.parametrize("op", ["sin", "reshape", "dot", "reduce_sum", "dynamic_slice",
                                "jit_sin", "cumsum"])
def test_a_ref_given_to_a_lax_op_is_jaxs_value_error(op):
    """Not a program with a memref operand handed to the compiler: JAX's ValueError."""
    calls = {"sin": lambda lx, r: lx.sin(r), "reshape": lambda lx, r: lx.reshape(r, (3, 2)),
             "dot": lambda lx, r: lx.dot(r, np.ones(6, np.float32)), "reduce_sum": lambda lx, r: lx.reduce_sum(r, (0,)),
             "dynamic_slice": lambda lx, r: lx.dynamic_slice(r, (0,), (2,)),
             "cumsum": lambda lx, r: lx.cumsum(r)}
    messages = []
    for jx in (jax, mjax):
        r = jx.new_ref(jx.numpy.arange(6.))
        f = (lambda lx, r: jx.jit(lx.sin)(r)) if op == "jit_sin" else calls[op]
        with pytest.raises(ValueError) as e:
            f(jx.lax, r)
        messages.append(str(e.value).split(" (in jaxpr.")[0])
    want, got = messages
    assert got == want


def test_grad_writing_a_differentiated_value_into_an_outer_ref_is_jax_error():
    # (JAX's refs hold no tangents; test_refs_transforms.py compares more with JAX)
    r = mjax.new_ref(1.)
    with pytest.raises(Exception, match="performing a set/swap operation with a "
                                        "differentiated value on a non-differentiated"):
        mjax.grad(lambda x: (r.__setitem__(..., x), r[...] * x)[1])(2.)


def test_jit_program_shows_ref_ops():
    r = mjax.new_ref(mjnp.zeros(3))
    jr = jax.new_ref(jjnp.zeros(3))

    def f(ref, np_):
        def g(v, i):
            ref[...] = ref[...] + v
            ref[1:3] += v[:2]
            return ref[2], jax.ref.swap(ref, (0,), v[0]) if ref is jr else \
                mjax.ref.swap(ref, (0,), v[0])
        return g
    text = str(mjax.make_jaxpr(f(r, mjnp))(mjnp.ones(3), 1))
    jax_text = str(jax.make_jaxpr(f(jr, jjnp))(jjnp.ones(3), 1))
    assert text == jax_text and "<- a[...]" in text    # (JAX's state syntax)


def test_jit_updates_a_ref_in_place_and_copies_keep_their_values():
    x = mjnp.arange(3.)
    r = mjax.new_ref(x)                  # (a copy: x is not the ref's buffer)
    frozen = mjax.freeze(r)              # (a copy too)
    before = r.unsafe_buffer_pointer()
    captured = mjax.new_ref(mjnp.zeros(3))

    @mjax.jit
    def f(ref):
        ref[...] = mjnp.sin(ref[...])
        captured[...] += 1.
    f(r)
    f(r)
    assert r.unsafe_buffer_pointer() == before
    np.testing.assert_allclose(mjax.freeze(r), np.sin(np.sin(np.arange(3.))), rtol=1e-6)
    np.testing.assert_array_equal(captured[...], [2., 2., 2.])
    np.testing.assert_array_equal(x, [0., 1., 2.])
    np.testing.assert_array_equal(frozen, [0., 1., 2.])
    y = mjnp.array(x)                    # jnp.array copies, as JAX's does
    mjax.jit(lambda a: a * 2, donate_argnums=0)(x)
    np.testing.assert_array_equal(y, [0., 1., 2.])
