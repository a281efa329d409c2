// RUN: mjax-opt %s --jaxpr-to-stablehlo="platform=cpu" --split-input-file | filecheck %s

// Lowered for the CPU, threefry's twenty rounds run as JAX's CPU rule runs them: a loop of
// five steps of four rounds, carrying the counters, the three key words (rotated a place
// each step; scalar keys stay scalars) and the two rotation tables (swapped each step).
// CHECK-LABEL: func.func @threefry2x32_rolled
// CHECK:         %[[K12:.*]] = stablehlo.xor %arg0, %arg1 : tensor<ui32>
// CHECK:         %[[K3:.*]] = stablehlo.xor %[[K12]], %{{.*}} : tensor<ui32>
// CHECK:         %[[A:.*]] = stablehlo.add %arg2, %{{.*}} : tensor<4xui32>
// CHECK:         %[[B:.*]] = stablehlo.add %arg3, %{{.*}} : tensor<4xui32>
// CHECK:         %[[R0:.*]] = stablehlo.constant dense<[13, 15, 26, 6]> : tensor<4xui32>
// CHECK:         %[[R1:.*]] = stablehlo.constant dense<[17, 29, 16, 24]> : tensor<4xui32>
// CHECK:         stablehlo.while(%[[I:.*]] = %{{.*}}, %{{.*}} = %[[A]], %{{.*}} = %[[B]], %[[KA:.*]] = %arg1, %[[KB:.*]] = %[[K3]], %[[KC:.*]] = %arg0, %[[RA:.*]] = %[[R0]], %[[RB:.*]] = %[[R1]])
// CHECK:           stablehlo.compare LT
// CHECK-COUNT-4:   stablehlo.shift_left
// CHECK-NOT:       stablehlo.shift_left
// CHECK:           stablehlo.return %{{.*}}, %{{.*}}, %{{.*}}, %[[KB]], %[[KC]], %[[KA]], %[[RB]], %[[RA]]
// CHECK-NOT:     stablehlo.shift_left
func.func @threefry2x32_rolled(%k1: tensor<ui32>, %k2: tensor<ui32>, %x1: tensor<4xui32>, %x2: tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>) {
  %0:2 = "jaxpr.threefry2x32"(%k1, %k2, %x1, %x2) : (tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>)
  return %0#0, %0#1 : tensor<4xui32>, tensor<4xui32>
}

// -----

// Key words of other shapes are broadcast to the counters' shape, all three alike.
// CHECK-LABEL: func.func @threefry2x32_rolled_key_shapes
// CHECK:         stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : tensor<i32>, tensor<2x3xui32>, tensor<2x3xui32>, tensor<2x3xui32>, tensor<2x3xui32>, tensor<2x3xui32>, tensor<4xui32>, tensor<4xui32>
func.func @threefry2x32_rolled_key_shapes(%k1: tensor<ui32>, %k2: tensor<2x3xui32>, %x1: tensor<2x3xui32>, %x2: tensor<ui32>) -> (tensor<2x3xui32>, tensor<2x3xui32>) {
  %0:2 = "jaxpr.threefry2x32"(%k1, %k2, %x1, %x2) : (tensor<ui32>, tensor<2x3xui32>, tensor<2x3xui32>, tensor<ui32>) -> (tensor<2x3xui32>, tensor<2x3xui32>)
  return %0#0, %0#1 : tensor<2x3xui32>, tensor<2x3xui32>
}
