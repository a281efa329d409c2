// RUN: mjax-opt %s --split-input-file --verify-diagnostics
// RUN: mjax-opt %s --split-input-file --verify-diagnostics --jaxpr-expand-transforms --jaxpr-to-stablehlo
// RUN: mjax-opt %s --split-input-file --verify-diagnostics --no-verify-each --jaxpr-inline --jaxpr-dce --jaxpr-cse
// One structural error per chunk: what MLIR's verifier cannot see in jaxpr ops (they are
// unregistered, so MLIR treats their regions as graph regions). The input is verified
// before any pass runs, whatever the passes asked for.

func.func @function_without_return(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'func.func' op @function_without_return does not end with a return: its body ends with 'jaxpr.sin'}}
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
}

// -----

func.func @cond_use_before_def(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    // expected-error @+1 {{'jaxpr.sin' op operand #0 is used before its definition}}
    %1 = "jaxpr.sin"(%2) : (tensor<f32>) -> tensor<f32>
    %2 = "jaxpr.cos"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.neg"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @switch_yield_before_def(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.mul"(%a, %2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    // expected-error @-1 {{'jaxpr.mul' op operand #1 is used before its definition}}
    %2 = "jaxpr.neg"(%1) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%2) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @while_body_use_before_def(%x: tensor<f32>, %n: tensor<i32>) -> tensor<f32> {
  %r:2 = "jaxpr.while"(%x, %n) ({
  ^bb0(%c: tensor<f32>, %i: tensor<i32>):
    %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %p = "jaxpr.gt"(%i, %z) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "jaxpr.yield"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<f32>, %i: tensor<i32>):
    // expected-error @+1 {{'jaxpr.sub' op operand #1 is used before its definition}}
    %i2 = "jaxpr.sub"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    "jaxpr.yield"(%c, %i2) : (tensor<f32>, tensor<i32>) -> ()
  }) {cond_nconsts = 0 : i64, body_nconsts = 0 : i64} : (tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
  return %r#0 : tensor<f32>
}

// -----

func.func @cond_region_not_isolated(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %y = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    // expected-error @+1 {{'jaxpr.add' op operand #1 is defined outside the 'jaxpr.cond' region that uses it: regions of jaxpr ops are isolated from above}}
    %1 = "jaxpr.add"(%a, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @scan_region_uses_function_argument(%c: tensor<f32>, %xs: tensor<3xf32>) -> tensor<f32> {
  %0:2 = "jaxpr.scan"(%c, %xs) ({
  ^bb0(%carry: tensor<f32>, %x: tensor<f32>):
    // expected-error @+1 {{'jaxpr.yield' op operand #0 is defined outside the 'jaxpr.scan' region that uses it}}
    "jaxpr.yield"(%c, %x) : (tensor<f32>, tensor<f32>) -> ()
  }) {length = 3 : i64, num_consts = 0 : i64, num_carry = 1 : i64} : (tensor<f32>, tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
  return %0#0 : tensor<f32>
}

// -----

// A nested cond's region may not read its parent region's values either.
func.func @nested_region_not_isolated(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %i, %x) ({
  ^bb0(%j: tensor<i32>, %a: tensor<f32>):
    %1 = "jaxpr.cond"(%j, %a) ({
    ^bb0(%b: tensor<f32>):
      // expected-error @+1 {{'jaxpr.yield' op operand #0 is defined outside the 'jaxpr.cond' region that uses it}}
      "jaxpr.yield"(%a) : (tensor<f32>) -> ()
    }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @yield_not_last(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    // expected-error @+1 {{'jaxpr.yield' op must be the last op of its 'jaxpr.cond' region}}
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
    %1 = "jaxpr.sin"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.call"(%x) {callee = @g} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @g(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.jvp' op makes @f run itself (@f -> @g -> @f): jaxpr functions cannot recurse}}
  %0:2 = "jaxpr.jvp"(%x, %x) {callee = @f} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#1 : tensor<f32>
}
func.func @mutual_recursion(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.call"(%x) {callee = @f} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func private @declared(%x: tensor<f32>) -> tensor<f32>
func.func @callee_without_body(%x: tensor<f32>, %t: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.vjp' op runs @declared, a declaration without a body}}
  %0 = "jaxpr.vjp"(%x, %t) {callee = @declared} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
