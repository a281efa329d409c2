"""jax._src.api: the transformations, as JAX's private module holds them (JAX's
"primitives" documentation page imports them from here)."""
from mjax import (checkpoint, eval_shape, grad, hessian, jacfwd, jacrev, jit,  # noqa: F401
                  jvp, linearize, make_jaxpr, pmap, value_and_grad, vjp, vmap)

from collections.abc import Sequence  # noqa: E402

import numpy as np  # noqa: E402

from mjax import device_put, numpy as jnp, tree_util  # noqa: E402
from mjax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402


def _over_devices(devices, axis: str) -> NamedSharding:
    return NamedSharding(Mesh(np.array(list(devices)), (axis,)), PartitionSpec(axis))


def device_put_sharded(shards, devices):
    """The shards stacked along a new leading axis, shard i on devices[i] (JAX's
    jax._src.api.device_put_sharded; leaves of equal tree structure are stacked)."""
    if not isinstance(shards, Sequence):
        raise TypeError(f"device_put_sharded `shards` input must be a sequence; got "
                        f"{type(shards)}")
    if len(shards) != len(devices):
        raise ValueError(f"len(shards) = {len(shards)} must equal len(devices) = "
                         f"{len(devices)}.")

    def put(*xs):
        kinds = [(np.shape(x), str(jnp.result_type(x))) for x in xs]
        for a, b in zip(kinds, kinds[1:]):
            if a != b:
                raise ValueError(f"the shards passed to device_put_sharded must have "
                                 f"consistent shape and dtype, but got {a} and {b}.")
        return device_put(jnp.stack(xs), _over_devices(devices, "_device_put_sharded"))
    return tree_util.tree_map(put, *shards)


def device_put_replicated(x, devices):
    """x on each of `devices`, as an array with a new leading axis of len(devices) (JAX's
    jax._src.api.device_put_replicated)."""
    if not isinstance(devices, Sequence) or not devices:
        raise ValueError("`devices` argument to `device_put_replicated must be a non-empty "
                         "sequence.")

    def put(v):
        v = jnp.asarray(v)
        stacked = jnp.broadcast_to(v[None], (len(devices),) + tuple(v.shape))
        return device_put(stacked, _over_devices(devices, "_device_put_replicated"))
    return tree_util.tree_map(put, x)
