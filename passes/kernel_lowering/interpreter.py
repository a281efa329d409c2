"""The kernel lowering's block interpreter: a Pallas kernel's body lowered op by op
through a backend's RuleTable, on passes/interpreter.py's `interpret`.

    class KernelLowering(KernelInterpreter):      # passes/mosaic/kernel.py
        table, error = MOSAIC, MosaicLoweringError
        flag, backend, kernel = "jaxpr-pallas-to-mosaic", "Mosaic", "a Pallas TPU kernel"

A rule is `rule(kl, op, *operands, **params) -> [values]`, `kl` the backend's subclass.
The environment maps each jaxpr value to what the backend made of it (an MLIR value, a
lazy constant, a ref); rules of ops with regions lower their bodies with
`kl.lower_block`, calls with `kl.lower_function`. An op without a rule is an error naming
it at its line with its table's reason; a rule's own error (the backend's `error`, or a
TypeError, ValueError, KeyError or MLIRError from the builders) gets the op's location.
"""
from __future__ import annotations

import functools

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_d

from mjax.dialect.core import OPS
from mjax.dialect.symbols import module_body, symbol_name
from mjax.passes.interpreter import Env, Rule, interpret
from mjax.passes.kernel_lowering.types import op_params
from mjax.passes.registry import PassError, op_error
from mjax.passes.rules.tables import RuleTable


class KernelInterpreter:
    """Lowers one kernel's body through `table` (the `kl` every rule gets)."""

    table: RuleTable              # op class -> rule(kl, op, *operands, **params)
    error: type[Exception]        # what a rule raises for what the backend cannot express
    flag: str                     # the pass; every error starts with it
    backend: str                  # what the rules emit: "no <backend> lowering rule"
    kernel: str                   # what is lowered: "... in <kernel>"

    def __init__(self, module: ir.Module, grid: tuple):
        self.module, self.grid = module, tuple(grid)
        self.grid_indices: list[ir.Value] = []    # the program's index per grid dim

    def program_id(self, axis: int) -> ir.Value:
        if not 0 <= axis < len(self.grid_indices):
            raise self.error(f"program_id axis {axis} is out of range for a grid of rank "
                             f"{len(self.grid)}")
        return self.grid_indices[axis]

    def lower_block(self, block: ir.Block, args: list, skip=None) -> list:
        """Lowers `block` with its arguments bound to `args` at the current insertion
        point; returns the entries of its terminator's operands. `skip`: an op left out
        (a fori loop's index increment; its results read as None)."""
        rule_for = self.rule_for
        if skip is not None:
            def rule_for(op):
                return _no_results if op == skip else self.rule_for(op)
        return interpret(block, rule_for, Env(zip(block.arguments, args)))

    def lower_function(self, op: ir.Operation, callee: str, args: list) -> list:
        """Lowers function @callee's body inline on `args` (calls inside kernels)."""
        fn = find_func(self.module, callee)
        if fn is None:
            raise op_error(op, f"calls @{callee}, which the module does not define")
        return self.lower_block(fn.regions[0].blocks[0], args)

    def rule_for(self, op: ir.Operation) -> Rule:
        """The interpreter's rule for `op`: its table's rule, run with this lowering."""
        cls = OPS.get(op.name)
        rule = self.table.get(cls)
        if rule is None:
            why = self.table.reason(cls)
            raise KernelUnsupported(op, f"'{op.name}' op {self.flag}: no {self.backend} "
                                        f"lowering rule for '{op.name}' in {self.kernel}"
                                        + (f": {why}" if why else "")
                                        + " (interpret=True runs this kernel)")
        return functools.partial(self._apply, rule)

    def _apply(self, rule, op: ir.Operation, operands: list) -> list:
        try:
            with op.location:
                return rule(self, op, *operands, **op_params(op))
        except PassError:
            raise
        except self.error as e:
            raise KernelUnsupported(op, f"'{op.name}' op {self.flag}: {e}") from None
        except (TypeError, ValueError, KeyError, ir.MLIRError) as e:
            raise op_error(op, f"{self.flag}: {e}") from None


class KernelUnsupported(PassError, NotImplementedError):
    """A kernel uses an op or feature the backend's lowering lacks: a NotImplementedError,
    as JAX's Pallas lowerings raise ('Unimplemented primitive in Pallas TPU lowering')."""


def _no_results(op: ir.Operation, operands: list) -> list:
    return [None] * len(op.results)


def find_func(module: ir.Module, name: str):
    """The module's func.func @name (None if it has none)."""
    for op in module_body(module).operations:
        if isinstance(op, func_d.FuncOp) and symbol_name(op) == name:
            return op
    return None


def inline_call(kl, op, *args, callee, **params):
    """Rule of calls (nested jit, checkpoint, custom_jvp/vjp): the callee lowered inline.
    Kernels run forward only, so a custom rule's primal function is the code to run
    (JAX: pjit, remat and custom_jvp/vjp calls lower their primal function inline)."""
    return kl.lower_function(op, str(callee), list(args))


def pass_through(kl, op, x, **params):
    """Rule of annotations (remat names, sharding constraints, XLA metadata): they mean
    nothing inside one kernel program."""
    return [x]


__all__ = ["KernelInterpreter", "find_func", "inline_call", "pass_through"]
