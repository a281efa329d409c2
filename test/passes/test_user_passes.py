"""Users' passes in jit (docs/passes.md): jit(passes=), mjax.passes.extra, the
mjax_extra_passes option, their points in the pipeline, the cache key, the checks after
each pass; the worked examples of examples/passes/ checked against NumPy and closed forms
(their mjax-opt forms: test/passes/user-pass-*.mlir)."""
import os
import pathlib
import subprocess
import sys

import jax
import ml_dtypes
import numpy as np
import pytest
from jaxlib.mlir import ir

import mjax
import mjax.numpy as jnp
from mjax.passes import (Pass, PassError, Pattern, builder_before, erase, extra,
                         load_pass_plugin, register_pass, replace, walk)
from mjax.sharding import Mesh, NamedSharding, PartitionSpec as P

ROOT = pathlib.Path(__file__).resolve().parents[2]
[Bf16Matmul] = load_pass_plugin(str(ROOT / "examples/passes/bf16_matmul.py"))
[CountFlops] = load_pass_plugin(str(ROOT / "examples/passes/count_flops.py"))
[StripDebugPrints] = load_pass_plugin(str(ROOT / "examples/passes/strip_debug_prints.py"))
[ReciprocalDivide] = load_pass_plugin(str(ROOT / "examples/passes/reciprocal_divide.py"))
[BreakDots] = load_pass_plugin(str(ROOT / "test/passes/plugins/break_dots.py"))

RNG = np.random.default_rng(0)
A = RNG.standard_normal((8, 16)).astype(np.float32)
B = RNG.standard_normal((16, 4)).astype(np.float32)


# On a TPU (MJAX_TEST_TPU=1, test/conftest.py) tanh and the matmul's sums are the chip's, not
# NumPy's: the expected numbers there are JAX's program on the chip.
ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")


def bf16(x):
    return x.astype(ml_dtypes.bfloat16).astype(np.float32)


def _jax_mlp(a, b, operands=np.float32):
    """mlp in JAX, its matmul of `operands` accumulated in float32."""
    return jax.jit(lambda a, b: jax.numpy.tanh(jax.lax.dot(
        a.astype(operands), b.astype(operands), preferred_element_type=np.float32)) + 1)(a, b)


def mlp(a, b):
    return jnp.tanh(a @ b) + 1


# ---- example 1: bf16 matmuls, f32 accumulation ------------------------------------------
def test_bf16_matmul_numbers():
    got = np.asarray(mjax.jit(mlp, passes=[Bf16Matmul()])(A, B))
    want = np.tanh(bf16(A) @ bf16(B)) + 1           # bf16 operands, f32 products and sums
    if ON_TPU:
        want = _jax_mlp(A, B, ml_dtypes.bfloat16)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # The pass did change the numbers: the f32 result is farther away than bf16's rounding.
    assert np.abs(got - (np.tanh(A @ B) + 1)).max() > 1e-4


def test_bf16_matmul_in_gradients_and_lowered_text():
    def loss(a, b):
        return jnp.sum(mlp(a, b) ** 2)
    g = mjax.jit(mjax.grad(loss), passes=[Bf16Matmul()])
    text = g.lower(A, B).as_text(dialect="jaxpr")
    dots = [line for line in text.splitlines() if "jaxpr.dot_general" in line]
    assert len(dots) == 2, text                     # forward and the gradient's
    assert all("xbf16>, tensor<" in d and "preferred_element_type = f32" in d for d in dots)
    y = np.tanh(bf16(A) @ bf16(B))
    want = bf16(2 * (y + 1) * (1 - y ** 2)) @ bf16(B).T
    np.testing.assert_allclose(np.asarray(g(A, B)), want, rtol=2e-3, atol=2e-3)


def test_bf16_matmul_option_min_size():
    text = mjax.jit(mlp, passes=[Bf16Matmul(min_size=33)]).lower(A, B).as_text(
        dialect="jaxpr")
    assert "bf16" not in text                       # the 8x4 result has 32 elements


# ---- example 2: an analysis ------------------------------------------------------------
def test_count_flops_closed_form():
    counter = CountFlops()
    out = mjax.jit(mlp, passes=[counter])(A, B)
    want = _jax_mlp(A, B) if ON_TPU else np.tanh(A @ B) + 1
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-5)
    assert counter.flops == 2 * 8 * 16 * 4 + 8 * 4 + 8 * 4     # dot, tanh, add
    assert counter.counts["jaxpr.dot_general"] == 1
    assert counter.counts["jaxpr.tanh"] == 1


def test_count_flops_of_a_gradient():
    counter = CountFlops()
    mjax.jit(mjax.grad(lambda a: jnp.sum(a @ B)), passes=[counter])(A)
    # After expansion: grad's matmul (8x4 cotangent times B^T) is counted, not jaxpr.vjp.
    assert counter.counts["jaxpr.dot_general"] >= 1
    assert not any("vjp" in name or "jvp" in name for name in counter.counts)
    assert counter.flops >= 2 * 8 * 16 * 4


# ---- example 3: production builds without debug prints ----------------------------------
def printing(x):
    mjax.debug.print("x is {}", x)
    return x * 2


def test_strip_debug_prints(capfd):
    assert float(mjax.jit(printing)(np.float32(3))) == 6
    mjax.effects_barrier()   # (on a TPU a callback runs beside the program, as in JAX)
    assert "x is 3" in capfd.readouterr().out
    assert float(mjax.jit(printing, passes=[StripDebugPrints()])(np.float32(4))) == 8
    assert "x is" not in capfd.readouterr().out
    with extra(StripDebugPrints()):
        assert float(mjax.jit(mjax.grad(printing))(np.float32(5))) == 2
    assert "x is" not in capfd.readouterr().out


def test_strip_debug_prints_in_loops_and_ordered(capfd):
    def g(x):
        mjax.debug.print("ordered {}", x, ordered=True)
        body = lambda i, c: (mjax.debug.print("in loop {}", i), c + 1)[1]   # noqa: E731
        return mjax.lax.fori_loop(0, 3, body, x) * 2
    np.testing.assert_array_equal(np.asarray(mjax.jit(g)(np.float32(3))), 12)
    mjax.effects_barrier()
    assert "in loop 2" in capfd.readouterr().out
    strip = [StripDebugPrints()]
    np.testing.assert_array_equal(np.asarray(mjax.jit(g, passes=strip)(np.float32(3))), 12)
    np.testing.assert_array_equal(
        np.asarray(mjax.jit(mjax.vmap(g), passes=strip)(np.float32([3, 4]))), [12, 14])
    assert capfd.readouterr().out == ""


def test_config_option_by_flag(capfd):
    f = mjax.jit(printing)
    mjax.config.update("mjax_extra_passes", "strip-debug-prints")
    try:
        assert float(f(np.float32(6))) == 12
        mjax.effects_barrier()   # (on a TPU a callback runs beside the program, as in JAX)
        assert "x is" not in capfd.readouterr().out
    finally:
        mjax.config.update("mjax_extra_passes", ())
    f(np.float32(6))                              # a new cache entry: printing again
    mjax.effects_barrier()
    assert "x is 6" in capfd.readouterr().out


def test_environment_variable():
    plugin = str(ROOT / "examples/passes/strip_debug_prints.py")
    script = (f"import numpy as np, mjax\n"
              f"mjax.passes.load_pass_plugin({plugin!r})\n"
              f"def f(x):\n"
              f"    mjax.debug.print('printed {{}}', x)\n"
              f"    return x\n"
              f"mjax.jit(f)(np.float32(1))\n")
    for value, prints in (("strip-debug-prints", False), ("", True)):
        env = dict(os.environ, MJAX_EXTRA_PASSES=value)
        proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert ("printed 1" in proc.stdout) == prints, proc.stdout


# ---- StableHLO patterns after lowering -------------------------------------------------
def test_reciprocal_divide_after_lowering():
    x = np.linspace(1, 2, 6, dtype=np.float32)
    f = mjax.jit(lambda x: x / 3.0, passes=[ReciprocalDivide()])
    text = f.lower(x).as_text()
    assert "stablehlo.multiply" in text and "stablehlo.divide" not in text
    np.testing.assert_allclose(np.asarray(f(x)), x / np.float32(3), rtol=1e-6)
    assert "jaxpr.div" in f.lower(x).as_text(dialect="jaxpr")   # (before lowering)


# ---- points, cache key, checks ----------------------------------------------------------
class Record(Pass):
    """Records the jaxpr op names it sees."""

    def __init__(self, point):
        self.point = point

    def run(self, module):
        self.seen = {op.operation.name for op in walk(module)}


def test_points_see_the_pipeline_stages():
    passes = {p: Record(p) for p in ("after-tracing", "after-expansion", "before-lowering",
                                     "after-lowering")}
    inner = mjax.jit(lambda x: jnp.sin(x) * 2)
    mjax.jit(mjax.grad(lambda x: inner(x)), passes=list(passes.values()))(np.float32(1))
    assert "jaxpr.vjp" in passes["after-tracing"].seen
    assert "jaxpr.vjp" not in passes["after-expansion"].seen
    assert "jaxpr.call" in passes["after-expansion"].seen        # inlined later
    assert "jaxpr.call" not in passes["before-lowering"].seen
    assert "jaxpr.cos" in passes["before-lowering"].seen
    assert "stablehlo.cosine" in passes["after-lowering"].seen
    assert not any(n.startswith("jaxpr.") for n in passes["after-lowering"].seen)


@register_pass("test-sin-to-cos")
class SinToCos(Pass):
    """Replace sin by cos (a test pass)."""

    def __init__(self, scale: float = 1.0):
        self.scale = scale

    def run(self, module):
        for op in Pattern("sin").matches(module):
            b = builder_before(op)
            y = b.cos(op.operands[0])
            if self.scale != 1.0:
                y = b.mul(y, b.full_like(y, self.scale))
            replace(op, y)


def test_passes_are_part_of_the_cache_key():
    traces = []

    def f(x):
        traces.append(1)
        return jnp.sin(x)
    x = np.float32(0.5)
    plain = mjax.jit(f)
    assert np.isclose(float(plain(x)), np.sin(0.5))
    assert np.isclose(float(mjax.jit(f, passes=[SinToCos()])(x)), np.cos(0.5))
    assert np.isclose(float(mjax.jit(f, passes=[SinToCos(3.0)])(x)), 3 * np.cos(0.5))
    assert np.isclose(float(mjax.jit(f, passes=[SinToCos(3.0)])(x)), 3 * np.cos(0.5))
    with extra(SinToCos(2.0)):
        assert np.isclose(float(plain(x)), 2 * np.cos(0.5))
    assert np.isclose(float(plain(x)), np.sin(0.5))
    # (the programs of jit(f, passes=...) are compiled from copies of f's one trace:
    # passes change what is compiled, not what is traced (mjax/jit/traces.py); the
    # mjax_extra_passes option is keyed with the tracing options, so `extra` traces again)
    assert len(traces) == 2


def test_passes_of_an_inner_jit_warn():
    inner = mjax.jit(jnp.sin, passes=[SinToCos()])
    with pytest.warns(UserWarning, match=r"jit\(sin, passes=...\) is called inside another "
                                         r"traced function"):
        out = mjax.jit(lambda x: inner(x) * 2)(np.float32(0.5))
    assert np.isclose(float(out), 2 * np.sin(0.5))           # the inner passes did not run
    assert np.isclose(float(inner(np.float32(0.5))), np.cos(0.5))


def test_invalid_ir_names_the_pass_and_the_op():
    with pytest.raises(PassError) as e:
        mjax.jit(mlp, passes=[BreakDots()])(A, B)
    assert "IR invalid after pass 'break-dots'" in str(e.value)
    assert "'jaxpr.dot_general' op has unknown attribute 'bogus'" in str(e.value)
    assert "test_user_passes.py" in str(e.value)                 # the user's line of a @ b


class EraseUsed(Pass):
    point = "after-tracing"

    def run(self, module):
        for op in walk(module, "sin"):
            erase(op)


def test_erase_of_a_used_op_is_a_located_error():
    with pytest.raises(PassError, match=r"in pass 'EraseUsed': 'jaxpr.sin' op cannot be "
                                        r"erased: result 0 is still used"):
        mjax.jit(lambda x: jnp.sin(x) + 1, passes=[EraseUsed()])(np.float32(1))


def test_replace_checks_types():
    class Wrong(Pass):
        def run(self, module):
            for op in walk(module, "sin"):
                replace(op, builder_before(op).convert_element_type(
                    op.operands[0], new_dtype=np.dtype(np.int32)))
    with pytest.raises(PassError, match="result 0 has type tensor<f32>, replaced by a value "
                                        "of type tensor<i32>"):
        mjax.jit(jnp.sin, passes=[Wrong()])(np.float32(1))


def test_bad_pass_lists():
    with pytest.raises(TypeError, match="the class Bf16Matmul"):
        mjax.jit(mlp, passes=[Bf16Matmul])
    with pytest.raises(TypeError, match="Pass instances"):
        mjax.jit(mlp, passes=[42])
    with pytest.raises(ValueError, match="unknown pass 'no-such-pass'"):
        mjax.jit(mlp, passes="no-such-pass")(A, B)
    with pytest.raises(ValueError):
        mjax.config.update("mjax_extra_passes", 42)
    with pytest.raises(ValueError, match="point 'later'"):
        @register_pass("test-bad-point")
        class BadPoint(Pass):
            point = "later"
    with pytest.raises(ValueError, match="pass 'Record' has point 'at-the-end'"):
        mjax.jit(mlp, passes=[Record("at-the-end")])(A, B)


def test_register_pass_refuses_a_taken_flag():
    with pytest.raises(ValueError, match="pass flag 'jaxpr-dce' is taken"):
        @register_pass("jaxpr-dce")
        class Mine(Pass):
            """Not ours."""


def test_pattern_predicates():
    module = mjax.jit(mlp).trace(A, B).jaxpr.mlir
    with mjax.dialect.context():
        m = ir.Module.parse(module)
        assert len(Pattern("dot_general", operands=[None, None]).matches(m)) == 1
        assert not Pattern("dot_general", operands=[None]).matches(m)
        assert not Pattern("dot_general", preferred_element_type=np.float32).matches(m)
        assert len(Pattern("add", where=lambda op: op.result_avals[0].shape == (8, 4))
                   .matches(m)) == 1


class SelfUse(Pass):
    """Makes stablehlo.sine its own operand (a use its definition does not dominate)."""

    point = "after-lowering"

    def run(self, module):
        for op in walk(module, "stablehlo.sine"):
            op.operation.operands[0] = op.operation.results[0]


def test_invalid_stablehlo_names_the_pass_and_the_op():
    def f(x):
        y = jnp.sin(x)
        return y * 2
    with pytest.raises(PassError, match=r"test_user_passes.py:\d+:\d+: error: IR invalid "
                                        r"after pass 'SelfUse': 'stablehlo.sine' op operand "
                                        r"#0 does not dominate this use"):
        mjax.jit(f, passes=[SelfUse()])(np.float32(1))


def test_passes_over_a_mesh():
    mesh = Mesh(np.array(mjax.devices()[:2]), ("x",))
    f = mjax.jit(lambda a, b: a @ b, passes=[Bf16Matmul()],
                 in_shardings=(NamedSharding(mesh, P("x")), NamedSharding(mesh, P())))
    np.testing.assert_allclose(np.asarray(f(A, B)), bf16(A) @ bf16(B), rtol=1e-5, atol=1e-5)
    assert "xbf16>" in f.lower(A, B).as_text(dialect="jaxpr")


def test_a_pass_keeping_results_does_not_recompile():
    traces = []

    def f(x):
        traces.append(1)
        return jnp.sin(x)
    record = Record("before-lowering")         # sets record.seen when it runs
    g = mjax.jit(f, passes=[record])
    g(np.float32(1))
    g(np.float32(2))
    assert len(traces) == 1 and "jaxpr.sin" in record.seen
