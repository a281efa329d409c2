"""`precision=` of contractions as JAX 0.10.2 takes it: lax.Precision (an enum whose names
and aliases are strings), pairs of them, dot algorithm presets (`'BF16_BF16_F32'`,
lax.DotAlgorithmPreset) and lax.DotAlgorithm. Compared with real JAX: the canonical
forms, the presets' properties, the printed jaxprs, the StableHLO `algorithm` attribute,
the results and dtypes, and the presets XLA's CPU refuses."""
import re

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from frontend_util import ON_TPU

PRESETS = [p.name for p in jax.lax.DotAlgorithmPreset]
CPU_OK = ["DEFAULT", "F16_F16_F16", "F32_F32_F32", "F64_F64_F64", "BF16_BF16_F32",
          "BF16_BF16_F32_X3", "BF16_BF16_F32_X6"]
# The presets XLA's TPU computes (JAX's lax_test.testDotAlgorithm skips the others there,
# "not supported on TPU").
TPU_OK = ["DEFAULT", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6"]


def _dot(eqns):
    return next(e for e in eqns if str(e.primitive) == "dot_general")


def test_precision_enum_as_jaxs():
    P, JP = mjax.lax.Precision, jax.lax.Precision
    assert [p.name for p in P] == [p.name for p in JP]
    for alias in ("highest", "float32", "high", "bfloat16_3x", "tensorfloat32", "default",
                  "bfloat16", "fastest"):
        assert P(alias).name == JP(alias).name
    assert repr(P.HIGH) == repr(JP.HIGH) and str(P.HIGH) == str(JP.HIGH)
    with pytest.raises(ValueError):
        P("HIGHEST")


@pytest.mark.parametrize("spec", ["highest", "default", ("high", "highest"), "BF16_BF16_F32",
                                  "F32_F32_F32"])
def test_canonical_forms_as_jaxs(spec):
    def form(lib, jnp_):
        x = np.ones((2, 3), np.float32)
        eqns = lib.make_jaxpr(lambda a: jnp_.dot(a, a.T, precision=spec))(x).jaxpr.eqns
        return repr(_dot(eqns).params["precision"])
    assert form(mjax, jnp) == form(jax, jjnp)


@pytest.mark.parametrize("bad", ["HIGHEST", ("high", mjax.lax.Precision.HIGH), "nope", 3])
def test_bad_precisions_raise_valueerror_as_jax(bad):
    x = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match="Precision argument must be one of"):
        jnp.dot(x, x, precision=bad)
    jax_bad = bad if not isinstance(bad, tuple) else ("high", jax.lax.Precision.HIGH)
    with pytest.raises(ValueError, match="Precision argument must be one of"):
        jjnp.dot(x, x, precision=jax_bad)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_properties_as_jaxs(name):
    mine, theirs = mjax.lax.DotAlgorithmPreset[name], jax.lax.DotAlgorithmPreset[name]
    assert repr(mine) == repr(theirs) and str(mine) == str(theirs)

    def dts(types):
        return None if types is None else [np.dtype(t) for t in types]
    assert dts(mine.supported_lhs_types) == dts(theirs.supported_lhs_types)
    assert dts(mine.supported_rhs_types) == dts(theirs.supported_rhs_types)
    acc = theirs.accumulation_type
    assert mine.accumulation_type == (None if acc is None else np.dtype(acc))
    for pair in [(np.float32, np.float32), (jnp.bfloat16, jnp.bfloat16),
                 (np.float16, np.float16)]:
        assert dts(mine.supported_output_types(*pair)) == \
            dts(theirs.supported_output_types(*pair))


def _algorithm_attr(text):
    found = re.findall(r"algorithm = <[^>]*>", text)
    return found


@pytest.mark.parametrize("name", CPU_OK)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_cpu_presets_compute_and_lower_as_jax(name, dtype):
    if ON_TPU and name not in TPU_OK:
        pytest.skip(f"TPU: the dot algorithm '{name}' is not supported on TPU (JAX's "
                    f"testDotAlgorithm skips it there)")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 8)).astype(dtype)
    b = rng.standard_normal((8, 3)).astype(dtype)

    def run(lib, jnp_):
        f = lambda x, y: jnp_.dot(x, y, precision=name)  # noqa: E731
        text = lib.jit(f).lower(a, b).as_text()
        return np.asarray(lib.jit(f)(a, b)), np.asarray(f(a, b)), text
    (mj, me, mtext), (jj, je, jtext) = run(mjax, jnp), run(jax, jjnp)
    assert mj.dtype == jj.dtype and me.dtype == je.dtype
    np.testing.assert_array_equal(mj.astype(np.float32), jj.astype(np.float32))
    np.testing.assert_array_equal(me.astype(np.float32), je.astype(np.float32))
    assert _algorithm_attr(mtext) == _algorithm_attr(jtext)


def _for_the_cpu(jitted, *args):
    """Calls jitted on the CPU, or where the suite runs on a TPU (whose compiler takes
    other presets) lowers it for the CPU: the refusal is the CPU lowering's, in both."""
    if ON_TPU:
        return jitted.trace(*args).lower(lowering_platforms=("cpu",))
    return jitted(*args)


@pytest.mark.parametrize("name", sorted(set(PRESETS) - set(CPU_OK)))
def test_presets_xla_cpu_ignores_are_refused(name):
    a = np.ones((2, 2), np.float32)
    f = lambda x: jnp.dot(x, x, precision=name)  # noqa: E731
    with pytest.raises(ValueError, match=f"The precision '{name}' is not supported by "
                                         f"dot_general on CPU"):
        _for_the_cpu(mjax.jit(f), a)
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        _for_the_cpu(jax.jit(lambda x: jjnp.dot(x, x, precision=name)), a)
    # Tracing alone does not lower: JAX's and mjax's jaxprs both show the preset.
    assert f"precision={name}" in str(mjax.make_jaxpr(f)(a))


def test_dot_algorithm_tuple():
    alg = mjax.lax.DotAlgorithm(np.float32, np.float32, np.float32)
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    eqns = mjax.make_jaxpr(lambda x: jnp.dot(x, x.T, precision=alg))(a).jaxpr.eqns
    got = _dot(eqns).params["precision"]
    assert isinstance(got, mjax.lax.DotAlgorithm)
    assert [np.dtype(t) for t in got[:3]] == [np.dtype(np.float32)] * 3 and got[3:] == alg[3:]
    # XLA's CPU computes only presets, in JAX as in mjax
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        _for_the_cpu(mjax.jit(lambda x: jnp.dot(x, x.T, precision=alg)), a)
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        _for_the_cpu(jax.jit(lambda x: jjnp.dot(x, x.T, precision=jax.lax.DotAlgorithm(
            np.float32, np.float32, np.float32))), a)


def test_grad_jaxpr_keeps_the_algorithm_as_jax():
    x, w = np.ones((4, 8), np.float32), np.ones((8, 2), np.float32)

    def text(lib, jnp_):
        loss = lambda x, w: jnp_.sum(jnp_.dot(x, w, precision="BF16_BF16_F32"))  # noqa
        return str(lib.jit(lib.grad(loss, argnums=1)).trace(x, w).jaxpr)
    assert text(mjax, jnp) == text(jax, jjnp)


def test_convolution_takes_presets_and_pairs_as_jax():
    x = np.random.default_rng(1).standard_normal((1, 2, 5, 5)).astype(np.float32)
    k = np.random.default_rng(2).standard_normal((3, 2, 3, 3)).astype(np.float32)
    for spec in ("BF16_BF16_F32", ("high", "highest")):
        mine = mjax.lax.conv(x, k, (1, 1), "SAME", precision=spec)
        theirs = jax.lax.conv(x, k, (1, 1), "SAME", precision=spec)
        np.testing.assert_allclose(np.asarray(mine), np.asarray(theirs), rtol=1e-5)
        m = mjax.make_jaxpr(lambda a: mjax.lax.conv(a, k, (1, 1), "SAME", precision=spec))
        j = jax.make_jaxpr(lambda a: jax.lax.conv(a, k, (1, 1), "SAME", precision=spec))
        assert repr(m(x).jaxpr.eqns[0].params["precision"]) == \
            repr(j(x).jaxpr.eqns[0].params["precision"])
