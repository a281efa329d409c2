"""`mjax.sharding`: meshes, partition specs and shardings, as JAX 0.10 has them.

    mesh = mjax.make_mesh((4, 2), ("x", "y"))
    s = NamedSharding(mesh, P("x", None))     # rows split over x, replicated over y
    x = mjax.device_put(np.ones((8, 3)), s)   # one shard of (2, 3) per device
    s.devices_indices_map((8, 3))             # device -> tuple of slices

The public module only: the values live in mjax.specs.sharding_impls, the APIs acting on
traces in mjax.spmd and mjax.lax.sharding.
"""
from mjax.lax.sharding import reshard
from mjax.specs.sharding_impls import (UNCONSTRAINED, AbstractDevice, AbstractMesh,  # noqa: F401
                                       AxisType, HloShardingOnDevices, Mesh, NamedSharding, P,
                                       PartitionSpec, Sharding, SingleDeviceSharding, as_sharding,
                                       current_mesh, get_abstract_mesh, get_mesh, hlo_key,
                                       make_mesh, named_from_hlo, use_abstract_mesh)
from mjax.specs.manual_axis_type import ManualAxisType  # noqa: F401
from mjax.spmd.mesh import auto_axes, explicit_axes, set_mesh


def make_single_device_sharding(device, *, memory_kind=None) -> SingleDeviceSharding:
    """Everything on `device`. JAX: jax.sharding.make_single_device_sharding."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


__all__ = ["AxisType", "Mesh", "NamedSharding", "P", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "make_mesh", "current_mesh", "UNCONSTRAINED",
           "HloShardingOnDevices", "named_from_hlo", "set_mesh", "get_mesh", "reshard",
           "AbstractMesh", "get_abstract_mesh", "use_abstract_mesh", "auto_axes",
           "explicit_axes", "ManualAxisType", "make_single_device_sharding"]
