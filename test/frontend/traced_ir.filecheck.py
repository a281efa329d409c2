# The IR that tracing produces is text that mjax-opt transforms from the command line.
# RUN: %python %s | filecheck %s
# RUN: %python %s grad > %t.mlir
# RUN: mjax-opt %t.mlir --jaxpr-expand-transforms --jaxpr-inline --jaxpr-dce \
# RUN:   --jaxpr-to-stablehlo --canonicalize --cse --symbol-dce | filecheck %s --check-prefix=LOWERED
import sys

import mjax
import mjax.numpy as jnp


def loss(x):
    return jnp.sum(jnp.sin(x) ** 2)


def show(name, text):
    print(f"TEST: {name}")
    print(text)


if sys.argv[1:] == ["grad"]:
    print(mjax.jit(mjax.grad(loss)).trace(jnp.ones(3)).jaxpr.mlir)
    sys.exit()

# CHECK-LABEL: TEST: jit
# CHECK:         func.func @main(%[[X:.*]]: tensor<3xf32>) -> tensor<f32>
# CHECK:           %[[S:.*]] = "jaxpr.sin"(%[[X]])
# CHECK:           %[[P:.*]] = "jaxpr.integer_pow"(%[[S]]) {y = 2 : i64}
# CHECK:           %[[R:.*]] = "jaxpr.reduce_sum"(%[[P]]) {axes = array<i64: 0>}
# CHECK:           return %[[R]]
show("jit", mjax.jit(loss).trace(jnp.ones(3)).jaxpr.mlir)

# CHECK-LABEL: TEST: grad
# CHECK:         func.func @main(%[[X:.*]]: tensor<3xf32>) -> tensor<3xf32>
# CHECK:           %[[ONE:.*]] = "jaxpr.constant"() {value = dense<1.000000e+00> : tensor<f32>}
# CHECK:           %[[G:.*]] = "jaxpr.vjp"(%[[X]], %[[ONE]]) {callee = @[[F:loss_[0-9]+]]
# CHECK:           return %[[G]]
# CHECK:         func.func private @[[F]](
# CHECK:           "jaxpr.sin"
show("grad", mjax.jit(mjax.grad(loss)).trace(jnp.ones(3)).jaxpr.mlir)

# CHECK-LABEL: TEST: make_jaxpr
# CHECK:         { lambda ; a:f32[3]. let
# CHECK-NEXT:        b:f32[3] = sin a
# CHECK-NEXT:        c:f32[3] = integer_pow[y=2] b
# CHECK-NEXT:        d:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
# CHECK-NEXT:      in (d,) }
show("make_jaxpr", mjax.make_jaxpr(loss)(jnp.ones(3)))

# LOWERED-LABEL: func.func @main
# LOWERED-DAG:     stablehlo.sine
# LOWERED-DAG:     stablehlo.cosine
# LOWERED:         return
# LOWERED-NOT:     jaxpr.
