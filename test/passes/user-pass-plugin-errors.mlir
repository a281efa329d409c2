// RUN: mjax-opt %s --load-pass-plugin=%S/plugins/break_dots.py --break-dots --verify-diagnostics
// RUN: not mjax-opt %s --load-pass-plugin=%S/plugins/syntax_error.py 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not mjax-opt %s --load-pass-plugin=%S/plugins/fails_on_load.py 2>&1 | filecheck %s --check-prefix=LOAD
// RUN: not mjax-opt %s --load-pass-plugin=%S/plugins/no_passes.py 2>&1 | filecheck %s --check-prefix=NONE
// RUN: not mjax-opt %s --load-pass-plugin=%S/plugins/missing.py 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not mjax-opt %s --load-pass-plugin=%S/plugins/fails_in_run.py --fails-in-run 2>&1 | filecheck %s --check-prefix=FAILS
// RUN: not mjax-opt %s --load-pass-plugin=%S/plugins/break_dots.py --load-pass-plugin=%S/plugins/break_dots.py --no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN

// SYNTAX: syntax_error.py:6:26: error: expected ':'
// LOAD: fails_on_load.py:4:1: error: KeyError: 'b'
// NONE: no_passes.py: error: the plugin registers no pass
// MISSING: missing.py: error: cannot load pass plugin: no such file
// FAILS: error: pass 'fails-in-run' failed at {{.*}}fails_in_run.py:9:1: KeyError: 'missing'
// UNKNOWN: mjax-opt: error: unknown pass 'no-such-pass'

func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  // expected-error @below {{IR invalid after --break-dots: 'jaxpr.dot_general' op has unknown attribute 'bogus'}}
  %0 = "jaxpr.dot_general"(%a, %b) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
