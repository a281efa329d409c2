// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// CHECK-LABEL: func.func @check_with_payload
// CHECK:         "jaxpr.check"(%{{.*}}, %{{.*}}) {msg = "{} must be positive"} : (tensor<i1>, tensor<f32>) -> ()
// CHECK:         "jaxpr.check"(%{{.*}}) {debug = true, fmt = 7 : i64, msg = "no payload"} : (tensor<i1>) -> ()
func.func @check_with_payload(%x: tensor<f32>, %ok: tensor<i1>) -> tensor<f32> {
  "jaxpr.check"(%ok, %x) {msg = "{} must be positive"} : (tensor<i1>, tensor<f32>) -> ()
  "jaxpr.check"(%ok) {msg = "no payload", fmt = 7 : i64, debug = true} : (tensor<i1>) -> ()
  return %x : tensor<f32>
}

// -----

func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @checkify_two_slots
// CHECK:         "jaxpr.checkify"(%{{.*}}) {callee = @f, error_payloads = {{\[\[\], \["tensor<3xi32>"\]\]}}, errors = ["nan", "index"]}
// CHECK-SAME:      : (tensor<3xf32>) -> (tensor<i1>, tensor<i32>, tensor<i1>, tensor<i32>, tensor<3xi32>, tensor<3xf32>)
func.func @checkify_two_slots(%x: tensor<3xf32>) -> tensor<3xf32> {
  %p0, %c0, %p1, %c1, %oob, %y = "jaxpr.checkify"(%x) {callee = @f, errors = ["nan", "index"], error_payloads = [[], ["tensor<3xi32>"]]} : (tensor<3xf32>) -> (tensor<i1>, tensor<i32>, tensor<i1>, tensor<i32>, tensor<3xi32>, tensor<3xf32>)
  return %y : tensor<3xf32>
}
