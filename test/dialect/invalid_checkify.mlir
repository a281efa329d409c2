// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics

func.func @check_c1_pred_scalar_bool(%x: tensor<2xi1>) {
  // expected-error @+1 {{predicate must be a scalar i1, got bool[2]}}
  "jaxpr.check"(%x) {msg = "bad"} : (tensor<2xi1>) -> ()
  return
}

// -----

func.func @check_c2_needs_msg(%x: tensor<i1>) {
  // expected-error @+1 {{requires attribute 'msg'}}
  "jaxpr.check"(%x) : (tensor<i1>) -> ()
  return
}

// -----

func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

func.func @checkify_c1_result_types(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{expects 4 results, got 3}}
  %p, %c, %y = "jaxpr.checkify"(%x) {callee = @f, errors = ["user"], error_payloads = [["tensor<f32>"]]} : (tensor<f32>) -> (tensor<i1>, tensor<i32>, tensor<f32>)
  return %y : tensor<f32>
}

// -----

func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

func.func @checkify_c2_unknown_error_kind(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{attribute 'errors'}}
  %y = "jaxpr.checkify"(%x) {callee = @f, errors = ["overflow"], error_payloads = []} : (tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

func.func @checkify_c3_payload_not_a_type(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{error_payloads entry 'bogus' is not a tensor type}}
  %p, %c, %y = "jaxpr.checkify"(%x) {callee = @f, errors = ["user"], error_payloads = [["bogus"]]} : (tensor<f32>) -> (tensor<i1>, tensor<i32>, tensor<f32>)
  return %y : tensor<f32>
}
