// RUN: mjax-opt %s --stablehlo-layout-modes="in-modes={0,1},auto out-modes=default" --split-input-file | filecheck %s

// The given modes go on @main's arguments; "default" writes nothing.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    mhlo.layout_mode = "{0,1}"
// CHECK-SAME:    mhlo.layout_mode = "auto"
// CHECK-SAME:    -> tensor<2x4xf32>
func.func @main(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.add %x, %y : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// A result that is XLA's LayoutConstraint custom call, with no mode given, is "auto".
// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<2x4xf32> {mhlo.layout_mode = "auto"})
func.func @main(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.custom_call @LayoutConstraint(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
