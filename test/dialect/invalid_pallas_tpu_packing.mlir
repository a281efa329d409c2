// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics

func.func private @stochastic_round_bits(%x: tensor<8x128xf32>, %b: tensor<8x128xi32>) -> tensor<8x128xbf16> {
  // expected-error @+1 {{The dtype of `random_bits` must be uint32 for stochastic_round, but got int32}}
  %0 = "jaxpr.stochastic_round"(%x, %b) {target_dtype = bf16} : (tensor<8x128xf32>, tensor<8x128xi32>) -> tensor<8x128xbf16>
  return %0 : tensor<8x128xbf16>
}

// -----

func.func private @pack_count(%x: tensor<8x128xi32>) -> tensor<8x128xui32> {
  // expected-error @+1 {{The number of sources must match the packing factor (4), got 2}}
  %0 = "jaxpr.pack_elementwise"(%x, %x) {packed_dtype = i8} : (tensor<8x128xi32>, tensor<8x128xi32>) -> tensor<8x128xui32>
  return %0 : tensor<8x128xui32>
}

// -----

func.func private @unpack_index(%x: tensor<8x128xui32>) -> tensor<8x128xi32> {
  // expected-error @+1 {{Index 2 is out of bounds for packing factor 2}}
  %0 = "jaxpr.unpack_elementwise"(%x) {index = 2, packed_dtype = i16, unpacked_dtype = i32} : (tensor<8x128xui32>) -> tensor<8x128xi32>
  return %0 : tensor<8x128xi32>
}
