"""JAX-private: jax._src.pallas.pallas_test_util (`ptu`), the base classes of JAX's
Pallas tests: a PallasTest subclass with INTERPRET = True runs its kernels in interpret
mode on the CPU; one without runs them compiled, on an accelerator only."""
from __future__ import annotations

import sys

from mjax.config import config
from mjax.experimental.pallas import pallas_call as _pallas_call
from mjax._src import test_util as jtu
from mjax._src.test_util_devices import _CPU


@jtu.with_config(jax_traceback_filtering="off")
class PallasTest(jtu.JaxTestCase):
    INTERPRET: bool = False

    def setUp(self):
        on_cpu = jtu.test_device_matches([_CPU])
        if self.INTERPRET and not on_cpu:
            self.skipTest("Only run interpret tests on CPU.")
        if not self.INTERPRET:
            if on_cpu:
                self.skipTest("On CPU the test works only in interpret mode")
            if jtu.is_device_cuda() and not jtu.is_cuda_compute_capability_at_least("8.0"):
                self.skipTest("Only works on GPU with capability >= sm80")
            if jtu.is_device_cuda() and config.read("jax_pallas_use_mosaic_gpu") and \
                    not jtu.is_cuda_compute_capability_at_least("9.0"):
                self.skipTest("Mosaic GPU requires capability >= sm90")
            if sys.platform == "win32":
                self.skipTest("Only works on non-Windows platforms")
        super().setUp()

    def pallas_call(self, *args, **kwargs):
        return _pallas_call(*args, **kwargs, interpret=self.INTERPRET)


class PallasTPUTest(PallasTest):
    """Runs on TPUs, or in interpret mode on the CPU."""

    def setUp(self):
        if not jtu.is_device_tpu() and not self.INTERPRET:
            self.skipTest("Test requires TPUs")
        super().setUp()
