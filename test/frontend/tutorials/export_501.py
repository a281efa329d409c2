"""Code of JAX's page(s) docs/new_docs/501/export.md (jax-ml/jax@cec06d116c05, Apache-2.0),
extracted unchanged for test_tutorials.py: one cell per code cell, ```python block, or
doctest example (prompts removed; its last expression is shown, as doctest does)."""

# %% docs/new_docs/501/export.md doctest tags=
import re

# %% docs/new_docs/501/export.md doctest tags=
import numpy as np

# %% docs/new_docs/501/export.md doctest tags=
import jax

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
def f(x): return 2 * x * x

# %% docs/new_docs/501/export.md doctest tags=
exported: export.Exported = export.export(jax.jit(f))(
   jax.ShapeDtypeStruct((), np.float32))

# %% docs/new_docs/501/export.md doctest tags=
# You can inspect the Exported object

# %% docs/new_docs/501/export.md doctest tags=
print(re.search(r".*@main.*", exported.mlir_module()).group(0))

# %% docs/new_docs/501/export.md doctest tags=
# And you can serialize the Exported to a bytearray.

# %% docs/new_docs/501/export.md doctest tags=
serialized: bytearray = exported.serialize()

# %% docs/new_docs/501/export.md doctest tags=
# The serialized function can later be rehydrated and called from

# %% docs/new_docs/501/export.md doctest tags=
# another JAX computation, possibly in another process.

# %% docs/new_docs/501/export.md doctest tags=
rehydrated_exp: export.Exported = export.deserialize(serialized)

# %% docs/new_docs/501/export.md doctest tags=
def callee(y):
 return 3. * rehydrated_exp.call(y * 4.)

# %% docs/new_docs/501/export.md doctest tags=
callee(1.)

# %% docs/new_docs/501/export.md doctest tags=
import jax

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
from typing import Callable

# %% docs/new_docs/501/export.md doctest tags=
def f(x): return 7 * x * x * x

# %% docs/new_docs/501/export.md doctest tags=
# Serialize 3 levels of VJP along with the primal function

# %% docs/new_docs/501/export.md doctest tags=
blob: bytearray = export.export(jax.jit(f))(1.).serialize(vjp_order=3)

# %% docs/new_docs/501/export.md doctest tags=
rehydrated_f: Callable = export.deserialize(blob).call

# %% docs/new_docs/501/export.md doctest tags=
rehydrated_f(0.1)  # 7 * 0.1^3

# %% docs/new_docs/501/export.md doctest tags=
jax.grad(rehydrated_f)(0.1)  # 7*3 * 0.1^2

# %% docs/new_docs/501/export.md doctest tags=
jax.grad(jax.grad(rehydrated_f))(0.1)  # 7*3*2 * 0.1

# %% docs/new_docs/501/export.md doctest tags=
jax.grad(jax.grad(jax.grad(rehydrated_f)))(0.1)  # 7*3*2

# %% docs/new_docs/501/export.md doctest tags=
jax.grad(jax.grad(jax.grad(jax.grad(rehydrated_f))))(0.1)  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/export.md doctest tags=
import jax

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
from jax import lax

# %% docs/new_docs/501/export.md doctest tags=
from jax._src import core

# %% docs/new_docs/501/export.md doctest tags=
from jax._src.interpreters import mlir

# %% docs/new_docs/501/export.md doctest tags=
# Define a new primitive backed by a custom call

# %% docs/new_docs/501/export.md doctest tags=
new_prim = core.Primitive("new_prim")

# %% docs/new_docs/501/export.md doctest tags=
_ = new_prim.def_abstract_eval(lambda x: x)

# %% docs/new_docs/501/export.md doctest tags=
_ = mlir.register_lowering(new_prim, lambda ctx, o: mlir.custom_call("my_new_prim", operands=[o], result_types=[o.type]).results)

# %% docs/new_docs/501/export.md doctest tags=
print(jax.jit(new_prim.bind).lower(1.).compiler_ir())

# %% docs/new_docs/501/export.md doctest tags=
# If we try to export, we get an error

# %% docs/new_docs/501/export.md doctest tags=
export.export(jax.jit(new_prim.bind))(1.)  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/export.md doctest tags=
# We can avoid the error if we pass a `DisabledSafetyCheck.custom_call`

# %% docs/new_docs/501/export.md doctest tags=
exp = export.export(
   jax.jit(new_prim.bind),
   disabled_checks=[export.DisabledSafetyCheck.custom_call("my_new_prim")])(1.)

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
export.default_export_platform()

# %% docs/new_docs/501/export.md doctest tags=
import jax

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
from jax import lax

# %% docs/new_docs/501/export.md doctest tags=
# You can specify the export platform, e.g., `tpu`, `cpu`, `cuda`, `rocm`

# %% docs/new_docs/501/export.md doctest tags=
# even if the current machine does not have that accelerator.

# %% docs/new_docs/501/export.md doctest tags=
exp = export.export(jax.jit(lax.cos), platforms=['tpu'])(1.)

# %% docs/new_docs/501/export.md doctest tags=
# But you will get an error if you try to compile `exp`

# %% docs/new_docs/501/export.md doctest tags=
# on a machine that does not have TPUs.

# %% docs/new_docs/501/export.md doctest tags=
exp.call(1.)  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/export.md doctest tags=
# We can avoid the error if we pass a `DisabledSafetyCheck.platform`

# %% docs/new_docs/501/export.md doctest tags=
# parameter to `export`, e.g., because you have reasons to believe

# %% docs/new_docs/501/export.md doctest tags=
# that the code lowered will run adequately on the current

# %% docs/new_docs/501/export.md doctest tags=
# compilation platform (which is the case for `cos` in this

# %% docs/new_docs/501/export.md doctest tags=
# example):

# %% docs/new_docs/501/export.md doctest tags=
exp_unsafe = export.export(jax.jit(lax.cos),
   platforms=['tpu'],
   disabled_checks=[export.DisabledSafetyCheck.platform()])(1.)

# %% docs/new_docs/501/export.md doctest tags=
exp_unsafe.call(1.)

# %% docs/new_docs/501/export.md doctest tags=
exp_multi = export.export(jax.jit(lax.cos),
   platforms=['tpu', 'cpu', 'cuda'])(1.)

# %% docs/new_docs/501/export.md doctest tags=
exp_multi.call(1.)

# %% docs/new_docs/501/export.md doctest tags=
import jax

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
from jax import lax

# %% docs/new_docs/501/export.md doctest tags=
# A largish function

# %% docs/new_docs/501/export.md doctest tags=
def f(x):
  for i in range(1000):
    x = jnp.cos(x)
  return x

# %% docs/new_docs/501/export.md doctest tags=
exp_single = export.export(jax.jit(f))(1.)

# %% docs/new_docs/501/export.md doctest tags=
len(exp_single.mlir_module_serialized)  # doctest: +SKIP

# %% docs/new_docs/501/export.md doctest tags=
exp_multi = export.export(jax.jit(f),
                          platforms=["cpu", "tpu", "cuda"])(1.)

# %% docs/new_docs/501/export.md doctest tags=
len(exp_multi.mlir_module_serialized)  # doctest: +SKIP

# %% docs/new_docs/501/export.md doctest tags=
import jax

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
from jax.sharding import AbstractMesh, Mesh, NamedSharding

# %% docs/new_docs/501/export.md doctest tags=
from jax.sharding import PartitionSpec as P

# %% docs/new_docs/501/export.md doctest tags=
# Use an AbstractMesh for exporting

# %% docs/new_docs/501/export.md doctest tags=
export_mesh = AbstractMesh((4,), ("a",))

# %% docs/new_docs/501/export.md doctest tags=
def f(x):
  return x.T

# %% docs/new_docs/501/export.md doctest tags=
exp = export.export(jax.jit(f))(
   jax.ShapeDtypeStruct((32,), dtype=np.int32,
                        sharding=NamedSharding(export_mesh, P("a"))))

# %% docs/new_docs/501/export.md doctest tags=
# `exp` knows for how many devices it was exported.

# %% docs/new_docs/501/export.md doctest tags=
exp.nr_devices

# %% docs/new_docs/501/export.md doctest tags=
# and it knows the shardings for the inputs. These will be applied

# %% docs/new_docs/501/export.md doctest tags=
# when the exported is called.

# %% docs/new_docs/501/export.md doctest tags=
exp.in_shardings_jax(export_mesh)

# %% docs/new_docs/501/export.md doctest tags=
# You can also use a concrete set of devices for exporting

# %% docs/new_docs/501/export.md doctest tags=
concrete_devices = jax.local_devices()[:4]

# %% docs/new_docs/501/export.md doctest tags=
concrete_mesh = Mesh(concrete_devices, ("a",))

# %% docs/new_docs/501/export.md doctest tags=
exp2 = export.export(jax.jit(f))(
   jax.ShapeDtypeStruct((32,), dtype=np.int32,
                        sharding=NamedSharding(concrete_mesh, P("a"))))

# %% docs/new_docs/501/export.md doctest tags=
# When you call an Exported, you must use a concrete set of devices

# %% docs/new_docs/501/export.md doctest tags=
arg = jax.device_put(jnp.arange(8 * 4),
                     NamedSharding(concrete_mesh, P("a")))

# %% docs/new_docs/501/export.md doctest tags=
res1 = exp.call(arg)

# %% docs/new_docs/501/export.md doctest tags=
# Check out the first 2 shards of the result

# %% docs/new_docs/501/export.md doctest tags=
[f"device={s.device} index={s.index}" for s in res1.addressable_shards[:2]]

# %% docs/new_docs/501/export.md doctest tags=
# We can call `exp` with some other 4 devices and another

# %% docs/new_docs/501/export.md doctest tags=
# mesh with a different shape, as long as the number of devices is

# %% docs/new_docs/501/export.md doctest tags=
# the same.

# %% docs/new_docs/501/export.md doctest tags=
other_mesh = Mesh(np.array(jax.local_devices()[2:6]).reshape((2, 2)), ("b", "c"))

# %% docs/new_docs/501/export.md doctest tags=
res2 = exp.call(jax.device_put(arg,
                               NamedSharding(other_mesh, P("b"))))

# %% docs/new_docs/501/export.md doctest tags=
# Check out the first 2 shards of the result. Notice that the output is

# %% docs/new_docs/501/export.md doctest tags=
# sharded similarly; this means that the input was resharded according to the

# %% docs/new_docs/501/export.md doctest tags=
# exp.in_shardings.

# %% docs/new_docs/501/export.md doctest tags=
[f"device={s.device} index={s.index}" for s in res2.addressable_shards[:2]]

# %% docs/new_docs/501/export.md doctest tags=
import jax

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
from jax.sharding import Mesh, NamedSharding

# %% docs/new_docs/501/export.md doctest tags=
from jax.sharding import PartitionSpec as P

# %% docs/new_docs/501/export.md doctest tags=
export_devices = jax.local_devices()

# %% docs/new_docs/501/export.md doctest tags=
export_mesh = Mesh(np.array(export_devices), ("a",))

# %% docs/new_docs/501/export.md doctest tags=
def f(x):
  return x.T

# %% docs/new_docs/501/export.md doctest tags=
exp = export.export(jax.jit(f))(
   jax.ShapeDtypeStruct((4 * len(export_devices),), dtype=np.int32,
                        sharding=NamedSharding(export_mesh, P("a"))))

# %% docs/new_docs/501/export.md doctest tags=
arg = jnp.arange(4 * len(export_devices))

# %% docs/new_docs/501/export.md doctest tags=
exp.call(arg)  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/export.md doctest tags=
import jax

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
from jax.sharding import Mesh, NamedSharding

# %% docs/new_docs/501/export.md doctest tags=
from jax.sharding import PartitionSpec as P

# %% docs/new_docs/501/export.md doctest tags=
export_devices = jax.local_devices()

# %% docs/new_docs/501/export.md doctest tags=
export_mesh = Mesh(np.array(export_devices), ("a",))

# %% docs/new_docs/501/export.md doctest tags=
def f(x):
  return x.T

# %% docs/new_docs/501/export.md doctest tags=
exp = export.export(jax.jit(f))(
   jax.ShapeDtypeStruct((4 * len(export_devices),), dtype=np.int32,
                        sharding=NamedSharding(export_mesh, P("a"))))

# %% docs/new_docs/501/export.md doctest tags=
# Prepare the mesh for calling `exp`.

# %% docs/new_docs/501/export.md doctest tags=
calling_mesh = Mesh(np.array(export_devices[::-1]), ("a",))

# %% docs/new_docs/501/export.md doctest tags=
# Shard the arg according to what `exp` expects.

# %% docs/new_docs/501/export.md doctest tags=
arg = jnp.arange(4 * len(export_devices))

# %% docs/new_docs/501/export.md doctest tags=
sharded_arg = jax.device_put(arg, exp.in_shardings_jax(calling_mesh)[0])

# %% docs/new_docs/501/export.md doctest tags=
res = exp.call(sharded_arg)

# %% docs/new_docs/501/export.md doctest tags=
import jax

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
from jax.sharding import Mesh, NamedSharding

# %% docs/new_docs/501/export.md doctest tags=
from jax.sharding import PartitionSpec as P

# %% docs/new_docs/501/export.md doctest tags=
def f(x):
  return jnp.cos(x)

# %% docs/new_docs/501/export.md doctest tags=
arg = jnp.arange(4)

# %% docs/new_docs/501/export.md doctest tags=
exp = export.export(jax.jit(f))(arg)

# %% docs/new_docs/501/export.md doctest tags=
exp.in_avals

# %% docs/new_docs/501/export.md doctest tags=
exp.nr_devices

# %% docs/new_docs/501/export.md doctest tags=
# Prepare the mesh for calling `exp`.

# %% docs/new_docs/501/export.md doctest tags=
calling_mesh = Mesh(jax.local_devices()[:4], ("b",))

# %% docs/new_docs/501/export.md doctest tags=
# Shard the arg according to what `exp` expects.

# %% docs/new_docs/501/export.md doctest tags=
sharded_arg = jax.device_put(arg,
                             NamedSharding(calling_mesh, P("b")))

# %% docs/new_docs/501/export.md doctest tags=
res = exp.call(sharded_arg)

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
exp: export.Exported = export.export(jnp.cos)(1.)

# %% docs/new_docs/501/export.md doctest tags=
exp.calling_convention_version

# %% docs/new_docs/501/export.md doctest tags=
from jax import export

# %% docs/new_docs/501/export.md doctest tags=
(export.minimum_supported_calling_convention_version, export.maximum_supported_calling_convention_version)

# %% docs/new_docs/501/export.md doctest tags=
from jax._src import config

# %% docs/new_docs/501/export.md doctest tags=
with config.jax_export_calling_convention_version(10):
 exp = export.export(jnp.cos)(1.)
 exp.calling_convention_version

# %% docs/new_docs/501/export.md python tags=
from jax._src import config
from jax._src.lib import version as jaxlib_version

def my_lowering_rule(ctx: LoweringRuleContext, ...):
  if ctx.is_forward_compat() or jaxlib_version < (0, 4, 31):
    # this is the old lowering, using target T, while we
    # are in forward compatibility mode for T, or we
    # are in OSS and are using an old jaxlib.
    return hlo.custom_call("T", ...)
  else:
    # This is the new lowering, using target T_NEW, for
    # when we use a jaxlib with version `>= (0, 4, 31)`
    # (or when this is internal usage), and also we are
    # in JIT mode.
    return hlo.custom_call("T_NEW", ...)
