// RUN: mjax-opt %s --split-input-file --jaxpr-verify --verify-diagnostics
// Symbolic dimensions the verifier refuses: one error per chunk.

func.func @add_of_different_dimensions(%x: tensor<?xf32, "b">, %y: tensor<?xf32, "c">) -> tensor<?xf32, "b"> {
  // expected-error @+1 {{'jaxpr.add' op add got incompatible shapes for broadcasting: (b,), (c,)}}
  %0 = "jaxpr.add"(%x, %y) : (tensor<?xf32, "b">, tensor<?xf32, "c">) -> tensor<?xf32, "b">
  return %0 : tensor<?xf32, "b">
}

// -----

func.func @result_expression_differs(%x: tensor<?x4xf32, "b, 4">) -> tensor<?xf32, "b"> {
  // expected-error @+1 {{result 0 has type tensor<?xf32, "b">, but the operands give tensor<?xf32, "4*b">}}
  %0 = "jaxpr.reshape"(%x) {new_sizes = ["4*b"]} : (tensor<?x4xf32, "b, 4">) -> tensor<?xf32, "b">
  return %0 : tensor<?xf32, "b">
}

// -----

func.func @reshape_changes_the_size(%x: tensor<?x4xf32, "b, 4">) -> tensor<?xf32, "3*b"> {
  // expected-error @+1 {{reshape total size must be unchanged, got new_sizes (3*b,) (size 3*b) for shape (b, 4) (size 4*b)}}
  %0 = "jaxpr.reshape"(%x) {new_sizes = ["3*b"]} : (tensor<?x4xf32, "b, 4">) -> tensor<?xf32, "3*b">
  return %0 : tensor<?xf32, "3*b">
}

// -----

func.func @encoding_disagrees_with_the_shape(%x: tensor<?x4xf32, "b, 5">) -> tensor<?x4xf32, "b, 5"> {
  // expected-error @+1 {{the encoding's dimensions 'b, 5' do not match the shape}}
  %0 = "jaxpr.sin"(%x) : (tensor<?x4xf32, "b, 5">) -> tensor<?x4xf32, "b, 5">
  return %0 : tensor<?x4xf32, "b, 5">
}

// -----

func.func @bad_expression_in_a_shape(%x: tensor<?x4xf32, "b, 4">) -> tensor<?xf32, "4*b"> {
  // expected-error @+1 {{bad symbolic dimension in ('4*b)',)}}
  %0 = "jaxpr.reshape"(%x) {new_sizes = ["4*b)"]} : (tensor<?x4xf32, "b, 4">) -> tensor<?xf32, "4*b">
  return %0 : tensor<?xf32, "4*b">
}

// -----

func.func @dim_as_value_of_a_float_type() -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.dim_as_value' op}}
  %0 = "jaxpr.dim_as_value"() {dim = "b", dtype = f32} : () -> tensor<f32>
  return %0 : tensor<f32>
}
