// RUN: mjax-opt %s --jaxpr-checkify --jaxpr-verify --split-input-file | filecheck %s

// A user check: failed = not ok; the slot keeps its first error (pred or failed, code
// 1 unless already set, payload = the checked value unless already set).
func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  %z = "jaxpr.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %ok = "jaxpr.gt"(%x, %z) : (tensor<f32>, tensor<f32>) -> tensor<i1>
  "jaxpr.check"(%ok, %x) {msg = "{} must be positive"} : (tensor<i1>, tensor<f32>) -> ()
  %y = "jaxpr.log"(%x) : (tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}
// CHECK-LABEL: func.func private @f_checkify
// CHECK-SAME:    (%[[P:.*]]: tensor<i1>, %[[C:.*]]: tensor<i32>, %[[V:.*]]: tensor<f32>, %[[X:.*]]: tensor<f32>)
// CHECK:         %[[OK:.*]] = "jaxpr.gt"(%[[X]]
// CHECK:         %[[BAD:.*]] = "jaxpr.not"(%[[OK]])
// CHECK:         %[[P2:.*]] = "jaxpr.or"(%[[P]], %[[BAD]])
// CHECK:         %[[ONE:.*]] = "jaxpr.constant"() {value = dense<1> : tensor<i32>}
// CHECK:         %[[C2:.*]] = "jaxpr.select_n"(%[[P]], %[[ONE]], %[[C]])
// CHECK:         %[[V2:.*]] = "jaxpr.select_n"(%[[P]], %[[X]], %[[V]])
// CHECK-NOT:     jaxpr.check"
// CHECK:         %[[Y:.*]] = "jaxpr.log"(%[[X]])
// CHECK:         return %[[P2]], %[[C2]], %[[V2]], %[[Y]]
// CHECK-LABEL: func.func @user_check
// CHECK:         %[[F:.*]] = "jaxpr.constant"() {value = dense<false> : tensor<i1>}
// CHECK:         %[[M:.*]] = "jaxpr.constant"() {value = dense<-1> : tensor<i32>}
// CHECK:         "jaxpr.call"(%[[F]], %[[M]], %{{.*}}, %{{.*}}) {callee = @f_checkify}
func.func @user_check(%x: tensor<f32>) -> (tensor<i1>, tensor<i32>, tensor<f32>, tensor<f32>) {
  %p, %c, %v, %y = "jaxpr.checkify"(%x) {callee = @f, errors = ["user"], error_payloads = [["tensor<f32>"]]} : (tensor<f32>) -> (tensor<i1>, tensor<i32>, tensor<f32>, tensor<f32>)
  return %p, %c, %v, %y : tensor<i1>, tensor<i32>, tensor<f32>, tensor<f32>
}

// -----

// NaN checks inside a cond branch and a called function: the state is an extra
// operand and result of the cond, and of the callee's checked copy.
func.func private @body(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.log"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @g(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %y = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    %s = "jaxpr.sin"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%s) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %c = "jaxpr.call"(%a) {callee = @body} : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%c) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}
// CHECK-LABEL: func.func private @body_checkify
// CHECK:         "jaxpr.log"
// CHECK:         "jaxpr.ne"
// CHECK:         {value = dense<2> : tensor<i32>}
// CHECK-LABEL: func.func private @g_checkify
// CHECK:         "jaxpr.cond"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) ({
// CHECK:           "jaxpr.sin"
// CHECK:           {value = dense<1> : tensor<i32>}
// CHECK:           "jaxpr.call"(%{{.*}}, %{{.*}}, %{{.*}}) {callee = @body_checkify}
// CHECK:         -> (tensor<i1>, tensor<i32>, tensor<f32>)
// CHECK-LABEL: func.func @nan_in_cond_and_call
// CHECK:         {callee = @g_checkify}
func.func @nan_in_cond_and_call(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %p, %c, %y = "jaxpr.checkify"(%i, %x) {callee = @g, errors = ["nan"], error_payloads = [[]]} : (tensor<i32>, tensor<f32>) -> (tensor<i1>, tensor<i32>, tensor<f32>)
  return %y : tensor<f32>
}

// -----

// Out-of-bounds dynamic_slice: payload int32[3] = (index, axis, axis size).
func.func private @h(%x: tensor<5xf32>, %i: tensor<i32>) -> tensor<1xf32> {
  %0 = "jaxpr.dynamic_slice"(%x, %i) {slice_sizes = array<i64: 1>} : (tensor<5xf32>, tensor<i32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}
// CHECK-LABEL: func.func private @h_checkify
// CHECK:         "jaxpr.dynamic_slice"
// CHECK:         "jaxpr.lt"
// CHECK:         "jaxpr.gt"
// CHECK:         "jaxpr.concatenate"{{.*}} -> tensor<3xi32>
// CHECK-LABEL: func.func @index_check
func.func @index_check(%x: tensor<5xf32>, %i: tensor<i32>) -> tensor<1xf32> {
  %p, %c, %v, %y = "jaxpr.checkify"(%x, %i) {callee = @h, errors = ["index", "nan"], error_payloads = [["tensor<3xi32>"]]} : (tensor<5xf32>, tensor<i32>) -> (tensor<i1>, tensor<i32>, tensor<3xi32>, tensor<1xf32>)
  return %y : tensor<1xf32>
}

// -----

// Disabled kinds: a user check under errors = ["div"] is dropped, and ops with no
// check inside are copied unchanged.
func.func private @k(%x: tensor<i1>, %y: tensor<f32>) -> tensor<f32> {
  "jaxpr.check"(%x) {msg = "dropped"} : (tensor<i1>) -> ()
  return %y : tensor<f32>
}
// CHECK-LABEL: func.func private @k_checkify
// CHECK-SAME:    (%{{.*}}: tensor<i1>, %[[Y:.*]]: tensor<f32>) -> tensor<f32>
// CHECK-NOT:     jaxpr.check"
// CHECK:         return %[[Y]]
// CHECK-LABEL: func.func @disabled_user_check
func.func @disabled_user_check(%x: tensor<i1>, %y: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.checkify"(%x, %y) {callee = @k, errors = ["div"], error_payloads = []} : (tensor<i1>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// while: the state is carried after the cond consts (the body gets them too, to check the
// condition after each step); scan: the state comes first among the carries.
func.func private @loop(%x: tensor<f32>, %n: tensor<i32>) -> tensor<f32> {
  %r:2 = "jaxpr.while"(%n, %x, %n) ({
  ^bb0(%lim: tensor<i32>, %c: tensor<f32>, %i: tensor<i32>):
    %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %p = "jaxpr.gt"(%i, %z) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "jaxpr.yield"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<f32>, %i: tensor<i32>):
    %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i2 = "jaxpr.sub"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %ok = "jaxpr.lt"(%c, %c) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "jaxpr.check"(%ok, %i) {msg = "step {}"} : (tensor<i1>, tensor<i32>) -> ()
    "jaxpr.yield"(%c, %i2) : (tensor<f32>, tensor<i32>) -> ()
  }) {cond_nconsts = 1 : i64, body_nconsts = 0 : i64} : (tensor<i32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
  %s:2 = "jaxpr.scan"(%r#0, %r#0) ({
  ^bb0(%k: tensor<f32>, %c: tensor<f32>):
    %y = "jaxpr.log"(%c) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%y, %k) : (tensor<f32>, tensor<f32>) -> ()
  }) {length = 3 : i64, num_consts = 1 : i64, num_carry = 1 : i64} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<3xf32>)
  return %s#0 : tensor<f32>
}
// CHECK-LABEL: func.func private @loop_checkify
// CHECK-SAME:    %[[X:[^:]*]]: tensor<f32>, %[[N:[^:]*]]: tensor<i32>) ->
// CHECK:         "jaxpr.while"(%[[N]], %[[N]], {{.*}}, %[[X]], %[[N]])
// CHECK:         ^bb0({{.*}}, %[[I:[^:]*]]: tensor<i32>):
// CHECK:           "jaxpr.gt"(%[[I]]
// CHECK:         ^bb0({{.*}}, %[[J:[^:]*]]: tensor<i32>):
// CHECK:           "jaxpr.sub"(%[[J]]
// CHECK:           "jaxpr.lt"
// CHECK:           "jaxpr.not"
// CHECK:         {body_nconsts = 1 : i64, cond_nconsts = 1 : i64}
// CHECK:         "jaxpr.scan"
// CHECK:           "jaxpr.log"
// CHECK:         num_carry = 6 : i64, num_consts = 1 : i64
// CHECK-LABEL: func.func @while_and_scan
func.func @while_and_scan(%x: tensor<f32>, %n: tensor<i32>) -> tensor<f32> {
  %p0, %c0, %p1, %c1, %v1, %y = "jaxpr.checkify"(%x, %n) {callee = @loop, errors = ["user", "nan"], error_payloads = [[], ["tensor<i32>"]]} : (tensor<f32>, tensor<i32>) -> (tensor<i1>, tensor<i32>, tensor<i1>, tensor<i32>, tensor<i32>, tensor<f32>)
  return %y : tensor<f32>
}

// -----

// custom_jvp_call keeps its rule: the state is passed through a lifted jvp rule.
func.func private @cf(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.log"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @cf_jvp(%x: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = "jaxpr.log"(%x) : (tensor<f32>) -> tensor<f32>
  return %0, %t : tensor<f32>, tensor<f32>
}
func.func private @g(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.custom_jvp_call"(%x) {callee = @cf, jvp = @cf_jvp} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
// CHECK-LABEL: func.func private @cf_jvp_checkify
// CHECK-SAME:    (%[[P:[^:]*]]: tensor<i1>, %[[C:[^:]*]]: tensor<i32>, %[[X:[^:]*]]: tensor<f32>, %[[T:[^:]*]]: tensor<f32>)
// CHECK:         %[[R:.*]]:2 = "jaxpr.call"(%[[X]], %[[T]]) {callee = @cf_jvp}
// CHECK:         return %[[P]], %[[C]], %[[R]]#0, %[[R]]#1
// CHECK-LABEL: func.func private @g_checkify
// CHECK:         "jaxpr.custom_jvp_call"(%{{.*}}, %{{.*}}, %{{.*}}) {callee = @cf_checkify, jvp = @cf_jvp_checkify}
// CHECK-LABEL: func.func @custom_jvp_call
func.func @custom_jvp_call(%x: tensor<f32>) -> tensor<f32> {
  %p, %c, %y = "jaxpr.checkify"(%x) {callee = @g, errors = ["nan"], error_payloads = [[]]} : (tensor<f32>) -> (tensor<i1>, tensor<i32>, tensor<f32>)
  return %y : tensor<f32>
}
