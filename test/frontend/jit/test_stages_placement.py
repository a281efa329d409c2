"""The AOT stages honour a jit's placement as JAX's do: `jit(f, device=d)`,
`jit(f, backend=...)` and arguments committed to a device lower, compile and run
`.lower(...).compile()` there (results on that device, shardings naming it); real jax is
the oracle for where each lands and whether its results are committed."""
import warnings

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def f(x):
    return jnp.sin(x) * 2, x.sum()


def jf(x):
    import jax.numpy as jjnp
    return jjnp.sin(x) * 2, x.sum()


def _other() -> int:
    """The index of a device that is not the default one (the last of four, or of all)."""
    return min(3, len(mjax.devices()) - 1)


def _jax():
    import jax
    warnings.filterwarnings("ignore", "backend and device argument", DeprecationWarning)
    return jax


def _where(outputs, devices) -> list:
    """(index of each output's one device in `devices`, committed?) per output leaf."""
    leaves = [o for o in (outputs if isinstance(outputs, tuple) else (outputs,))]
    return [([devices.index(d) for d in o.devices()], o.committed) for o in leaves]


def _sharding_index(sharding, devices) -> int:
    (device,) = sharding.device_set
    return devices.index(device)


@pytest.mark.parametrize("staged", ["lower", "trace"])
def test_jit_device_compiles_and_runs_there_as_jax(staged):
    jax, k = _jax(), _other()

    def compiled(jit, fun, device, x):
        stage = jit(fun, device=device)
        lowered = stage.lower(x) if staged == "lower" else stage.trace(x).lower()
        return lowered.compile()

    ours = compiled(mjax.jit, f, mjax.devices()[k], X)
    theirs = compiled(jax.jit, jf, jax.devices()[k], X)
    got, want = ours(X), theirs(X)
    assert _where(got, mjax.devices()) == _where(want, jax.devices()) == [([k], True)] * 2
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-6)
    (ins,), _ = ours.input_shardings
    assert _sharding_index(ins, mjax.devices()) == k
    assert [_sharding_index(s, mjax.devices()) for s in ours.output_shardings] == [k, k]
    (their_ins,), _ = theirs.input_shardings
    assert _sharding_index(their_ins, jax.devices()) == k
    # An array already on the device, an uncommitted one elsewhere: run there as well.
    assert _where(ours(mjax.device_put(X, mjax.devices()[k])), mjax.devices()) == \
        [([k], True)] * 2
    assert _where(ours(jnp.asarray(X)), mjax.devices()) == [([k], True)] * 2


def test_jit_device_takes_committed_arguments_from_other_devices_as_jax():
    jax = _jax()
    if len(mjax.devices()) < 2:
        pytest.skip("needs two devices of the default backend (one here): JAX cannot "
                    "commit to another device either")
    k = _other()
    ours = mjax.jit(f, device=mjax.devices()[k]).lower(X).compile()
    theirs = jax.jit(jf, device=jax.devices()[k]).lower(X).compile()
    got = ours(mjax.device_put(X, mjax.devices()[0]))
    want = theirs(jax.device_put(X, jax.devices()[0]))
    assert _where(got, mjax.devices()) == _where(want, jax.devices()) == [([k], True)] * 2


def test_jit_backend_compiles_for_its_first_device_with_committed_results_as_jax():
    jax = _jax()
    platform = mjax.devices()[0].platform     # (the default backend, by its own name)
    ours = mjax.jit(f, backend=platform).lower(X).compile()
    theirs = jax.jit(jf, backend=jax.devices()[0].platform).lower(X).compile()
    assert _where(ours(X), mjax.devices()) == _where(theirs(X), jax.devices()) == \
        [([0], True)] * 2


def test_committed_arguments_place_the_lowering_as_jax():
    jax, k = _jax(), _other()
    ours = mjax.jit(f).lower(mjax.device_put(X, mjax.devices()[k])).compile()
    theirs = jax.jit(jf).lower(jax.device_put(X, jax.devices()[k])).compile()
    (ins,), _ = ours.input_shardings
    assert _sharding_index(ins, mjax.devices()) == k
    for x, y in ((mjax.device_put(X, mjax.devices()[k]), jax.device_put(X, jax.devices()[k])),
                 (X, X)):     # (committed there, or uncommitted: run there, committed)
        assert _where(ours(x), mjax.devices()) == _where(theirs(y), jax.devices()) == \
            [([k], True)] * 2
    # Uncommitted arguments, no placement: the default device, results uncommitted.
    plain = mjax.jit(f).lower(X).compile()
    assert _where(plain(X), mjax.devices()) == \
        _where(jax.jit(jf).lower(X).compile()(X), jax.devices()) == [([0], False)] * 2


def test_a_committed_argument_on_another_device_is_refused_as_jax():
    jax = _jax()
    if len(mjax.devices()) < 2:
        pytest.skip("needs two devices of the default backend (one here): JAX cannot "
                    "commit to another device either")
    k = _other()
    with pytest.raises(ValueError) as theirs:
        jax.jit(jf).lower(X).compile()(jax.device_put(X, jax.devices()[k]))
    with pytest.raises(ValueError) as ours:
        mjax.jit(f).lower(X).compile()(mjax.device_put(X, mjax.devices()[k]))
    first = "Computation was compiled for input shardings that disagree with the shardings"
    assert str(theirs.value).startswith(first) and str(ours.value).startswith(first)
    assert "Argument x with shape float32[2,3]:" in str(ours.value)
    assert "Argument x with shape float32[2,3]:" in str(theirs.value)


def test_jax_default_device_places_the_lowering_uncommitted_as_jax():
    jax, k = _jax(), _other()
    with mjax.default_device(mjax.devices()[k]):
        ours = mjax.jit(f).lower(X).compile()
    with jax.default_device(jax.devices()[k]):
        theirs = jax.jit(jf).lower(X).compile()
    assert _where(ours(X), mjax.devices()) == _where(theirs(X), jax.devices()) == \
        [([k], False)] * 2


def test_jit_backend_calls_run_on_its_first_device_committed_as_jax():
    # (a direct call, not the stages: jit(backend=) places it as jit(device=) does)
    jax, k = _jax(), _other()
    platform = mjax.devices()[0].platform
    ours, theirs = mjax.jit(f, backend=platform), jax.jit(jf, backend=platform)
    for x, y in ((X, X), (mjax.device_put(X, mjax.devices()[k]),
                          jax.device_put(X, jax.devices()[k]))):
        assert _where(ours(x), mjax.devices()) == _where(theirs(y), jax.devices()) == \
            [([0], True)] * 2
