"""--jaxpr-propagate-shardings against Shardy's own `sdy-propagation-pipeline` on a corpus
of traced programs: the same argument shardings go in, and the shardings both give the
function's results and its unannotated arguments must agree (or differ for a listed
reason)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from jaxlib.mlir import ir, passmanager

import mjax.numpy as jnp
from mjax.jit.api import trace_function
from mjax.dialect import context
from mjax.dialect.types import ShapedArray
from mjax.tracing.lowering import PIPELINE, lower_to_stablehlo
from mjax.passes import run_pipeline
from mjax.passes.jaxpr_propagate_shardings import propagate_shardings, spec_text

MESH = (("x", "y"), (4, 2))
f32 = np.dtype(np.float32)


def _corpus():
    A = ShapedArray((8, 4), f32)
    W = ShapedArray((4, 6), f32)
    B = ShapedArray((6,), f32)
    H = ShapedArray((8, 6), f32)
    return [
        ("elementwise", lambda a, b: jnp.sin(a) * b + 1.0, [A, A], [("x", ""), None]),
        ("matmul_bias", lambda a, w, b: jnp.tanh(a @ w + b), [A, W, B],
         [("x", ""), ("", "y"), None]),
        ("sharded_contraction", lambda a, w: a @ w, [A, W], [("x", "y"), None]),
        ("transpose", lambda a: a.T * 2.0, [A], [("x", "y")]),
        ("row_sums", lambda h: jnp.sum(h, axis=1), [H], [("x", "y")]),
        ("reshape_split", lambda h: jnp.reshape(h, (4, 2, 6)), [H], [("x", "")]),
        ("backward_to_bias", lambda h, b: h - b, [H, B], [("x", "y"), None]),
        ("mlp_two_layers", lambda a, w, v: jnp.tanh(a @ w) @ v.T, [A, W, H],
         [("x", ""), ("", "y"), None]),
        ("reshape_merge", lambda h: jnp.reshape(h, (48,)) * 2.0, [H], [("x", "")]),
        ("concatenate", lambda a, b: jnp.concatenate([a, b], axis=1), [A, A],
         [("x", ""), None]),
        ("slice_rows", lambda h: h[:, 1:4] + 1.0, [H], [("x", "y")]),
        ("batched_matmul", lambda p, q: jnp.einsum("bij,bjk->bik", p, q),
         [ShapedArray((4, 8, 4), f32), ShapedArray((4, 4, 6), f32)], [("x", "", ""), None]),
        ("broadcast_outer", lambda b, c: b[:, None] * c[None, :], [B, ShapedArray((8,), f32)],
         [("y",), ("x",)]),
        # A whole training step: grad (expanded by --jaxpr-expand-transforms first, as jit
        # does) and SGD, batch split over x; then also the weights split over y.
        ("train_step_batch_split", _train_step, TRAIN, [None, None, None, ("x", ""),
                                                        ("x", "")]),
        ("train_step_2d", _train_step, TRAIN, [None, None, None, ("x", "y"), ("x", "")]),
        ("train_step_weights_split", _train_step, TRAIN, [("", "y"), ("y",), None,
                                                          ("x", ""), ("x", "")]),
    ]


def _train_step(w1, b1, w2, x, t):
    import mjax

    def loss(w1, b1, w2):
        return jnp.mean((jnp.tanh(x @ w1 + b1) @ w2 - t) ** 2)
    g1, gb, g2 = mjax.grad(loss, argnums=(0, 1, 2))(w1, b1, w2)
    return w1 - 0.1 * g1, b1 - 0.1 * gb, w2 - 0.1 * g2


TRAIN = [ShapedArray((4, 6), f32), ShapedArray((6,), f32), ShapedArray((6, 2), f32),
         ShapedArray((8, 4), f32), ShapedArray((8, 2), f32)]


CORPUS = _corpus()
# Programs whose propagated shardings differ from Shardy's, with the reason.
DIFFERENCES: dict[str, str] = {}


def _arg_attr(spec) -> str:
    entries = ", ".join(f'"{e}"' for e in spec)
    axes = ", ".join(f'"{a}"' for a in MESH[0])
    shape = ", ".join(map(str, MESH[1]))
    return (f"{{mesh_axes = [{axes}], mesh_shape = array<i64: {shape}>, "
            f"spec = [{entries}]}}")


def _sdy_attr(spec) -> str:
    dims = ", ".join("{" + ", ".join(f'"{a}"' for a in e.split(",") if a) + "}"
                     for e in spec)
    return f"#sdy.sharding<@mesh, [{dims}]>"


def _main(module):
    return next(op.operation for op in module.body.operations
                if op.operation.name == "func.func")


def _annotate(main, specs, name, attr):
    """Sets argument attribute `name` = attr(spec) on each annotated argument."""
    old = (list(ir.ArrayAttr(main.attributes["arg_attrs"])) if "arg_attrs" in main.attributes
           else [ir.DictAttr.get({})] * len(specs))
    new = []
    for a, spec in zip(old, specs):
        d = {n.name: n.attr for n in ir.DictAttr(a)}
        d.pop("mhlo.sharding", None)
        if spec is not None:
            d[name] = ir.Attribute.parse(attr(spec))
        new.append(ir.DictAttr.get(d))
    main.attributes["arg_attrs"] = ir.ArrayAttr.get(new)


def _ours(fn, avals, specs):
    traced = trace_function(fn, tuple(avals), {})
    with context():
        module = ir.Module.parse(str(traced.module))
        # The passes jit runs before propagation (transformations expanded, inlined).
        cut = [name for name, _ in PIPELINE].index("jaxpr-to-stablehlo")
        run_pipeline(module, PIPELINE[:cut])
        main = _main(module)
        _annotate(main, specs, "mjax.sharding", _arg_attr)
        propagate_shardings(module)
        ret = list(main.regions[0].blocks[0].operations)[-1]
        results = []
        for v in ret.operands:
            owner = v.owner
            owner = None if isinstance(owner, ir.Block) else owner.operation
            if owner is None or "mjax.sharding" not in owner.attributes:
                results.append(None)
                continue
            results.append(ir.StringAttr(ir.ArrayAttr(
                owner.attributes["mjax.sharding"])[ir.OpResult(v).result_number]).value)
        attrs = list(ir.ArrayAttr(main.attributes["arg_attrs"]))
        args = []
        for a, spec in zip(attrs, specs):
            d = ir.DictAttr(a)
            args.append(ir.StringAttr(d["mjax.sharding_propagated"]).value
                        if spec is None and "mjax.sharding_propagated" in d else None)
    return results, args


def _spec_of_sdy(attr) -> str | None:
    if attr is None:
        return None
    m = re.search(r"\[(.*)\]>", str(attr))
    dims = re.findall(r"\{([^{}]*)\}", m.group(1))
    return spec_text(tuple(tuple(a.strip().strip('"') for a in d.split(",") if a.strip())
                           for d in dims))


def _shardy(fn, avals, specs):
    traced = trace_function(fn, tuple(avals), {})
    text = lower_to_stablehlo(traced.module, out_avals=traced.out_avals).text
    with context():
        module = ir.Module.parse(text)
        mesh = ir.Module.parse('module { sdy.mesh @mesh = <["x"=4, "y"=2]> }')
        first = list(module.body.operations)[0]
        list(mesh.body.operations)[0].operation.move_before(first)
        main = _main(module)
        _annotate(main, specs, "sdy.sharding", _sdy_attr)
        passmanager.PassManager.parse("builtin.module(sdy-propagation-pipeline)").run(
            module.operation)
        main = _main(module)
        n_results = len(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"])
                                        .value).results)
        res_attrs = (list(ir.ArrayAttr(main.attributes["res_attrs"]))
                     if "res_attrs" in main.attributes else [ir.DictAttr.get({})] * n_results)
        results = [_spec_of_sdy(ir.DictAttr(a)["sdy.sharding"])
                   if "sdy.sharding" in ir.DictAttr(a) else None for a in res_attrs]
        args = []
        for a, spec in zip(list(ir.ArrayAttr(main.attributes["arg_attrs"])), specs):
            d = ir.DictAttr(a)
            args.append(_spec_of_sdy(d["sdy.sharding"]) if spec is None and
                        "sdy.sharding" in d else None)
    return results, args


def _empty_as_none(xs):
    return [None if x is None or re.fullmatch(r"\[(\{\}(, )?)*\]", x) else x for x in xs]


@pytest.mark.parametrize("name,fn,avals,specs", CORPUS, ids=[c[0] for c in CORPUS])
def test_same_shardings_as_shardy(name, fn, avals, specs):
    specs = [None if s is None else tuple(s) for s in specs]
    ours_res, ours_args = _ours(fn, avals, specs)
    sdy_res, sdy_args = _shardy(fn, avals, specs)
    if name in DIFFERENCES:
        pytest.skip(DIFFERENCES[name])
    assert _empty_as_none(ours_res) == _empty_as_none(sdy_res), (ours_res, sdy_res)
    assert _empty_as_none(ours_args) == _empty_as_none(sdy_args), (ours_args, sdy_args)
