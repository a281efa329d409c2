import importlib.util
import os
import re
import sys
import zlib

# Eight CPU devices for multi-device tests; must be set before jaxlib makes a client.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
# The suite runs on the CPU, as CI does, also on a machine with a TPU (where mjax and jax
# would pick the chip by themselves), unless MJAX_TEST_TPU=1 asks for the chip
# (docs/tpu.md: test/run_on_tpu.sh runs it there in chunks).
ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")
if not ON_TPU:
    # (only where an accelerator's plugin is installed: elsewhere JAX_PLATFORMS stays
    # unset, as users have it, and the tests of its default see JAX's)
    if os.environ.get("TPU_LIBRARY_PATH") or any(
            importlib.util.find_spec(m) for m in ("libtpu", "jax_plugins")):
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
else:
    # The suite checks values against NumPy at CPU tolerances: on the chip float32 matmuls
    # run at 'highest' precision (six passes of bf16, about float32's accuracy) in mjax
    # and in jax alike; tests of the default precision itself compare with jax there.
    os.environ.setdefault("JAX_DEFAULT_MATMUL_PRECISION", "highest")

import pytest  # noqa: E402

ON_IREE = os.environ.get("MJAX_BACKEND", "").lower().startswith("iree")

# On the IREE backend (MJAX_BACKEND=iree), three kinds of listed skips, each with its
# reason (docs/performance.md, "The test suite on IREE", has the counts):
#
# 1. Whole files that test what one IREE device cannot do: several devices and SPMD.
IREE_UNSUPPORTED_FILES = {
    "test_sharding.py": "multi-device: meshes of 8 devices, SPMD partitioning, pmap",
    "test_sharding_constraints.py": "multi-device: meshes of 8 devices, SPMD partitioning",
    "test_shard_map.py": "multi-device: shard_map over meshes of 8 devices",
    "test_distributed.py": "multi-process: jax.distributed over XLA's CPU client",
    "test_sharding_global_arrays.py": "multi-device: global arrays over meshes of 8 "
                                      "devices",
    "test_without_jax.py": "its programs (one module for every fixture) include linalg "
                           "(cholesky) and FFTs IREE cannot compile",
    "test_jit_fast_path.py": "checks the XLA client's cached-call fast path (Jitted._memo "
                             "and jaxlib's execute); IREE calls take the general path",
    "test_placement.py": "multi-device: computations placed on 8 CPU devices",
    "test_one_device_mesh.py": "multi-device: meshes of one device among 8 CPU devices",
    "test_hlo_parity.py": "compares XLA's optimized HLO with JAX's (IREE compiles no HLO)",
}

# 2. Constructs IREE cannot compile or run: a test that reaches one fails with this
#    backend's clear error; it is reported as a skip naming the construct. (Anything
#    before that point in the test has been checked; nothing after it is.)
IREE_UNSUPPORTED_CONSTRUCTS = {
    r"call target lapack_\w+": "LAPACK custom calls (linalg decompositions and solves)",
    r"`stablehlo\.cholesky`": "stablehlo.cholesky has no IREE lowering",
    r"`stablehlo\.triangular_solve`": "stablehlo.triangular_solve has no IREE lowering",
    r"`stablehlo\.fft`": "IREE lowers FFTs of power-of-two lengths only",
    r"`stablehlo\.select_and_scatter`": "stablehlo.select_and_scatter (max-pool "
                                        "gradients) has no IREE lowering",
    r"cannot call Python host callbacks": "host callbacks: IREE programs cannot call "
                                          "back into Python",
    r"Could not map dtype (int4|uint4|float8_e4m3b11fnuz)": "IREE's runtime has no "
                                                            "buffers of this dtype",
    r"Number of devices 1 must be >= the product of mesh_shape": "multi-device: a mesh "
                                                                  "of several devices",
    r"requires \d+ logical devices, but only 1": "multi-device: several devices",
    r"'iree_linalg_ext\.scatter' op expected indices": "some scatters with batching "
        "dimensions (vmap of dynamic_update_slice with a batched start, the gradient of a "
        "batched gather): IREE rejects their unbatched form too",
}

# On a TPU machine (MJAX_TEST_TPU=1: one chip) the files of many devices skip, and so does
# a test that asks for more devices than there are.
TPU_UNSUPPORTED_FILES = {
    name: reason.replace("8 CPU devices", "8 devices") + " (the TPU machine has one chip)"
    for name, reason in IREE_UNSUPPORTED_FILES.items() if reason.startswith("multi-")}
TPU_UNSUPPORTED_FILES["test_export_sharded.py"] = (
    "multi-device: exports for, and calls over, meshes of up to 8 devices (the TPU machine "
    "has one chip)")
TPU_UNSUPPORTED_FILES["test_axis_index_groups.py"] = (
    "multi-device: pmap over 4 devices (the TPU machine has one chip)")
TPU_UNSUPPORTED_CONSTRUCTS = {pattern: reason for pattern, reason
                              in IREE_UNSUPPORTED_CONSTRUCTS.items()
                              if reason.startswith("multi-device")}
TPU_UNSUPPORTED_CONSTRUCTS[r"While rewriting computation to not contain X\{64\|128\} element "
                           r"types, XLA encountered an HLO for which this rewriting is not "
                           r"implemented"] = (
    "XLA's TPU compiler has no 64-bit form of this op (x64 select_and_scatter: JAX's "
    "program fails there the same way)")

# 3. Single tests, each with why it cannot pass on IREE.
_ULP = ("IREE's float approximations of log/exp/erf_inv differ from XLA's by an ulp or "
        "two; the test compares samples with JAX's bit for bit")
IREE_UNSUPPORTED = {
    "test_spmd_multiprocess.py::test_data_parallel_step_over_two_processes":
        "multi-process: mjax.distributed over XLA's CPU client (IREE runs one process)",
    "test_jit.py::test_unsupported_jit_options_raise_not_implemented":
        "IREE has one device, so jit(device=devices()[-1]) is the supported default",
    # Several devices or XLA's CPU client.
    "test_array_api.py::test_namespace_info_matches_jax":
        "compares the device list with XLA's 8 CPU devices",
    "test_config.py::test_num_cpu_devices_before_and_after_backends":
        "jax_num_cpu_devices configures XLA's CPU client",
    "test_config.py::test_default_device_places_eager_and_jit_results": "needs 2 devices",
    "test_debug.py::test_visualize_array_sharding_single_device":
        "draws XLA CPU device ids",
    "test_named_scope.py::test_names_in_locations_and_compiled_metadata":
        "reads op_name metadata from XLA's optimized HLO (IREE has no HLO)",
    "test_donation.py::test_donated_buffer_is_reused_and_deleted":
        "IREE does not reuse a donated buffer's memory (the donated input is deleted)",
    "test_callbacks.py::test_exception_in_callback_is_logged":
        "host callbacks: IREE programs cannot call back into Python",
    "test_dtypes.py::test_arithmetic_on_narrow_types_matches_jax":
        "IREE's runtime has no int4/uint4/float8_e4m3b11fnuz buffers",
    # Results within an ulp or two of XLA's, where the test asks for JAX's exact bits.
    "test_random.py::test_sampler_bits_match_jax_eager": _ULP,
    "test_random.py::test_float_dtypes_grid": _ULP,
    "test_random.py::test_bits_64_and_float64_x64": _ULP,
    "test_stages.py::test_compile_runs_and_reports":
        "Compiled.as_text() is XLA's optimized HLO module; IREE has no HLO",
    # Implementation-defined orders, where the test asks for XLA's.
    "test_lax_reductions.py::test_reduce_window_with_custom_computations":
        "a non-associative window reduction (a * 0.9 + b): the order of application is "
        "unspecified and IREE's differs from XLA's",
    # IREE compiler or runtime failures (IREE 3.13), open.
    "test_control_flow_ad.py::test_grad_matches_jax[cond_in_scan_prog]":
        "IREE runtime error: 'indirect buffer reference slot 0 is out range' (cond in scan)",
    "test_control_flow_ad.py::test_jacobians_and_hessian_of_loops[cond_in_scan_prog]":
        "IREE runtime error: 'indirect buffer reference slot 0 is out range' (cond in scan)",
    "test_fft.py::test_one_dimensional":
        "IREE compiler crash in DispatchCreation on some power-of-two complex FFTs",
    "test_fft.py::test_complex_input_grad_matches_jax":
        "IREE compiler crash in DispatchCreation on some power-of-two complex FFTs",
    "test_numpy_ufuncs.py::test_ufunc_reduce_where_and_unary_at":
        "IREE compiler crash (segfault in GenericVectorization's linalg vectorizer) on "
        "negative.at's loop over repeated indices",
    "test_lax_convolution.py::test_conv_general_dilated_matches_jax[3d]":
        "IREE rejects this 3-d convolution ('linalg.generic' op inferred input/output "
        "operand shape)",
    "test_lax_convolution.py::test_conv_general_dilated_grads_match_jax[3d]":
        "IREE rejects this 3-d convolution ('linalg.generic' op inferred input/output "
        "operand shape)",
    **{f"test_sweep_lax.py::test_lax[{name}]":
       "IREE codegen error on the gradient of a reversed cumulative reduction "
       "('vector.contract' op invalid accumulator/result vector shape, or 'write "
       "affecting operations on global resources are restricted to workgroup "
       "distributed contexts')" for name in ("cummax_reverse", "cumlogsumexp_reverse")},
    "test_vmap.py::test_custom_vjp_under_vmap_keeps_unbatched_inputs_unbatched[False]":
        "IREE codegen error on the sum over the batch of an unbatched input's "
        "cotangents, fused with bwd's product ('vector.contract' op invalid "
        "accumulator/result vector shape; the jitted case compiles)",
    "test_checkify.py::test_matches_jax[grad_of_checkify]": _ULP,
    "test_checkify.py::test_matches_jax[nan_in_cond_in_scan]":
        "IREE runtime error: 'indirect buffer reference slot 0 is out range' (cond in scan)",
    "test_checkify.py::test_matches_jax[pmap_of_checkify]":
        "multi-device: pmap over several devices",
    "test_debug.py::test_breakpoint_reads_stdin_as_jax":
        "host callbacks: jax.debug.breakpoint calls back into Python",
    "test_sweep_scipy.py::test_minimize_bfgs":
        "IREE compiler crash in DialectConversion (applyPartialConversion) on BFGS's "
        "line-search loops",
    "test_sweep_nn.py::test_standardize[kw1]":
        "IREE codegen error on standardize's gradient over axis 0 ('vector.contract' op "
        "invalid accumulator/result vector shape)",
    "test_ad_ops.py::test_check_grads_every_op_order2_batched[1]":
        "second derivative of lax.pad (interior padding) differs under IREE: open bug",
}


# MJAX_IREE_RECHECK=1 runs the single tests of list 3 anyway, to see which still fail.
_RECHECK = os.environ.get("MJAX_IREE_RECHECK", "") not in ("", "0")


# TensorFlow's tests run in a child process (test/test_tf_in_child.py says why); that child
# sets MJAX_TF_CHILD so that it collects them.
collect_ignore_glob = [] if os.environ.get("MJAX_TF_CHILD") else ["tf/*"]
# Files whose tests scan the whole heap (the tracer leak checkers, JAX's and mjax's, walk
# every object's referrers; reference counts and memory kept across calls) run in a fresh
# child process (test/test_fresh_process.py): in a worker that has run a thousand tests
# one such test took two minutes, alone nine seconds. The child sets MJAX_FRESH_CHILD so
# that it collects them.
from fresh_process_files import FRESH_PROCESS_FILES  # noqa: E402

if not os.environ.get("MJAX_FRESH_CHILD"):
    collect_ignore_glob += FRESH_PROCESS_FILES


@pytest.fixture(autouse=True)
def _tensorflow_stays_out():
    """Fails the test that loads TensorFlow into a worker (outside test/tf's child)."""
    had = "tensorflow" in sys.modules
    yield
    if not had and "tensorflow" in sys.modules and not os.environ.get("MJAX_TF_CHILD"):
        pytest.fail("this test imported TensorFlow into a pytest worker; TensorFlow's tests "
                    "belong in test/tf (run in a child process, test/test_tf_in_child.py)")


# ---- tiers -------------------------------------------------------------------------------
# The default run (the README's command, CI's) is the fast tier: every test function, but
# of a function parametrized three or more ways only its first case and a fixed sixth of
# the rest (by a hash of the test id, so adding a case does not reshuffle the others), and
# none of the slow tier's tests (test/slow_tier.txt). MJAX_TEST_TIER=full runs everything.
# The lit suite (mjax-opt's contract) always runs whole; the launchers of the TensorFlow
# files and of the fresh-process files are thinned inside their children.
NEVER_THINNED = {"test_lit.py", "test_tf_in_child.py", "test_fresh_process.py"}
FULL_TIER = os.environ.get("MJAX_TEST_TIER", "").lower() == "full"
_SLOW_TIER = os.path.join(os.path.dirname(__file__), "slow_tier.txt")


def _slow_tier_ids() -> set[str]:
    with open(_SLOW_TIER) as f:
        ids = (line.split("#")[0].strip() for line in f)
        return {i for i in ids if i}


def _function_of(item) -> tuple:
    return item.path, getattr(item, "originalname", item.name)


def _fast_tier(config, items):
    slow = _slow_tier_ids()
    groups: dict[tuple, list] = {}
    for item in items:
        groups.setdefault(_function_of(item), []).append(item)
    kept, dropped = [], []
    for item in items:
        group = groups[_function_of(item)]
        thinned = (len(group) >= 3 and item is not group[0]
                   and item.path.name not in NEVER_THINNED
                   and zlib.crc32(item.nodeid.encode()) % 6 != 0)
        (dropped if thinned or item.nodeid in slow else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_collection_modifyitems(config, items):
    # (the per-test guard above cannot see a test module that loads TensorFlow when it is
    # collected: every later test in the worker would share its process)
    if "tensorflow" in sys.modules and not os.environ.get("MJAX_TF_CHILD") and \
            not os.environ.get("MJAX_SIGNATURES_TF"):
        raise pytest.UsageError("collecting the tests loaded TensorFlow into a pytest "
                                "worker; TensorFlow belongs in test/tf's child process")
    if not FULL_TIER:
        _fast_tier(config, items)
    if ON_TPU:
        for item in items:
            reason = TPU_UNSUPPORTED_FILES.get(item.path.name)
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"TPU: {reason}"))
    if not ON_IREE:
        return
    for item in items:
        key = f"{item.path.name}::{item.name.split('[')[0]}"
        reason = IREE_UNSUPPORTED_FILES.get(item.path.name) or (not _RECHECK and (
            IREE_UNSUPPORTED.get(key) or IREE_UNSUPPORTED.get(f"{item.path.name}::{item.name}")))
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"IREE: {reason}"))


# Test dependencies the TPU machine cannot install (binary wheels, no package registry
# there): on the chip, a file that imports one skips with that reason. Elsewhere such a
# file fails, as a missing dependency should.
TPU_MISSING_DEPENDENCIES = {"iree", "tensorstore", "tensorflow", "importlinter", "cloudpickle"}


class _TpuModule(pytest.Module):
    def collect(self):
        try:
            return super().collect()
        except Exception as e:      # (CollectError for imports; what the module raised)
            found = re.search(r"No module named '(\w+)", str(e))
            if found is not None and found.group(1) in TPU_MISSING_DEPENDENCIES:
                raise pytest.skip.Exception(
                    f"TPU: needs {found.group(1)}, a test dependency not installed on the "
                    f"TPU machine", allow_module_level=True) from None
            for pattern, reason in TPU_UNSUPPORTED_CONSTRUCTS.items():
                if re.search(pattern, str(e)):      # (a mesh made at import: multi-device)
                    raise pytest.skip.Exception(f"TPU: {reason}",
                                                allow_module_level=True) from None
            raise


def pytest_sessionstart(session):
    if ON_TPU:
        _children_on_the_host()


def _children_on_the_host():
    """On the chip: opens mjax's and jax's backends in this process, then sets
    JAX_PLATFORMS=cpu for the child processes tests start. One process holds the chip, so
    a child cannot open it (JAX's Cloud TPU setup then fails it; without that it falls
    back to the CPU with a warning); on the host CPU it runs as on the CPU machine."""
    import mjax
    before = mjax.default_backend()
    try:
        import jax
        jax.devices()       # (jax reads JAX_PLATFORMS at import, mjax when it chooses)
    except ImportError:
        pass
    os.environ["JAX_PLATFORMS"] = "cpu"
    if mjax.default_backend() != before:   # (mjax would follow it here too: leave it)
        del os.environ["JAX_PLATFORMS"]


def pytest_pycollect_makemodule(module_path, parent):
    if ON_TPU:
        return _TpuModule.from_parent(parent, path=module_path)
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    # (setup too: a fixture that makes a mesh of several devices fails there)
    if not (ON_IREE or ON_TPU) or call.excinfo is None or call.when not in ("setup", "call"):
        return
    message = str(call.excinfo.value)
    where, constructs = (("IREE", IREE_UNSUPPORTED_CONSTRUCTS) if ON_IREE
                         else ("TPU", TPU_UNSUPPORTED_CONSTRUCTS))
    for pattern, reason in constructs.items():
        if re.search(pattern, message):
            report = outcome.get_result()
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0,
                               f"Skipped: {where}: {reason}")
            return



def pytest_runtest_logreport(report):
    """On the chip, a failure's traceback is written as it happens: a run there often ends
    by its time box or by a test that aborts the process, before pytest's summary."""
    if ON_TPU and report.failed:
        sys.stderr.write(f"\n---- {report.nodeid} ({report.when}) failed:\n"
                         f"{report.longreprtext[-6000:]}\n---- end {report.nodeid}\n")
        if re.search(_CORE_HALTED, report.longreprtext):
            # The chip's core stopped: every later program of this process fails ('The
            # program continuator has halted'). Ending the process as an abort lets
            # test/run_on_tpu.sh go on in a new one without this test, as after a crash.
            sys.stderr.write(f"CORE HALTED in {report.nodeid}: ending the process\n")
            sys.stderr.flush()
            sys.stdout.flush()
            os._exit(134)


_CORE_HALTED = r"RuntimeUnexpectedCoreHalt|program continuator has halted"
