"""`jax.sharding.use_abstract_mesh` inside jit: PartitionSpecs name the abstract mesh's
axes, laid over the current mesh's devices, and the result keeps that layout, as in
JAX (docs/parallel.md). Compared with real JAX on 8 CPU devices."""
import jax
import numpy as np
import pytest

import mjax


def _run(lib):
    mesh = lib.make_mesh((4, 2), ("X", "Y"))
    with lib.set_mesh(mesh):
        x = lib.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4), lib.P("X", "Y"))
        seen = {}

        @lib.jit
        def f(x):
            am = lib.sharding.AbstractMesh((8,), ("A",), (lib.sharding.AxisType.Explicit,))
            with lib.sharding.use_abstract_mesh(am):
                seen["inside"] = str(lib.sharding.get_abstract_mesh())
                y = lib.reshard(x, lib.P("A", None))
                seen["y"] = str(lib.typeof(y))
                return y * 2

        z = f(x)
        return (np.asarray(z), str(lib.typeof(z)), str(z.sharding),
                [s.device.id for s in z.addressable_shards], seen)


def test_abstract_mesh_of_other_axes_inside_jit_matches_jax():
    mine, theirs = _run(mjax), _run(jax)
    np.testing.assert_array_equal(mine[0], theirs[0])
    assert mine[1:4] == theirs[1:4]
    assert mine[1] == "float32[8@A,4]"
    assert mine[4]["y"] == theirs[4]["y"]


@pytest.mark.parametrize("lib", [mjax, jax], ids=["mjax", "jax"])
def test_use_abstract_mesh_cannot_change_the_mesh_size(lib):
    with lib.set_mesh(lib.make_mesh((4, 2), ("X", "Y"))):
        with pytest.raises(ValueError, match="cannot change the size of the mesh"):
            with lib.sharding.use_abstract_mesh(lib.sharding.AbstractMesh((4,), ("A",))):
                pass
        # (the failed entry leaves the abstract mesh as it was)
        assert lib.sharding.get_abstract_mesh().axis_names == ("X", "Y")
