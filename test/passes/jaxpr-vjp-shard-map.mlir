// RUN: mjax-opt %s --jaxpr-vjp | filecheck %s
// RUN: mjax-opt %s --jaxpr-expand-transforms --jaxpr-inline | filecheck %s --check-prefix=EXPANDED
// Reverse mode keeps a shard_map a shard_map (passes/shard_map_ad.py): the forward part
// runs one over the linearized body's forward part (its residual cos(x), varying along
// x only, comes out split along x, before the result), the backward part one over the
// transposed linear part. y is reduced over by a psum in the body and left unnamed by
// the specs: along it the transposition is the one without check_vma (the cotangent
// divided by 2, the operand's cotangent psum'd over y).

// The whole expansion then expands the shard_maps differentiation kept.
// EXPANDED-LABEL: func.func @vjp_shard_map
// EXPANDED:         "jaxpr.cos"
// EXPANDED:         "jaxpr.div"
// EXPANDED-NOT:     jaxpr.shard_map
// EXPANDED-NOT:     jaxpr.vmap

// CHECK-LABEL: func.func private @body_fwd_1
// CHECK:         %[[S:.*]] = "jaxpr.sin"(%arg0)
// CHECK:         %[[C:.*]] = "jaxpr.cos"(%arg0)
// CHECK:         %[[P:.*]] = "jaxpr.psum"(%[[S]]) {axes = ["y"]}
// CHECK:         return %[[C]], %[[P]]
// CHECK-LABEL: func.func private @body_lin_1_transpose
// CHECK-SAME:    (%[[CT:.*]]: tensor<2x6xf32>, %[[R:.*]]: tensor<2x6xf32>)
// CHECK:         %[[A:.*]] = "jaxpr.psum"(%[[CT]]) {axes = ["y"]}
// CHECK:         %[[M:.*]] = "jaxpr.mul"(%[[A]], %[[R]])
// CHECK:         %[[G:.*]] = "jaxpr.psum"(%[[M]]) {axes = ["y"]}
// CHECK:         return %[[G]]
// CHECK-LABEL: func.func private @f_fwd
// CHECK:         %[[F:.*]]:2 = "jaxpr.shard_map"(%arg0) {{.*}}callee = @body_fwd_1{{.*}}in_specs = {{\[\["x"\]\]}}{{.*}}out_specs = {{\[\["x"\], \["x"\]\]}}
// CHECK:         return %[[F]]#1, %[[F]]#0
// CHECK-LABEL: func.func private @f_bwd
// CHECK-SAME:    (%[[RES:.*]]: tensor<8x6xf32>, %[[CT:.*]]: tensor<8x6xf32>)
// CHECK:         %[[TWO:.*]] = "jaxpr.constant"() {value = dense<2.000000e+00>
// CHECK:         %[[D:.*]] = "jaxpr.div"(%[[CT]], %[[TWO]])
// CHECK:         %[[B:.*]] = "jaxpr.shard_map"(%[[D]], %[[RES]]) {{.*}}callee = @body_lin_1_transpose{{.*}}in_specs = {{\[\["x"\], \["x"\]\]}}{{.*}}out_specs = {{\[\["x"\]\]}}
// CHECK:         return %[[B]]
func.func private @body(%b: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %s = "jaxpr.sin"(%b) : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %p = "jaxpr.psum"(%s) {axes = ["y"]} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  return %p : tensor<2x6xf32>
}
func.func private @f(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %y = "jaxpr.shard_map"(%x) {callee = @body, mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, in_specs = [["x"]], out_specs = [["x"]], manual_axes = ["x", "y"], check_vma = true} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}
func.func @vjp_shard_map(%x: tensor<8x6xf32>, %ct: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %g = "jaxpr.vjp"(%x, %ct) {callee = @f} : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  return %g : tensor<8x6xf32>
}
