"""SPMD: one program over many devices. `jit` over a mesh (jit.py), `shard_map`,
`pmap`, global arrays built shard by shard, and the mesh context (`set_mesh`, axis
types). The sharding values themselves are in mjax.specs.sharding_impls (public:
mjax.sharding); `lax.with_sharding_constraint` / `reshard` are in mjax.lax.sharding."""
