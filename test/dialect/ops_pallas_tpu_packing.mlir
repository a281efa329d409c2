// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// pltpu.stochastic_round, pack_elementwise and unpack_elementwise round-trip
// (dialect/ops/pallas_tpu_packing.py).

// CHECK-LABEL: func.func private @stochastic_round
// CHECK:         "jaxpr.stochastic_round"(%{{.*}}, %{{.*}}) {target_dtype = bf16} : (tensor<8x128xf32>, tensor<8x128xui32>) -> tensor<8x128xbf16>
// CHECK:         "jaxpr.stochastic_round"(%{{.*}}, %{{.*}}) {target_dtype = f8E4M3B11FNUZ} : (tensor<8x128xf32>, tensor<8x128xui32>) -> tensor<8x128xf8E4M3B11FNUZ>
func.func private @stochastic_round(%x: tensor<8x128xf32>, %b: tensor<8x128xui32>) -> (tensor<8x128xbf16>, tensor<8x128xf8E4M3B11FNUZ>) {
  %0 = "jaxpr.stochastic_round"(%x, %b) {target_dtype = bf16} : (tensor<8x128xf32>, tensor<8x128xui32>) -> tensor<8x128xbf16>
  %1 = "jaxpr.stochastic_round"(%x, %b) {target_dtype = f8E4M3B11FNUZ} : (tensor<8x128xf32>, tensor<8x128xui32>) -> tensor<8x128xf8E4M3B11FNUZ>
  return %0, %1 : tensor<8x128xbf16>, tensor<8x128xf8E4M3B11FNUZ>
}

// -----

// CHECK-LABEL: func.func private @pack
// CHECK:         "jaxpr.pack_elementwise"(%{{.*}}, %{{.*}}) {packed_dtype = bf16} : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xui32>
// CHECK:         "jaxpr.pack_elementwise"(%{{.*}}, %{{.*}}) {packed_dtype = i4} : (tensor<8x128xi8>, tensor<8x128xi8>) -> tensor<8x128xui8>
func.func private @pack(%x: tensor<8x128xf32>, %y: tensor<8x128xi8>) -> (tensor<8x128xui32>, tensor<8x128xui8>) {
  %0 = "jaxpr.pack_elementwise"(%x, %x) {packed_dtype = bf16} : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xui32>
  %1 = "jaxpr.pack_elementwise"(%y, %y) {packed_dtype = i4} : (tensor<8x128xi8>, tensor<8x128xi8>) -> tensor<8x128xui8>
  return %0, %1 : tensor<8x128xui32>, tensor<8x128xui8>
}

// -----

// CHECK-LABEL: func.func private @unpack
// CHECK:         "jaxpr.unpack_elementwise"(%{{.*}}) {index = 3 : i64, packed_dtype = i8, unpacked_dtype = i32} : (tensor<8x128xui32>) -> tensor<8x128xi32>
// CHECK:         "jaxpr.unpack_elementwise"(%{{.*}}) {index = 1 : i64, packed_dtype = bf16, unpacked_dtype = f32} : (tensor<8x128xui32>) -> tensor<8x128xf32>
func.func private @unpack(%x: tensor<8x128xui32>) -> (tensor<8x128xi32>, tensor<8x128xf32>) {
  %0 = "jaxpr.unpack_elementwise"(%x) {index = 3, packed_dtype = i8, unpacked_dtype = i32} : (tensor<8x128xui32>) -> tensor<8x128xi32>
  %1 = "jaxpr.unpack_elementwise"(%x) {index = 1, packed_dtype = bf16, unpacked_dtype = f32} : (tensor<8x128xui32>) -> tensor<8x128xf32>
  return %0, %1 : tensor<8x128xi32>, tensor<8x128xf32>
}
