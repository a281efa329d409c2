"""jax.experimental.xla_metadata and JAX's op names, against jax: the HLO text of the same
programs (frontend attributes on the ops, instruction names from the primitives and
arguments), jaxprs with xla_metadata_value, and the values under jit/grad/vmap."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.xla_metadata import set_xla_metadata as jax_tag

import mjax
import mjax.numpy as mjnp
from mjax.experimental.xla_metadata import set_xla_metadata as mjax_tag

LIBS = {"jax": (jax, jnp, jax_tag), "mjax": (mjax, mjnp, mjax_tag)}


def _programs(J, np_, tag):
    def value(x):
        return tag(np_.sin(x) * np_.cos(x), breakpoint=True, n=3, s="a b")

    def block(x):
        with tag(_xla_log=True):
            y = np_.sin(x)
            z = np_.cos(y)
        return y * z

    def nested(x):
        with tag(a=1, b=2):
            y = np_.sin(x)
            with tag(b=None, c="x"):      # (None removes b inside)
                y = np_.cos(y)
        return np_.exp(y)

    def grad_of_block(x):
        with tag(k="v"):
            return np_.sum(np_.sin(x) ** 2)

    def scoped(x, params):
        with J.named_scope("layer"):
            y = np_.tanh(x @ params["w"])
        return y + params["b"]

    @tag(deco=True)
    @J.jit
    def decorated(x):
        return np_.sin(x) + 1

    x = np_.arange(3.0)
    params = {"w": np_.ones((3, 3)), "b": np_.zeros(3)}
    return {
        "value": J.jit(value).lower(x),
        "block": J.jit(block).lower(x),
        "nested": J.jit(nested).lower(x),
        "grad_of_block": J.jit(J.grad(grad_of_block)).lower(x),
        "vmap_value": J.jit(J.vmap(value)).lower(np_.ones((2, 3))),
        "scoped": J.jit(scoped).lower(x, params),
        "decorated": decorated.lower(x),
    }


@pytest.fixture(scope="module")
def lowered():
    return {name: _programs(*lib) for name, lib in LIBS.items()}


@pytest.mark.parametrize("name", ["value", "block", "nested", "vmap_value", "scoped",
                                  "decorated"])
def test_hlo_text_as_jax(lowered, name):
    assert lowered["mjax"][name].as_text("hlo") == lowered["jax"][name].as_text("hlo")


def test_grad_keeps_the_block_tag_on_derived_ops(lowered):
    def tagged(text):
        return sorted(line.split("=", 1)[1].split("(")[0].strip().split()[-1]
                      for line in text.splitlines() if 'k="v"' in line)
    mine = lowered["mjax"]["grad_of_block"].as_text("hlo")
    theirs = lowered["jax"]["grad_of_block"].as_text("hlo")
    # Forward and backward ops of the block both carry it (the sine and its derivative).
    assert "sine" in tagged(mine) and "cosine" in tagged(mine)
    assert set(tagged(mine)) <= set(tagged(theirs))


def test_values_are_unchanged():
    x = np.linspace(0.1, 1.0, 4, dtype=np.float32)
    for J, np_, tag in LIBS.values():
        f = lambda v: tag(np_.sin(v) * 2.0, a=1)                 # noqa: E731
        out = J.jit(J.grad(lambda v: np_.sum(f(v))))(x)
        np.testing.assert_allclose(np.asarray(out), 2 * np.cos(x), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(J.vmap(f)(x)), 2 * np.sin(x), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(f(x)), 2 * np.sin(x), rtol=1e-6)  # eager
        tree = tag({"a": x, "b": (x, x)}, t=True)
        assert sorted(tree) == ["a", "b"] and len(tree["b"]) == 2


def test_jaxpr_shows_the_value_tag():
    def f(J, np_, tag):
        return str(J.make_jaxpr(lambda v: tag(np_.sin(v), breakpoint=True, n=2))(1.0))
    assert f(*LIBS["mjax"]) == f(*LIBS["jax"])


def test_a_new_context_traces_again():
    traces = []

    @mjax.jit
    def f(x):
        traces.append(1)
        return mjnp.sin(x)
    x = mjnp.ones(3)
    f(x)
    with mjax_tag(a=1):
        f(x)
        f(x)
    f(x)
    assert len(traces) == 2
    with mjax_tag(a=1):
        assert 'a = "1"' in f.lower(x).as_text()
    assert "frontend_attributes" not in f.lower(x).as_text()


def test_op_names_in_compiled_hlo_metadata():
    def g(x, p):
        return mjnp.sin(x) * p["w"]
    text = mjax.jit(g).lower(1.0, {"w": 2.0}).compile().as_text()
    assert 'op_name="jit(g)/sin"' in text and 'op_name="jit(g)/mul"' in text
    assert "op_name=\"p[\\'w\\']\"" in text
