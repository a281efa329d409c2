"""What chex's test helpers read from JAX (rlax and others test with them):
`jax._src.xla_bridge._backends` (set_n_cpu_devices), a jitted function's own signature
(fake_pmap binds arguments with `inspect.signature(f, follow_wrapped=False)`), and pmap's
error for a mapped scalar."""
import inspect
import subprocess
import sys

import jax
import pytest

import mjax

_BACKENDS = ("import sys, {lib}\n"
             "before = dict({lib}._src.xla_bridge._backends or {{}})\n"
             "{lib}.numpy.ones(2).block_until_ready()\n"
             "after = {lib}._src.xla_bridge._backends\n"
             "print(sorted(before), sorted(after))\n")


@pytest.mark.parametrize("lib", ["mjax", "jax"])
def test_xla_bridge_backends(lib):
    out = subprocess.run([sys.executable, "-c", _BACKENDS.format(lib=lib)], check=True,
                         capture_output=True, text=True).stdout
    assert out.split() == ["[]", "['cpu']"]


def test_jit_has_the_functions_signature():
    def f(x, multiplier, y, mode="bar"):
        return x
    for follow in (True, False):
        assert (inspect.signature(mjax.jit(f, static_argnums=1), follow_wrapped=follow)
                == inspect.signature(jax.jit(f, static_argnums=1), follow_wrapped=follow))


def test_pmap_of_a_mapped_scalar_is_jaxs_value_error():
    errors = []
    for lib in (mjax, jax):
        with pytest.raises(ValueError) as e:
            lib.pmap(lambda x, y: x + y)(lib.numpy.ones(1), 3)
        errors.append(str(e.value))
    assert all("is only valid for values of rank at least 1, but was applied to a value "
               "of rank 0" in m for m in errors)
