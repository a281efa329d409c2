"""jit stages: trace -> lower -> compile produce real IR and a runnable executable."""
import re

import numpy as np
import pytest
from jaxlib.mlir import ir

import mjax
import mjax.numpy as jnp
from mjax.dialect import context


def f(x, y):
    z = jnp.sin(x) * y  # the line the location test looks for
    return z.sum(axis=0), {"m": jnp.max(x)}


X = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_trace_jaxpr_prints_like_jax_with_the_dialect_one_step_away():
    import jax
    import jax.numpy as jjnp

    def g(x, y):
        return jjnp.sum(jjnp.sin(x) * y, axis=0), {"m": jjnp.max(x)}
    traced = mjax.jit(f).trace(X, 2.0)
    theirs = jax.jit(g).trace(X, 2.0).jaxpr
    def prims(text):
        return [line.split("=")[1].split()[0].split("[")[0]
                for line in str(text).splitlines() if " = " in line]
    # The same equations as JAX's, less the broadcasts JAX leaves implicit for scalars.
    assert [p for p in prims(traced.jaxpr) if p != "broadcast_in_dim"] == prims(theirs)
    assert str(traced.jaxpr).startswith("{ lambda ; a:f32[2,3] b:f32[]. let")
    text = traced.jaxpr.mlir
    assert text == traced.as_text()
    assert '"jaxpr.sin"' in text and '"jaxpr.reduce_sum"' in text
    with context():
        module = ir.Module.parse(text)
    names = [op.name for op in module.body.operations[0].regions[0].blocks[0].operations]
    assert "jaxpr.mul" in names and names[-1] == "func.return"


def test_lower_as_text_parses_as_stablehlo():
    lowered = mjax.jit(f).lower(X, 2.0)
    text = lowered.as_text()
    assert "stablehlo.sine" in text and "jaxpr." not in text
    with context():
        module = ir.Module.parse(text)
    ops = {op.name for op in module.body.operations[0].regions[0].blocks[0].operations}
    assert "stablehlo.sine" in ops and "func.return" in ops
    assert all(name.startswith(("stablehlo.", "func.", "chlo.")) for name in ops)


def test_compile_runs_and_reports():
    compiled = mjax.jit(f).lower(X, 2.0).compile()
    out = compiled(X, 2.0)
    # atol: the column sums cancel, so one float32 ulp of the O(1) terms (IREE's sin
    # differs from XLA's by one) exceeds rtol=1e-6 of the small sum.
    np.testing.assert_allclose(out[0], (np.sin(X) * 2).sum(0), rtol=1e-6, atol=5e-7)
    np.testing.assert_allclose(out[1]["m"], 5.0)
    hlo = compiled.as_text()
    assert "HloModule" in hlo and "sine" in hlo
    cost = compiled.cost_analysis()
    assert isinstance(cost, dict) and cost.get("flops", 0) > 0


def test_compiled_rejects_other_argument_types():
    compiled = mjax.jit(lambda x: x + 1).lower(np.ones(3, np.float32)).compile()
    try:
        compiled(np.ones(4, np.float32))
    except TypeError as e:
        assert "f32[4]" in str(e) and "f32[3]" in str(e)
    else:
        raise AssertionError("expected a TypeError")


def test_stages_with_static_args_and_out_info():
    jf = mjax.jit(lambda x, n: jnp.tile(x, n), static_argnums=1)
    traced = jf.trace(np.ones(2, np.float32), 3)
    assert traced.out_info.shape == (6,)
    compiled = traced.lower().compile()
    # Like JAX: the executable takes only the dynamic arguments.
    np.testing.assert_allclose(compiled(np.ones(2, np.float32)), np.ones(6))


def _locations(text):
    return re.findall(r'loc\("([^"]+)":(\d+):(\d+)\)', text)


def test_traced_ops_carry_user_file_and_line():
    import inspect
    line = inspect.getsource(f).splitlines()[1]
    lineno = f.__code__.co_firstlineno + 1
    assert "the line the location test" in line
    text = mjax.jit(f).trace(X, 2.0).as_text(debug_info=True)
    sin_line = next(t for t in text.splitlines() if '"jaxpr.sin"' in t)
    m = re.search(r'loc\((#loc\d*|"[^"]+":\d+:\d+)\)', sin_line)
    assert m, sin_line
    locs = [(fn, int(ln)) for fn, ln, _ in _locations(text)]
    assert (__file__, lineno) in locs, (locs, text)


def test_make_jaxpr_mlir_and_lowered_keep_locations():
    lineno = f.__code__.co_firstlineno + 1
    lowered = mjax.jit(f).lower(X, 2.0)
    locs = [(fn, int(ln)) for fn, ln, _ in _locations(lowered.as_text(debug_info=True))]
    assert (__file__, lineno) in locs


@pytest.mark.parametrize("fn,args", [
    (lambda x, y: 2 * x + y, (3, 4)),
    (lambda d, t: ({"a": d["x"], "b": t[0]}, t[1] * 2), ({"x": 1.0}, (2.0, 3))),
    (lambda x: (x, [x * x]), (np.ones(3, np.float32),))])
def test_lowered_text_and_memory_analysis_as_jax(fn, args):
    # (201 AOT page: print(lowered.as_text()) and compiled.memory_analysis())
    import jax

    def run(lib):
        lowered = lib.jit(fn).trace(*args).lower()
        stats = lowered.compile().memory_analysis()
        return lowered.as_text(), (stats.argument_size_in_bytes,
                                   stats.output_size_in_bytes)
    assert run(mjax) == run(jax)


def test_stages_describe_arguments_and_results_as_jax():
    # in_tree/out_tree, in_avals (weak types kept), args_info (donation), donate_argnums and
    # out_info on Traced, Lowered and Compiled, printed as JAX prints them.
    import jax          # the test-only oracle
    import jax.numpy as jjnp

    def describe(j, np_):
        f = j.jit(lambda x, y, z=1.0: (x + y, {"a": z}), donate_argnums=0)
        t = f.trace(np_.ones(2), 2.0, z=np_.ones(3))
        lowered = t.lower()
        out = []
        for stage in (t, lowered, lowered.compile()):
            out += [str(getattr(stage, a)) for a in ("in_tree", "out_tree", "in_avals",
                                                     "args_info", "donate_argnums")]
            out.append(str(j.tree.map(lambda s: (s.shape, str(s.dtype)), stage.out_info)))
        g = j.jit(lambda a, n: a * n, static_argnums=1, donate_argnames="a").lower(
            np_.ones(3), 4)
        return out + [str(g.args_info), str(g.donate_argnums), str(g.in_tree)]
    assert describe(mjax, jnp) == describe(jax, jjnp)


def test_compiled_input_and_output_shardings_as_jax():
    import jax          # the test-only oracle

    def describe(j):
        c = j.jit(lambda x, y: (x + y, x)).lower(j.numpy.ones(2), 2.0).compile()
        out = [str(c.input_shardings), str(c.output_shardings)]
        mesh = j.make_mesh((4, 2), ("x", "y"))
        s = j.sharding.NamedSharding(mesh, j.sharding.PartitionSpec("x"))
        x = j.device_put(j.numpy.ones((8, 4)), s)
        c = j.jit(lambda a, b: (a * 2, a.sum(0) * b.sum()), out_shardings=(s, None)).lower(
            x, j.numpy.ones(3)).compile()
        return out + [str(c.input_shardings), str(c.output_shardings)]
    assert describe(mjax) == describe(jax)


def test_lowered_hlo_text_as_jax():
    # Lowered.as_text("hlo"): XLA's HLO module text (JAX's 201 "controlling XLA" page).
    import jax

    def layout(lib, jnp_):
        text = lib.jit(lambda x, y: jnp_.sin(x) * y).lower(1.0, np.ones(3, np.float32)
                                                          ).as_text("hlo")
        head = text.splitlines()[0]
        ops = sorted(re.findall(r"= \S+ (\w+)\(", text))
        return head.split(", ", 1)[1], ops
    import jax.numpy as jjnp
    assert layout(mjax, jnp) == layout(jax, jjnp)
    with pytest.raises(ValueError, match="unknown dialect"):
        mjax.jit(lambda x: x).lower(1.0).as_text("mhlo")
