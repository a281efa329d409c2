"""mjax's attribute casters are scoped to mjax's context: after importing and using
mjax.dialect, jaxlib reads other contexts' attributes exactly as before, and jax (imported
afterwards, in the same process) still works. Each check runs in a fresh subprocess."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# Reads attributes of several dense kinds in a context of its own; prints what came back
# (the class, or the exception type and message).
PROBE = textwrap.dedent('''
    import json
    from jaxlib.mlir import ir

    def probe():
        ctx = ir.Context()
        ctx.allow_unregistered_dialects = True
        out = {}
        with ctx, ir.Location.unknown():
            m = ir.Module.parse(
                '"test.op"() {a = dense<(1.0,2.0)> : tensor<2xcomplex<f32>>, '
                'b = array<ui32: 1>, c = dense<1.5> : tensor<2xf32>, d = array<i64: 1, 2>, '
                'e = array<i1: true>, f = dense<[1, 2]> : tensor<2xi32>} : () -> ()')
            op = m.body.operations[0]
            for name in "abcdef":
                try:
                    out[name] = type(op.attributes[name]).__name__
                except Exception as e:  # noqa: BLE001  (the behaviour under test)
                    out[name] = f"{type(e).__name__}: {e}"
        return out
''')

USE_MJAX = textwrap.dedent('''
    import numpy as np
    import mjax.dialect as D
    from mjax.dialect import attributes as A
    with D.context(), ir.Location.unknown(D.context()):
        # mjax's own context reads the kinds the built-in casters reject.
        m = ir.Module.parse(
            '"jaxpr.constant"() {value = dense<(1.0,2.0)> : tensor<1xcomplex<f32>>} '
            ': () -> tensor<1xcomplex<f32>>', D.context())
        attr = m.body.operations[0].operation.attributes["value"]
        assert A.decode(attr).tolist() == [1 + 2j], A.decode(attr)
        odd = ir.Attribute.parse("array<ui32: 1>")
        assert type(odd).__name__ == "Attribute"
''')


def _run(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_jaxlib_casters_unchanged_outside_mjax_context():
    pristine = _run(PROBE + "print(json.dumps(probe()))")
    after = _run(PROBE + USE_MJAX + "print(json.dumps(probe()))")
    assert pristine["a"].startswith("TypeError: Can't cast unknown element type")
    assert pristine["b"].startswith("TypeError: Can't cast unknown element type")
    assert after == pristine


def test_jax_imported_after_mjax_still_works():
    code = PROBE + USE_MJAX + textwrap.dedent('''
        import jax
        import jax.numpy as jnp
        x = np.array([1 + 2j, -0.5j], np.complex64)
        y = jax.jit(lambda v: v * (2 - 1j) + jnp.abs(v))(x)
        np.testing.assert_allclose(np.asarray(y), x * (2 - 1j) + np.abs(x), rtol=1e-6)
        g = jax.grad(lambda v: jnp.sum(jnp.sin(v) ** 2))(np.arange(3.0, dtype=np.float32))
        np.testing.assert_allclose(np.asarray(g), np.sin(2 * np.arange(3.0)), rtol=1e-5)
        text = jax.jit(lambda v: v + 1).lower(np.float32(1)).as_text()
        assert "stablehlo.add" in text
        print(json.dumps(probe()))
    ''')
    pristine = _run(PROBE + "print(json.dumps(probe()))")
    assert _run(code) == pristine
