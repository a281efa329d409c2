// RUN: mjax-opt %s | mjax-opt | filecheck %s
// RUN: mjax-opt %s --jaxpr-to-stablehlo | filecheck %s --check-prefix=LOWER

// checkpoint_name names a value for remat policies; it is an identity.
// CHECK-LABEL: func.func @named
// CHECK:         "jaxpr.checkpoint_name"(%{{.*}}) {name = "h"} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:         "jaxpr.checkpoint"(%{{.*}}) {callee = @g, names = ["h"], policy = "save_only_these_names"}
// LOWER-LABEL: func.func @named
// LOWER-NOT:     checkpoint_name
// LOWER:         return %arg0
func.func @named(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.checkpoint_name"(%x) {name = "h"} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.checkpoint_name"(%x) {name = "h"} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @uses_policy(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.checkpoint"(%x) {callee = @g, policy = "save_only_these_names", names = ["h"]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
