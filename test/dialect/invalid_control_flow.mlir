// RUN: mjax-opt %s --split-input-file --verify-diagnostics
// One verifier error per chunk: control-flow ops (region signatures, branch and carry
// types, xs lengths, terminators), at any nesting depth.

func.func @cond_branch_types_differ(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{jaxpr.cond branches must have equal output types, but branch 0 gives (f32[]) and branch 1 gives (i32[])}}
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.convert_element_type"(%a) {new_dtype = i32} : (tensor<f32>) -> tensor<i32>
    "jaxpr.yield"(%1) : (tensor<i32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cond_index_not_i32(%i: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{jaxpr.cond index must be an int32 scalar, got bool[]}}
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }) : (tensor<i1>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cond_branch_arguments_differ(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{jaxpr.cond branch 0 arguments have types (f32[], f32[]), expected (f32[])}}
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cond_result_type_wrong(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f64> {
  // expected-error @+1 {{result 0 has type tensor<f64>, but the operands give tensor<f32>}}
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f64>
  return %0 : tensor<f64>
}

// -----

func.func @while_body_changes_carry(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{jaxpr.while body carry input and output must have equal types, got input (f32[]) and output (f32[2])}}
  %0 = "jaxpr.while"(%x) ({
  ^bb0(%c: tensor<f32>):
    %1 = "jaxpr.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
    "jaxpr.yield"(%1) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<f32>):
    %1 = "jaxpr.broadcast_in_dim"(%c) {shape = array<i64: 2>, broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2xf32>
    "jaxpr.yield"(%1) : (tensor<2xf32>) -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @while_cond_not_bool(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{jaxpr.while cond region must yield a boolean scalar, got (f32[])}}
  %0 = "jaxpr.while"(%x) ({
  ^bb0(%c: tensor<f32>):
    "jaxpr.yield"(%c) : (tensor<f32>) -> ()
  }, {
  ^bb0(%c: tensor<f32>):
    "jaxpr.yield"(%c) : (tensor<f32>) -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @while_one_region(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{expects 2 regions, got 1}}
  %0 = "jaxpr.while"(%x) ({
  ^bb0(%c: tensor<f32>):
    "jaxpr.yield"(%c) : (tensor<f32>) -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @scan_xs_length_mismatch(%c0: tensor<f32>, %xs: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{jaxpr.scan xs operand 0 has type f32[3], whose leading axis does not match length 4}}
  %0 = "jaxpr.scan"(%c0, %xs) ({
  ^bb0(%c: tensor<f32>, %x: tensor<f32>):
    "jaxpr.yield"(%c) : (tensor<f32>) -> ()
  }) {length = 4 : i64, num_carry = 1 : i64} : (tensor<f32>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @scan_carry_changes_dtype(%c0: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{jaxpr.scan body carry input and output must have equal types, got input (f32[]) and output (i32[])}}
  %0 = "jaxpr.scan"(%c0) ({
  ^bb0(%c: tensor<f32>):
    %1 = "jaxpr.convert_element_type"(%c) {new_dtype = i32} : (tensor<f32>) -> tensor<i32>
    "jaxpr.yield"(%1) : (tensor<i32>) -> ()
  }) {length = 2 : i64, num_carry = 1 : i64} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @scan_body_without_yield(%c0: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{jaxpr.scan region must end with jaxpr.yield}}
  %0 = "jaxpr.scan"(%c0) ({
  ^bb0(%c: tensor<f32>):
    %1 = "jaxpr.neg"(%c) : (tensor<f32>) -> tensor<f32>
  }) {length = 2 : i64, num_carry = 1 : i64} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @nested_op_error_inside_body(%c0: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.scan"(%c0) ({
  ^bb0(%c: tensor<f32>):
    // expected-error @+1 {{'jaxpr.neg' op result 0 has type tensor<i32>, but the operands give tensor<f32>}}
    %1 = "jaxpr.neg"(%c) : (tensor<f32>) -> tensor<i32>
    "jaxpr.yield"(%c) : (tensor<f32>) -> ()
  }) {length = 2 : i64, num_carry = 1 : i64} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @yield_outside_region(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.yield' op expects its parent op to be jaxpr.cond, jaxpr.while or jaxpr.scan}}
  "jaxpr.yield"(%x) : (tensor<f32>) -> ()
  return %x : tensor<f32>
}

// -----

func.func @select_ref_cond_three_branches(%i: tensor<i32>) {
  // expected-error @+1 {{a jaxpr.cond with select_ref has two branches and no results}}
  "jaxpr.cond"(%i) ({
    "jaxpr.yield"() : () -> ()
  }, {
    "jaxpr.yield"() : () -> ()
  }, {
    "jaxpr.yield"() : () -> ()
  }) {select_ref = true} : (tensor<i32>) -> ()
  return
}
