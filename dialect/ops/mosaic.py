"""`jaxpr.tpu_custom_call`: runs a hand-written Mosaic TPU kernel (JAX's
`jax.experimental.mosaic.as_tpu_kernel`).

    %y = "jaxpr.tpu_custom_call"(%x) {
           module = "module { func.func @main(%x: memref<8x128xf32, ...>, ...) ... }",
           result_shapes = [array<i64: 8, 128>], result_dtypes = [f32],
           kernel_name = "double", cost_estimate = {bytes_accessed = 8192, flops = 1024,
           transcendentals = 0}, vmem_limit_bytes = 1048576,
           flags = [["xla_tpu_flag", true]], input_output_aliases = array<i64: 0, 0>}
         : (tensor<8x128xf32>) -> tensor<8x128xf32>

`module` is the Mosaic module's text (jaxlib's `tpu`, `func`, `arith`, `vector`, `memref`
... dialects). The results are the declared `result_shapes`/`result_dtypes`. The other
attributes are as_tpu_kernel's parameters, each left out at its default (false,
"pure", none):
`cost_estimate` (integers, written as given), `vmem_limit_bytes`, `flags` ((name, value)
pairs in the user's order; a bool, integer or float each), `allow_input_fusion` (a bool
per operand), `input_output_aliases` (flat (operand, result) pairs),
`internal_scratch_in_bytes`, `collective_id`, `has_side_effects` (SIDE_EFFECTS),
`serialization_format`, `output_memory_spaces`/`input_memory_spaces` (MEMORY_SPACES
names, "" for none), `disable_bounds_checks`, `disable_semaphore_checks`,
`shape_invariant_numerics`, `needs_layout_passes`, `needs_hlo_passes`,
`kernel_metadata` (the metadata dictionary as compact JSON), `tiling` (TILINGS) and
`ir_version` (the serde version to write where the lowering asks for none).

`--jaxpr-pallas-to-mosaic` (a TPU's kernel pass) serializes the module with jaxlib's
`mosaic-serde` into the backend_config of a `stablehlo.custom_call @tpu_custom_call`, as
JAX's tpu_custom_call lowering does; no other platform can run it (its lowering rule
raises JAX's NotImplementedError). JAX: tpu_custom_call_p.
"""
from __future__ import annotations

from mjax.dialect import attributes as A
from mjax.dialect.core import InferError, JaxprOp
from mjax.dialect.ops.callbacks import _DTypes, result_avals

SIDE_EFFECTS = ("pure", "dataflow_side_effecting", "side_effecting")
# JAX's tpu_custom_call.MemorySpace, lower-cased ("" where a result has none)
MEMORY_SPACES = ("", "hbm", "vmem", "semaphore_mem", "smem", "host",
                 "sc_scalar_semaphore_mem")
TILINGS = ("TILING_COMPACT", "TILING_SPARSE_CORE")


class _Costs(A.AttrKind):
    expected = "a dictionary of integers"

    def accepts(self, v):
        return isinstance(v, dict) and all(isinstance(k, str) and A._is_int(x)
                                           for k, x in v.items())

    def normalize(self, v):
        return {k: int(x) for k, x in v.items()}


class _Flags(A.AttrKind):
    expected = "a sequence of (name, bool | integer | float) pairs"

    def accepts(self, v):
        return isinstance(v, (tuple, list)) and all(
            isinstance(p, (tuple, list)) and len(p) == 2 and isinstance(p[0], str)
            and isinstance(p[1], (bool, int, float)) for p in v)

    def normalize(self, v):
        return tuple((str(k), x) for k, x in v)


class _Bools(A.AttrKind):
    expected = "a sequence of booleans"

    def accepts(self, v):
        return isinstance(v, (tuple, list)) and all(isinstance(x, bool) for x in v)

    def normalize(self, v):
        return tuple(v)


class _Spaces(A.AttrKind):
    expected = "a sequence of memory spaces (" + ", ".join(repr(s) for s in MEMORY_SPACES) + ")"

    def accepts(self, v):
        return isinstance(v, (tuple, list)) and all(x in MEMORY_SPACES for x in v)

    def normalize(self, v):
        return tuple(v)


class TpuCustomCallOp(JaxprOp, name="tpu_custom_call"):
    """Runs the Mosaic kernel `module` on the operands; results have the declared
    `result_shapes`/`result_dtypes`. JAX: tpu_custom_call_p."""

    num_operands = None
    weak_type_inputs = None
    attributes = {
        "module": A.Str(),
        "result_shapes": A.Nested(default=None, depth=2),
        "result_dtypes": _DTypes(default=None),
        "kernel_name": A.Str(default=None),
        "cost_estimate": _Costs(default=None),
        "vmem_limit_bytes": A.Int(default=None),
        "flags": _Flags(default=None),
        "allow_input_fusion": _Bools(default=None),
        "input_output_aliases": A.Ints(default=()),
        "internal_scratch_in_bytes": A.Int(default=None),
        "collective_id": A.Int(default=None),
        "has_side_effects": A.Str(default=None, choices=SIDE_EFFECTS),
        "serialization_format": A.Int(default=None),
        "output_memory_spaces": _Spaces(default=None),
        "input_memory_spaces": _Spaces(default=None),
        "disable_bounds_checks": A.Bool(default=None),
        "disable_semaphore_checks": A.Bool(default=None),
        "shape_invariant_numerics": A.Bool(default=None),
        "needs_layout_passes": A.Bool(default=None),
        "needs_hlo_passes": A.Bool(default=None),
        "kernel_metadata": A.Str(default=None),
        "tiling": A.Str(default=None, choices=TILINGS),
        "ir_version": A.Int(default=None),
    }

    @property
    def pure(self) -> bool:
        """Whether DCE may remove it and CSE merge it (TpuSideEffectType.PURE)."""
        return self.params["has_side_effects"] in (None, "pure")

    @classmethod
    def infer(cls, *avals, result_shapes, result_dtypes, input_output_aliases,
              output_memory_spaces, **params):
        result_shapes, result_dtypes = result_shapes or (), result_dtypes or ()
        if len(result_shapes) != len(result_dtypes):
            raise InferError(f"has {len(result_shapes)} result_shapes but "
                             f"{len(result_dtypes)} result_dtypes")
        outs = result_avals(result_shapes, result_dtypes)
        pairs = tuple(input_output_aliases)
        if len(pairs) % 2:
            raise InferError(f"input_output_aliases {pairs} must hold (operand, result) "
                             f"pairs")
        for i, o in zip(pairs[0::2], pairs[1::2]):
            if not (0 <= i < len(avals) and 0 <= o < len(outs)):
                raise InferError(f"input_output_aliases pair ({i}, {o}) is out of range "
                                 f"for {len(avals)} operands and {len(outs)} results")
            if avals[i].strip_weak_type() != outs[o]:
                raise InferError(f"input_output_aliases pair ({i}, {o}): operand {i} is "
                                 f"{avals[i].str_short()} but result {o} is "
                                 f"{outs[o].str_short()}")
        if output_memory_spaces is not None and len(output_memory_spaces) != len(outs):
            raise InferError(f"has {len(output_memory_spaces)} output_memory_spaces for "
                             f"{len(outs)} results")
        return outs


__all__ = ["MEMORY_SPACES", "SIDE_EFFECTS", "TILINGS", "TpuCustomCallOp"]
