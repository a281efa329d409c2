// RUN: mjax-opt %s --jaxpr-expand-transforms --jaxpr-to-stablehlo --split-input-file --verify-diagnostics
// One error per chunk, at the op at fault, from IR the lowering could once crash on.

// A branch operand renamed to a value defined later in the branch: the lowering clones
// the branch into stablehlo.case and erased the jaxpr.switch, leaving the clone a use
// of a destroyed value (mjax-opt died of SIGSEGV printing it). The verifier rejects it
// before any pass runs.
func.func @switch_use_before_def(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    // expected-error @+1 {{'jaxpr.sin' op operand #0 is used before its definition}}
    %1 = "jaxpr.sin"(%2) : (tensor<f32>) -> tensor<f32>
    %2 = "jaxpr.cos"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Under a transformation too: the vjp of @f clones its cond.
func.func private @f(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    // expected-error @+1 {{'jaxpr.mul' op operand #1 is used before its definition}}
    %1 = "jaxpr.mul"(%a, %2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %2 = "jaxpr.sin"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @cond_use_before_def_under_vjp(%i: tensor<i32>, %x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.vjp"(%i, %x, %ct) {callee = @f, diff_args = array<i64: 1>} : (tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A scan longer than the lowering's int32 counter can count.
func.func @scan_length_over_int32(%c: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.scan' op jaxpr-to-stablehlo: lowering failed: Python integer 4294967296 out of bounds for int32}}
  %0 = "jaxpr.scan"(%c) ({
  ^bb0(%a: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }) {length = 4294967296 : i64, num_consts = 0 : i64, num_carry = 1 : i64} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
