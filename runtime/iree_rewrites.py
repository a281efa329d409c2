"""StableHLO rewrites applied before IREE compiles a program, where IREE would otherwise
compute something other than what StableHLO (and XLA) specify, or fail to compile it.

    text = rewrite_for_iree(stablehlo_text)

- `stablehlo.sort` with `is_stable = true`: IREE's sort ignores the flag, so equal keys
  come out in any order (argsort, unique's first indices). The sort gets an iota operand
  (or reuses argsort's) and a comparator that breaks ties by it: less(a, b) = cmp(a, b)
  or (not cmp(b, a) and index(a) < index(b)), stable whatever algorithm runs it.
- `stablehlo.reverse` of unsigned integers fails in IREE's codegen: it reverses the
  same-width signless integers between two bitcasts.
- `stablehlo.reduce_window` of unsigned integers with padding (cumsum, cummax) fails too:
  the padding becomes an explicit `stablehlo.pad` with the init value, as the spec
  defines it, and the window op gets none.
- `stablehlo.scatter`: updates at out-of-range indices must be skipped, and IREE writes
  them out of bounds. Operands get a window of padding, invalid index vectors point into
  it, the results are sliced back. A scatter of zero updates (IREE's compiler crashes on
  it) is its operands. A scatter with batching dimensions (vmap of an indexed update),
  which IREE rejects, first becomes one without: each batching dimension is one more
  index component (an iota) and an inserted window dimension.
- `chlo.top_k`: JAX puts the lower index first among equal values, IREE's top_k does
  not: a descending sort with ties broken by index, then a slice.
- `stablehlo.while`: its results go behind an optimization barrier (IREE's stream
  partitioning made a partition consume its own output: 'circular dependency', igamma's
  two loops), and a body that passes one carry on as another (a fixed-point loop's
  x_prev, x -> x, f(x)), which fails IREE's stream conversion, gets a barrier over its
  arguments.
- `stablehlo.convert` from float to integer saturates in XLA (NaN -> 0, out of range ->
  the type's min/max); IREE gives INT_MIN: selects make XLA's results.
- `stablehlo.reduce` of a constant expression (an elementwise function of a splat, as
  gradients of broadcasts make): IREE reduces it to one element's value along the inner
  dimension. Constant inputs go behind an optimization barrier.
- `stablehlo.cbrt` of float64 has no IREE lowering: sign(x) * |x|^(1/3), refined by one
  Newton step (exact cubes come out exact), with 0, inf and nan passed through.
"""
from __future__ import annotations

import re

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from mjax.dialect import context


def rewrite_for_iree(text: str) -> str:
    if not any(key in text for key in ("is_stable = true", "ui", "cbrt", "scatter",
                                       "top_k", "stablehlo.while",
                                       "stablehlo.reduce")) and \
            not _FLOAT_TO_INT.search(text):
        return text
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        found = []

        def collect(op):
            if op.name in _REWRITES:
                found.append(op)
            return ir.WalkResult.ADVANCE
        module.operation.walk(collect)
        _CONSTANT_MEMO.clear()
        changed = [op for op in found if _REWRITES[op.name](op)]
        if not changed:
            return text
        return module.operation.get_asm(enable_debug_info=True)


# A float -> integer stablehlo.convert in the printed program.
_FLOAT_TO_INT = re.compile(r"stablehlo\.convert .*\(tensor<(?:[\d?]+x)*b?f\d+>\) -> "
                           r"tensor<(?:[\d?]+x)*u?i(?:[2-9]|\d\d)>")


def _unsigned(value) -> bool:
    element = ir.RankedTensorType(value.type).element_type
    return isinstance(element, ir.IntegerType) and element.is_unsigned


def _signless(value):
    t = ir.RankedTensorType(value.type)
    width = ir.IntegerType(t.element_type).width
    return ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(width))


def _reverse(op) -> bool:
    if not _unsigned(op.operands[0]):
        return False
    ip, loc = ir.InsertionPoint(op), op.location
    cast = stablehlo.BitcastConvertOp(_signless(op.operands[0]), op.operands[0],
                                      loc=loc, ip=ip)
    rev = stablehlo.ReverseOp(cast.result, op.attributes["dimensions"], loc=loc, ip=ip)
    back = stablehlo.BitcastConvertOp(op.results[0].type, rev.result, loc=loc, ip=ip)
    op.results[0].replace_all_uses_with(back.result)
    op.erase()
    return True


def _reduce_window(op) -> bool:
    n = len(op.operands) // 2
    inputs, inits = list(op.operands[:n]), list(op.operands[n:])
    if not any(_unsigned(v) for v in inputs):
        return False
    rank = ir.RankedTensorType(inputs[0].type).rank
    flat = ([int(x) for x in ir.DenseIntElementsAttr(op.attributes["padding"])]
            if "padding" in op.attributes else [])
    pads = [flat[2 * d:2 * d + 2] for d in range(rank)] if flat else [[0, 0]] * rank
    dilations = (list(ir.DenseI64ArrayAttr(op.attributes["base_dilations"]))
                 if "base_dilations" in op.attributes else [1] * rank)
    if all(p == [0, 0] for p in pads) and all(d == 1 for d in dilations):
        return False
    ip, loc = ir.InsertionPoint(op), op.location
    for k, (x, init) in enumerate(zip(inputs, inits)):
        padded = stablehlo.PadOp(x, init, [p[0] for p in pads], [p[1] for p in pads],
                                 [d - 1 for d in dilations], loc=loc, ip=ip)
        op.operands[k] = padded.result
    i64 = ir.IntegerType.get_signless(64)
    op.attributes["padding"] = ir.DenseElementsAttr.get_splat(
        ir.RankedTensorType.get([rank, 2], i64), ir.IntegerAttr.get(i64, 0))
    op.attributes["base_dilations"] = ir.DenseI64ArrayAttr.get([1] * rank)
    return True


def _is_stable(op) -> bool:
    attr = op.attributes["is_stable"] if "is_stable" in op.attributes else None
    return attr is not None and ir.BoolAttr(attr).value


def _stabilize(op) -> bool:
    """Replaces one stable sort by an index-tie-broken one; False where it cannot."""
    if not _is_stable(op):
        return False
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    if any(len(o.regions) for o in body):
        return False          # a comparator with regions of its own: left to IREE
    loc = op.location
    dim = ir.IntegerAttr(op.attributes["dimension"]).value
    n = len(op.operands)
    ip = ir.InsertionPoint(op)
    operands = list(op.operands)
    # An operand that already is an iota along the sort dimension (argsort's) serves as
    # the index: a second, identical iota would be merged with it by IREE, and a sort
    # whose operands alias is rejected.
    index = next((k for k, v in enumerate(operands) if _is_iota_along(v, dim)), None)
    if index is None:
        shape = ir.RankedTensorType(operands[0].type).shape
        i32 = ir.IntegerType.get_signless(32)
        iota = stablehlo.IotaOp(ir.RankedTensorType.get(shape, i32), dim, loc=loc, ip=ip)
        operands.append(iota.result)
        index = n
    # (Behind a barrier, as in _top_k: IREE turns a sort with a bare iota operand into
    # its own top-k/argsort, which ignores the tie-break.)
    operands[index] = stablehlo.OptimizationBarrierOp([operands[index]], loc=loc,
                                                      ip=ip).results[0]
    new = stablehlo.SortOp([v.type for v in operands], operands, dimension=dim,
                           is_stable=False, loc=loc, ip=ip)
    arg_types = [ir.RankedTensorType.get([], ir.RankedTensorType(v.type).element_type)
                 for v in operands for _ in range(2)]
    cmp_block = new.regions[0].blocks.append(*arg_types)
    args = list(cmp_block.arguments)
    swapped = []
    for k in range(n):
        swapped += [args[2 * k + 1], args[2 * k]]
    index_type = ir.IntegerType(ir.RankedTensorType(operands[index].type).element_type)
    compare_type = "UNSIGNED" if index_type.is_unsigned else "SIGNED"
    with ir.InsertionPoint(cmp_block), loc:
        a_before_b = _inline(body, block.arguments, args[:2 * n])
        b_before_a = _inline(body, block.arguments, swapped)
        index_less = stablehlo.CompareOp(
            args[2 * index], args[2 * index + 1],
            stablehlo.ComparisonDirectionAttr.get("LT"),
            compare_type=stablehlo.ComparisonTypeAttr.get(compare_type)).result
        tie = stablehlo.AndOp(stablehlo.NotOp(b_before_a).result, index_less).result
        stablehlo.ReturnOp([stablehlo.OrOp(a_before_b, tie).result])
    for old, repl in zip(op.results, new.results):
        old.replace_all_uses_with(repl)
    op.erase()
    return True


def _is_iota_along(value, dim: int) -> bool:
    owner = value.owner
    if not isinstance(owner, ir.Operation):
        owner = getattr(owner, "operation", None)
    if owner is None or owner.name != "stablehlo.iota":
        return False
    element = ir.RankedTensorType(value.type).element_type
    return (isinstance(element, ir.IntegerType) and
            ir.IntegerAttr(owner.attributes["iota_dimension"]).value == dim)


def _inline(body, params, values):
    """Clones a comparator body at the insertion point with `params` bound to `values`;
    returns the value its `stablehlo.return` yields."""
    mapping = {p: v for p, v in zip(params, values)}
    for o in body:
        if o.name == "stablehlo.return":
            return mapping.get(o.operands[0], o.operands[0])
        clone = o.clone()
        for i, v in enumerate(clone.operands):
            if v in mapping:
                clone.operands[i] = mapping[v]
        for r_old, r_new in zip(o.results, clone.results):
            mapping[r_old] = r_new
    raise ValueError("sort comparator without stablehlo.return")


def _cbrt(op) -> bool:
    x = op.operands[0]
    t = ir.RankedTensorType(x.type)
    if not isinstance(t.element_type, ir.F64Type):
        return False
    with ir.InsertionPoint(op), op.location:
        def const(v):
            return stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(
                t, ir.FloatAttr.get(t.element_type, v))).result
        a = stablehlo.AbsOp(x).result
        y = stablehlo.PowOp(a, const(1.0 / 3.0)).result
        # y - (y^3 - a) / (3 y^2), as (2 y + a / y^2) / 3: no y^3 to underflow
        y2 = stablehlo.MulOp(y, y).result
        newton = stablehlo.AddOp(stablehlo.MulOp(const(2.0), y).result,
                                 stablehlo.DivOp(a, y2).result).result
        root = stablehlo.MulOp(stablehlo.SignOp(x).result,
                               stablehlo.DivOp(newton, const(3.0)).result).result
        direction = stablehlo.ComparisonDirectionAttr.get
        finite = stablehlo.IsFiniteOp(x).result
        nonzero = stablehlo.CompareOp(x, const(0.0), direction("NE")).result
        # (IREE's pow flushes subnormal inputs to 0: no Newton step from y = 0.)
        y_nonzero = stablehlo.CompareOp(y, const(0.0), direction("NE")).result
        keep = stablehlo.AndOp(stablehlo.AndOp(finite, nonzero).result, y_nonzero).result
        out = stablehlo.SelectOp(keep, root, x).result
    op.results[0].replace_all_uses_with(out)
    op.erase()
    return True


def _scatter(op) -> bool:
    """Scatter updates at out-of-range indices must be skipped; IREE writes them out of
    bounds (memory corruption). Operands are padded at the high end by a window, invalid
    index vectors are pointed into the padding, and the results are sliced back."""
    n = (len(op.operands) - 1) // 2
    inputs, indices = list(op.operands[:n]), op.operands[n]
    updates = list(op.operands[n + 1:])
    if any(0 in ir.RankedTensorType(u.type).shape for u in updates):
        # No updates (an empty index set, a False mask): the operands unchanged. IREE's
        # compiler crashes on a scatter of zero updates.
        for old, x in zip(op.results, inputs):
            old.replace_all_uses_with(x)
        op.erase()
        return True
    dn = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    if list(dn.input_batching_dims):
        op = _unbatched_scatter(op, dn)
        n = (len(op.operands) - 1) // 2
        inputs, indices = list(op.operands[:n]), op.operands[n]
        dn = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    shape = list(ir.RankedTensorType(inputs[0].type).shape)
    if 0 in shape:
        return False         # nothing to write into
    idx_type = ir.RankedTensorType(indices.type)
    idx_shape, idx_elem = list(idx_type.shape), idx_type.element_type
    if not isinstance(idx_elem, ir.IntegerType) or idx_elem.is_unsigned:
        return False
    upd_shape = list(ir.RankedTensorType(updates[0].type).shape)
    inserted = set(dn.inserted_window_dims)
    window = [1] * len(shape)
    for d, u in zip([d for d in range(len(shape)) if d not in inserted],
                    dn.update_window_dims):
        window[d] = upd_shape[u]
    dims = list(dn.scattered_dims_to_operand_dims)
    v = dn.index_vector_dim
    np_dtype = np.int64 if idx_elem.width == 64 else np.int32
    loc, ip = op.location, ir.InsertionPoint(op)
    with loc, ip:
        def const(array):
            array = np.ascontiguousarray(array)
            t = ir.RankedTensorType.get(list(array.shape), idx_elem)
            return stablehlo.ConstantOp(ir.DenseElementsAttr.get(array, type=t)).result
        direction = stablehlo.ComparisonDirectionAttr.get
        signed = stablehlo.ComparisonTypeAttr.get("SIGNED")
        comp_shape = list(idx_shape)
        if v < len(idx_shape):
            comp_shape[v] = 1
        valid = None
        for j, d in enumerate(dims):
            if v < len(idx_shape):
                start = [0] * len(idx_shape)
                limit = list(idx_shape)
                start[v], limit[v] = j, j + 1
                comp = stablehlo.SliceOp(indices, start, limit, [1] * len(idx_shape)).result
            else:
                comp = indices
            low = stablehlo.CompareOp(comp, const(np.zeros(comp_shape, np_dtype)),
                                      direction("GE"), compare_type=signed).result
            high = stablehlo.CompareOp(
                comp, const(np.full(comp_shape, shape[d] - window[d], np_dtype)),
                direction("LE"), compare_type=signed).result
            ok = stablehlo.AndOp(low, high).result
            valid = ok if valid is None else stablehlo.AndOp(valid, ok).result
        fill = np.zeros(idx_shape, np_dtype)
        for j, d in enumerate(dims):
            if v < len(idx_shape):
                fill[(slice(None),) * v + (j,)] = shape[d]
            else:
                fill[...] = shape[d]
        if v < len(idx_shape):
            bool_t = ir.RankedTensorType.get(idx_shape, ir.IntegerType.get_signless(1))
            valid = stablehlo.BroadcastInDimOp(bool_t, valid,
                                               list(range(len(idx_shape)))).result
        safe = stablehlo.SelectOp(valid, indices, const(fill)).result
        high_pad = [window[d] if d in dims else 0 for d in range(len(shape))]
        padded = []
        for x in inputs:
            # Any value fills the padding (it is sliced off): the operand's first
            # element, which every element type has.
            elem = ir.RankedTensorType(x.type).element_type
            first = stablehlo.SliceOp(x, [0] * len(shape), [1] * len(shape),
                                      [1] * len(shape)).result
            fill_value = stablehlo.ReshapeOp(ir.RankedTensorType.get([], elem),
                                             first).result
            padded.append(stablehlo.PadOp(x, fill_value, [0] * len(shape), high_pad,
                                          [0] * len(shape)).result)
        new = ir.Operation.create(
            "stablehlo.scatter", results=[v_.type for v_ in padded],
            operands=padded + [safe] + updates,
            attributes={name: op.attributes[name] for name in op.attributes}, regions=1)
        op.regions[0].blocks[0].append_to(new.regions[0])
        for old, res in zip(op.results, new.results):
            cut = stablehlo.SliceOp(res, [0] * len(shape), shape, [1] * len(shape)).result
            old.replace_all_uses_with(cut)
    op.erase()
    return True


def _unbatched_scatter(op, dn):
    """The same scatter without batching dimensions (IREE rejects them: vmap of an indexed
    update). Each batching dimension becomes one more index vector component, an iota
    along the indices' batching dimension, and an inserted window dimension. Returns the
    new op (the old one is erased)."""
    n = (len(op.operands) - 1) // 2
    indices = op.operands[n]
    idx_type = ir.RankedTensorType(indices.type)
    idx_shape, idx_elem = list(idx_type.shape), idx_type.element_type
    v = dn.index_vector_dim
    with op.location, ir.InsertionPoint(op):
        if v == len(idx_shape):      # (an implicit trailing index vector dimension of 1)
            idx_shape = idx_shape + [1]
            indices = stablehlo.ReshapeOp(ir.RankedTensorType.get(idx_shape, idx_elem),
                                          indices).result
        column_shape = idx_shape[:v] + [1] + idx_shape[v + 1:]
        column_type = ir.RankedTensorType.get(column_shape, idx_elem)
        columns = [indices] + [stablehlo.IotaOp(column_type, d).result
                               for d in dn.scatter_indices_batching_dims]
        idx_shape[v] += len(columns) - 1
        indices = stablehlo.ConcatenateOp(columns, v).result
        numbers = stablehlo.ScatterDimensionNumbers.get(
            update_window_dims=list(dn.update_window_dims),
            inserted_window_dims=sorted(list(dn.inserted_window_dims) +
                                        list(dn.input_batching_dims)),
            input_batching_dims=[], scatter_indices_batching_dims=[],
            scattered_dims_to_operand_dims=list(dn.scattered_dims_to_operand_dims) +
            list(dn.input_batching_dims),
            index_vector_dim=v)
        attributes = {name: op.attributes[name] for name in op.attributes}
        attributes["scatter_dimension_numbers"] = numbers
        # (the iota components may break a promise of sorted indices)
        attributes["indices_are_sorted"] = ir.BoolAttr.get(False)
        new = ir.Operation.create(
            "stablehlo.scatter", results=[r.type for r in op.results],
            operands=list(op.operands[:n]) + [indices] + list(op.operands[n + 1:]),
            attributes=attributes, regions=1)
        op.regions[0].blocks[0].append_to(new.regions[0])
    for old, res in zip(op.results, new.results):
        old.replace_all_uses_with(res)
    op.erase()
    return new


def _top_k(op) -> bool:
    """JAX's top_k puts the lower index first among equal values; IREE's does not. A
    sort (descending by total order, ties by index) and a slice give JAX's order."""
    x = op.operands[0]
    t = ir.RankedTensorType(x.type)
    shape, rank = list(t.shape), t.rank
    k = ir.IntegerAttr(op.attributes["k"]).value
    i32 = ir.IntegerType.get_signless(32)
    element = t.element_type
    if isinstance(element, ir.IntegerType):
        order = "UNSIGNED" if element.is_unsigned else "SIGNED"
    else:
        order = "TOTALORDER"
    with ir.InsertionPoint(op), op.location:
        iota = stablehlo.IotaOp(ir.RankedTensorType.get(shape, i32), rank - 1).result
        # (Behind a barrier: IREE turns a sort whose operand is a bare iota back into
        # its own top-k, which ignores the comparator's tie-break.)
        iota = stablehlo.OptimizationBarrierOp([iota]).results[0]
        sort = stablehlo.SortOp([x.type, iota.type], [x, iota], dimension=rank - 1,
                                is_stable=False)
        scalar = ir.RankedTensorType.get([], element)
        index = ir.RankedTensorType.get([], i32)
        block = sort.regions[0].blocks.append(scalar, scalar, index, index)
        a, b, ia, ib = block.arguments
        with ir.InsertionPoint(block):
            direction = stablehlo.ComparisonDirectionAttr.get
            kind = stablehlo.ComparisonTypeAttr.get
            greater = stablehlo.CompareOp(a, b, direction("GT"), compare_type=kind(order))
            equal = stablehlo.CompareOp(a, b, direction("EQ"), compare_type=kind(order))
            lower = stablehlo.CompareOp(ia, ib, direction("LT"), compare_type=kind("SIGNED"))
            tie = stablehlo.AndOp(equal.result, lower.result).result
            stablehlo.ReturnOp([stablehlo.OrOp(greater.result, tie).result])
        limit = shape[:-1] + [k]
        for old, res in zip(op.results, sort.results):
            cut = stablehlo.SliceOp(res, [0] * rank, limit, [1] * rank).result
            old.replace_all_uses_with(cut)
    op.erase()
    return True


def _convert(op) -> bool:
    """Float to integer conversion saturates in XLA (NaN -> 0, beyond the range -> the
    type's min/max); IREE gives INT_MIN for NaN and overflow. Selects make XLA's."""
    x = op.operands[0]
    t, out_t = ir.RankedTensorType(x.type), ir.RankedTensorType(op.results[0].type)
    src, dst = t.element_type, out_t.element_type
    if not isinstance(src, ir.FloatType) or not isinstance(dst, ir.IntegerType) or \
            dst.width == 1:
        return False
    width, unsigned = dst.width, dst.is_unsigned
    lo, hi = (0, 2 ** width) if unsigned else (-2 ** (width - 1), 2 ** (width - 1))
    raw = op.results[0]
    users = [(use.owner, use.operand_number) for use in raw.uses]
    with ir.InsertionPoint.after(op), op.location:
        def fconst(v):      # (2**31 in f16 is inf: then only inf saturates, as it should)
            return stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(
                t, ir.FloatAttr.get(src, float(v)))).result

        def iconst(v):
            return stablehlo.ConstantOp(ir.DenseElementsAttr.get_splat(
                out_t, ir.IntegerAttr.get(dst, v))).result
        direction = stablehlo.ComparisonDirectionAttr.get
        too_big = stablehlo.CompareOp(x, fconst(hi), direction("GE")).result
        too_small = stablehlo.CompareOp(x, fconst(lo), direction("LT")).result
        nan = stablehlo.CompareOp(x, x, direction("NE")).result
        out = stablehlo.SelectOp(too_small, iconst(lo), raw).result
        out = stablehlo.SelectOp(too_big, iconst(hi - 1), out).result
        out = stablehlo.SelectOp(nan, iconst(0), out).result
    for owner, k in users:
        owner.operands[k] = out
    return True


def _reduce(op) -> bool:
    """IREE reduces an elementwise function of a constant splat (sum(-ones((4, 4)), 1),
    a gradient's transpose of a broadcast) along the inner dimension to one element's
    value (-1, not -4). Constant inputs are put behind an optimization barrier, so IREE
    reduces a materialized tensor."""
    n = len(op.operands) // 2
    changed = False
    memo = _CONSTANT_MEMO
    for k in range(n):
        x = op.operands[k]
        if not _is_constant_expression(x, memo):
            continue
        barrier = stablehlo.OptimizationBarrierOp([x], loc=op.location,
                                                  ip=ir.InsertionPoint(op))
        op.operands[k] = barrier.results[0]
        changed = True
    return changed


# Verdicts of _is_constant_expression for the module being rewritten (cleared per module).
_CONSTANT_MEMO: dict = {}


def _is_constant_expression(value, memo: dict) -> bool:
    """Whether `value` is computed from constants only (no argument of any block, no
    op with regions). Iterative: programs can be thousands of ops deep."""
    def op_of(v):
        owner = v.owner
        if isinstance(owner, ir.Block):
            return None
        return owner.operation if hasattr(owner, "operation") else owner

    root = op_of(value)
    if root is None:
        return False
    stack = [root]
    while stack:
        o = stack[-1]
        if o in memo:
            stack.pop()
            continue
        if o.name == "stablehlo.optimization_barrier" or len(o.regions):
            memo[o] = False
            stack.pop()
            continue
        pending, verdict = [], True
        for v in o.operands:
            p = op_of(v)
            if p is None:
                verdict = False
                break
            if p not in memo:
                pending.append(p)
            elif not memo[p]:
                verdict = False
                break
        if verdict and pending:
            stack.extend(pending)
            continue
        memo[o] = verdict
        stack.pop()
    return memo[root]


def _while(op) -> bool:
    """Two IREE failures around loops. Results: with several loops, IREE's stream
    partitioning can make a partition that consumes its own output ('circular
    dependency', igamma's two loops); a barrier over the loop's results keeps the loop's
    consumers out of its partition. Body: a body that passes one carry on as another
    (x_prev, x -> x, f(x)) fails IREE's stream conversion (after IREE rotates the loop, a
    carry is left unused); a barrier over the body's arguments keeps the rotation from
    seeing it."""
    results = [r for r in op.results if len(list(r.uses))]
    if results:
        barrier = stablehlo.OptimizationBarrierOp(results, loc=op.location,
                                                  ip=ir.InsertionPoint.after(op))
        for r, new in zip(results, barrier.results):
            r.replace_all_uses_except(new, barrier.operation)
    _barrier_shifted_carries(op)
    return bool(results)


def _barrier_shifted_carries(op) -> None:
    block = op.regions[1].blocks[0]
    args = list(block.arguments)
    ret = list(block.operations)[-1]
    shifted = False
    for k, v in enumerate(ret.operands):
        arg = v.maybe_downcast()
        if isinstance(arg, ir.BlockArgument):
            shifted |= arg.owner == block and arg.arg_number != k
    if not shifted:
        return
    # One barrier at the end of the body over every argument and every returned value,
    # which the body returns through it. (A barrier at the start of the body, over the
    # arguments, was miscompiled by IREE: a Fibonacci scan ran one step short.)
    values = list(args)
    for v in ret.operands:
        if v not in values:
            values.append(v)
    barrier = stablehlo.OptimizationBarrierOp(values, loc=op.location,
                                              ip=ir.InsertionPoint(ret))
    for k, v in enumerate(list(ret.operands)):
        ret.operands[k] = barrier.results[values.index(v)]


_REWRITES = {"stablehlo.sort": _stabilize, "stablehlo.reverse": _reverse,
             "stablehlo.reduce_window": _reduce_window, "stablehlo.cbrt": _cbrt,
             "stablehlo.scatter": _scatter, "chlo.top_k": _top_k,
             "stablehlo.while": _while, "stablehlo.convert": _convert,
             "stablehlo.reduce": _reduce}

__all__ = ["rewrite_for_iree"]
