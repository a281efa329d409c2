"""`--stablehlo-host-callbacks`: number a lowered program's Python host callbacks 0..k-1
for the platform's call target, or (`target=send-recv`, a TPU) turn each into host
transfers.

    %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%x)
           {backend_config = {index = 7 : ui64}, ...}
  ==> (target=xla_ffi_python_gpu_callback)
    %0 = stablehlo.custom_call @xla_ffi_python_gpu_callback(%x)
           {backend_config = {index = 0 : ui64}, ...}

A lowered `jaxpr.callback` names its Python callable by its registry id (`index`); XLA
calls the k-th callable it is handed. After the pass, its `sites[k]` says what the k-th
call is (registry id, result avals, ordered; the channels of its transfers), from which
the frontend makes the callables: the pass knows no Python callable and no backend.
On host transfers each call becomes a send per operand and a recv per result (JAX:
callback._emit_tpu_python_callback). A call without operands sends a dummy f32[1], one
that gives only its token receives a dummy f32[] (so the program waits for it), and
empty results are constants (a TPU receives no empty array).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.types import ShapedArray, aval_of, tensor_type
from mjax.passes.registry import Pass, register_pass
from mjax.passes.rules.callbacks import CALL_TARGET

# The call target of platforms that call Python through host transfers (send/recv ops
# XLA hands to a callback object of the client), as JAX does on a TPU.
HOST_TRANSFERS = "send-recv"
_SEND_TO_HOST, _RECV_FROM_HOST = 2, 3     # StableHLO channel types


@dataclass(frozen=True)
class Transfers:
    """The host transfers one callback became: the avals sent (a dummy f32[1] where
    `real` is false) and received, and their channels."""
    sent: list
    received: list
    sends: list
    recvs: list
    real: bool          # the call's operands are what is sent
    dummy_out: bool     # an ordered call without results receives a dummy f32[]


@dataclass(frozen=True)
class HostCallSite:
    """The k-th host callback of a program: its registry id, result avals (the token
    aside), whether it is ordered (takes and gives a token first), and its transfers."""
    callback_id: int
    out_avals: list
    ordered: bool
    transfers: Transfers | None = None


def _callback_calls(module: ir.Module) -> list:
    calls = []

    def visit(op):
        if op.name == "stablehlo.custom_call" and ir.StringAttr(
                op.attributes["call_target_name"]).value == CALL_TARGET:
            calls.append(op)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return calls


def number_host_callbacks(module: ir.Module, target: str, platform: str = "") -> list:
    """Rewrites the host callback calls of `module` for `target` (module docstring);
    returns their HostCallSites in order. An empty `target`: the platform (named in the
    error) has no way to call Python."""
    calls = _callback_calls(module)
    if calls and not target:
        raise NotImplementedError(
            f"host callbacks (pure_callback, io_callback, debug.print, ...) on the "
            f"'{platform}' platform: mjax has no way to call Python from its programs")
    u64 = ir.IntegerType.get_unsigned(64)
    channels = iter(range(1, 1 << 30))
    sites = []
    for k, op in enumerate(calls):
        cid = ir.IntegerAttr(ir.DictAttr(op.attributes["backend_config"])["index"]).value
        types = [r.type for r in op.results]
        ordered = len(op.operands) > 0 and hlo.TokenType.isinstance(op.operands[0].type)
        site = HostCallSite(cid, [aval_of(t) for t in types[ordered:]], ordered)
        if target == HOST_TRANSFERS:
            site = dataclasses.replace(site, transfers=_as_host_transfers(op, site, channels))
        else:
            op.attributes["backend_config"] = ir.DictAttr.get(
                {"index": ir.IntegerAttr.get(u64, k)})
            if target != CALL_TARGET:
                op.attributes["call_target_name"] = ir.StringAttr.get(target)
        sites.append(site)
    return sites


def _transfer(op_class, types, operands, token, channel: int, kind: int):
    """A send (kind 2) or recv (kind 3) host transfer on `channel`, as XLA's PJRT
    rendezvous handler expects it."""
    handle = ir.Attribute.parse(f"#stablehlo.channel_handle<handle = {channel}, "
                                f"type = {kind}>")
    args = (operands, token, handle) if op_class is hlo.SendOp else (types, token, handle)
    op = op_class(*args, is_host_transfer=ir.BoolAttr.get(True))
    op.operation.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get({
        "_xla_host_transfer_handler_name": ir.StringAttr.get("pjrt_rendezvous"),
        "_xla_host_transfer_rendezvous": ir.StringAttr.get(str(channel))})
    return op


def _as_host_transfers(op: ir.Operation, site: HostCallSite, channels) -> Transfers:
    """Replaces one callback call with a send per operand and a recv per result."""
    with ir.InsertionPoint(op), op.location:
        operands = list(op.operands)
        token = operands.pop(0) if site.ordered else hlo.create_token()
        sent = [aval_of(v.type) for v in operands]
        real = bool(operands)
        if not real:
            operands = [hlo.constant(ir.DenseElementsAttr.get(np.zeros(1, np.float32)))]
            sent = [ShapedArray((1,), np.dtype(np.float32))]
        sends = []
        for v in operands:
            sends.append(next(channels))
            token = _transfer(hlo.SendOp, None, [v], token, sends[-1], _SEND_TO_HOST).result
        wanted = [a for a in site.out_avals if 0 not in a.shape]
        dummy_out = site.ordered and not wanted
        if dummy_out:
            wanted = [ShapedArray((), np.dtype(np.float32))]
        recvs, received = [], []
        token_type = hlo.TokenType.get()
        for a in wanted:
            recvs.append(next(channels))
            recv = _transfer(hlo.RecvOp, [tensor_type(a), token_type], None, token,
                             recvs[-1], _RECV_FROM_HOST)
            received.append(recv.results[0])
            token = recv.results[1]
        got = iter(received)
        values = [hlo.constant(ir.DenseElementsAttr.get(np.zeros(a.shape, a.dtype)))
                  if 0 in a.shape else next(got) for a in site.out_avals]
    results = ([token] if site.ordered else []) + values
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()
    return Transfers(sent, wanted, sends, recvs, real, dummy_out)


@register_pass("stablehlo-host-callbacks")
@dataclass
class StablehloHostCallbacksPass(Pass):
    """Numbers host callback calls for a platform's call target, or makes them host transfers."""

    point = "after-lowering"
    target: str = CALL_TARGET    # a custom call target, `send-recv`, or "" (none)
    platform: str = ""           # named in the error when there is no target

    def run(self, module: ir.Module) -> None:
        self.sites = number_host_callbacks(module, self.target, self.platform)

    def options(self) -> dict:
        return {"target": self.target, "platform": self.platform}


__all__ = ["HOST_TRANSFERS", "HostCallSite", "StablehloHostCallbacksPass", "Transfers",
           "number_host_callbacks"]
