// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// A constraint becomes XLA's custom_call @Sharding with the tile assignment over the
// mesh's logical ids: rows over x (4 tiles), columns over y (2 tiles).
// CHECK-LABEL: func.func @sharding_constraint_tiled
// CHECK-SAME:    (%[[X:.*]]: tensor<8x6xf32>)
// CHECK:         %[[Y:.*]] = stablehlo.custom_call @Sharding(%[[X]]) {backend_config = "", mhlo.sharding = "{devices=[4,2]0,1,2,3,4,5,6,7}"}
// CHECK:         return %[[Y]]
// CHECK-NOT:     jaxpr.
func.func @sharding_constraint_tiled(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", "y"]} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

// Split over y only: the devices of one y column hold the same tile (replicated over x,
// the last tile dimension).
// CHECK-LABEL: func.func @sharding_constraint_partial
// CHECK:         stablehlo.custom_call @Sharding
// CHECK-SAME:    mhlo.sharding = "{devices=[2,1,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}"
func.func @sharding_constraint_partial(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["y", ""]} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

// Nothing split: replicated.
// CHECK-LABEL: func.func @sharding_constraint_replicated
// CHECK:         mhlo.sharding = "{replicated}"
func.func @sharding_constraint_replicated(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x"], mesh_shape = array<i64: 8>, spec = [""]} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// "?" (JAX's P.UNCONSTRAINED) leaves dimension 0 to XLA: listed in backend_config.
// CHECK-LABEL: func.func @sharding_constraint_unconstrained
// CHECK:         stablehlo.custom_call @Sharding
// CHECK-SAME:    backend_config = "unspecified_dims=[0]"
// CHECK-SAME:    mhlo.sharding = "{devices=[1,2,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}"
func.func @sharding_constraint_unconstrained(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["?", "y"]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
