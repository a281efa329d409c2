"""`--stablehlo-layout-modes`: write `mhlo.layout_mode` on a lowered @main's arguments and
results ("default", "auto" or a minor-to-major list such as "{0,1}"), as JAX's lowering
does for a jit given layouts.

    func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32>
  ==> (in-modes={0,1} out-modes=auto)
    func.func @main(%x: tensor<2x4xf32> {mhlo.layout_mode = "{0,1}"})
        -> (tensor<2x4xf32> {mhlo.layout_mode = "auto"})

A result that is XLA's LayoutConstraint custom call (`with_layout_constraint`) and has no
mode given is "auto", so XLA gives it the constraint's layout (as JAX does). Values past
the given modes (captured constants, refs) keep the default; a module whose modes are
all the default is left as it is.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from mjax.passes.ir_util import main_function
from mjax.passes.registry import Pass, register_pass


def constrained_results(main) -> list[int]:
    """The results of @main that are a `jaxpr.layout_constraint`'s or, lowered, XLA's
    LayoutConstraint custom call's."""
    ret = main.regions[0].blocks[0].operations[-1]
    out = []
    for i, v in enumerate(ret.operands):
        owner = v.owner
        name = getattr(owner, "name", None)
        if name == "jaxpr.layout_constraint" or (
                name == "stablehlo.custom_call" and ir.StringAttr(
                    owner.attributes["call_target_name"]).value == "LayoutConstraint"):
            out.append(i)
    return out


def set_layout_modes(module: ir.Module, in_modes, out_modes) -> None:
    """The pass's rewrite (module docstring)."""
    main = main_function(module)
    if main is None:
        return
    out_modes = list(out_modes)
    for i in constrained_results(main):
        out_modes += ["default"] * (i + 1 - len(out_modes))
        if out_modes[i] == "default":
            out_modes[i] = "auto"
    if all(m == "default" for m in list(in_modes) + out_modes):
        return
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    for attr, given, n in (("arg_attrs", in_modes, len(ftype.inputs)),
                           ("res_attrs", out_modes, len(ftype.results))):
        old = (list(ir.ArrayAttr(main.attributes[attr])) if attr in main.attributes
               else [ir.DictAttr.get({})] * n)
        new = []
        for k, d in enumerate(old):
            entries = {a.name: a.attr for a in ir.DictAttr(d)}
            if k < len(given) and given[k] != "default":
                entries["mhlo.layout_mode"] = ir.StringAttr.get(given[k])
            new.append(ir.DictAttr.get(entries))
        main.attributes[attr] = ir.ArrayAttr.get(new)


def _modes(value) -> tuple:
    """A modes option as a tuple: from the command line `default,{1,0},auto` (commas
    inside braces belong to a mode)."""
    if not isinstance(value, str):
        return tuple(value or ())
    modes, depth, cur = [], 0, ""
    for ch in value:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            modes.append(cur)
            cur = ""
        else:
            cur += ch
    return tuple(modes + [cur]) if value else ()


@register_pass("stablehlo-layout-modes")
@dataclass(frozen=True)
class StablehloLayoutModesPass(Pass):
    """Writes mhlo.layout_mode on @main's arguments and results."""

    point = "after-lowering"
    in_modes: tuple = ()     # per argument: default, auto or a minor-to-major list
    out_modes: tuple = ()    # per result

    def run(self, module: ir.Module) -> None:
        set_layout_modes(module, _modes(self.in_modes), _modes(self.out_modes))


__all__ = ["StablehloLayoutModesPass", "constrained_results", "set_layout_modes"]
