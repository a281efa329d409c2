"""Registration points: behaviour a lower floor needs that only a higher floor defines.

The frontend's floors (docs/design.md) never import upward. Where a lower floor needs a
transformation defined above it, it calls one of the slots declared here, and the one
module each declaration names fills it when that module is imported (`import mjax`
imports every floor, so all slots are filled before user code runs). Each slot is written
once, here, with the reason it exists. (Two other registration points are attributes:
`ArrayMethods`'s operators, which mjax.numpy.array_operators installs from the numpy floor, and
a trace's `concrete` / `shows`, set by mjax.ad.concrete and mjax.spmd.shard_map.)
"""
from __future__ import annotations


class Slot:
    """A function declared by a lower floor and provided by a higher one."""

    __slots__ = ("name", "filled_by", "fn")

    def __init__(self, name: str, filled_by: str):
        self.name, self.filled_by, self.fn = name, filled_by, None

    def fill(self, fn):
        """Called by `filled_by` at import; returns `fn` (usable as a decorator)."""
        self.fn = fn
        return fn

    def __call__(self, *args, **kwargs):
        fn = self.fn
        if fn is None:
            raise RuntimeError(f"mjax internal error: {self.name} was used before "
                               f"{self.filled_by} was imported (import mjax first)")
        return fn(*args, **kwargs)

    def __repr__(self):
        return f"<registration point {self.name} (filled by {self.filled_by})>"


# jit(fun, **options) -> the jitted function (mjax.jit.jitted.jit). Region ops (cond, while, scan)
# exist only inside traces, so lax's control flow called outside one runs as a jit of
# itself; prng's key operations run staged the same way.
JIT = Slot("JIT", "mjax.jit.jitted")

# apply_sharded(opcls, args, params) -> results: an eager op on arrays laid out over
# several devices runs as a jit of the op (compiled SPMD for their mesh, so the result
# keeps a sharded layout), which eager.py, below jit, cannot build.
APPLY_SHARDED = Slot("APPLY_SHARDED", "mjax.jit.jitted")

# differentiation_state(leaves) -> hashable (mjax.ad.levels): a nested jit's kept trace
# (mjax.jit.nested_traces) depends on the differentiations around it and which of its
# arguments each perturbs (custom rules are traced at once for perturbed inputs).
DIFFERENTIATION_STATE = Slot("DIFFERENTIATION_STATE", "mjax.ad.levels")

# perturbation_queries() -> int (mjax.ad.symbolic_zeros): how many times tracing asked
# which values a differentiation perturbs; a nested trace that asked none does not depend
# on DIFFERENTIATION_STATE, and is kept for every state.
PERTURBATION_QUERIES = Slot("PERTURBATION_QUERIES", "mjax.ad.symbolic_zeros")

# vmap(fun, in_axes=0, out_axes=0, ...) (mjax.vmap.batching): lax.map(batch_size=) maps
# batches of its inputs with vmap, as JAX's lax.map does.
VMAP = Slot("VMAP", "mjax.vmap.batching")

# jvp(fun, primals, tangents) (mjax.ad): lax.custom_root differentiates f at the root it
# found, for its implicit-function correction.
JVP = Slot("JVP", "mjax.ad")

# defjvp(fun, name, jvps) -> fun differentiated by JAX's `ad.defjvp` rules (mjax.ad.defjvp):
# jvps[i](t_i, *primals) is argument i's term of the tangent, the terms of the arguments
# not symbolically zero summed in order; jvps None: differentiating fun raises JAX's
# NotImplementedError for `name`. lax's igamma family are primitives with rules of their
# own in JAX, compositions of other ops in mjax (mjax.lax.igamma).
DEFJVP = Slot("DEFJVP", "mjax.ad.defjvp")

# eager_primitive_jvp(prim, args, params, stage) -> stage()'s outputs (mjax.ad.eager_jvp):
# a user primitive bound on an eager jvp's own Python scalars has its JVP rule run on
# their values, as JAX's eager jvp runs it, and what it returns comes back as it is.
EAGER_PRIMITIVE_JVP = Slot("EAGER_PRIMITIVE_JVP", "mjax.ad.eager_jvp")

# ref_of_tracer(tracer) -> an mjax.Ref (mjax.ref): a traced function's argument of ref
# type (a Ref passed to jit) reaches the user as a Ref, which indexes with ref ops.
REF_OF_TRACER = Slot("REF_OF_TRACER", "mjax.ref")

# accumulate_into_ref(ref, value) (mjax.ref): `vjp(...)`'s `with_refs` adds a cotangent
# into the ref the user gave for it (`ref[...] += ct`).
ACCUMULATE_INTO_REF = Slot("ACCUMULATE_INTO_REF", "mjax.ref")

# sum_of_partials(array) -> np.ndarray and device_put_unreduced(leaf, sharding) -> Array
# (mjax.lax.unreduced): an array unreduced over mesh axes holds partial sums per device; its
# value (Array, below lax) is their sum, and device_put (placement) splits a value so.
SUM_OF_PARTIALS = Slot("SUM_OF_PARTIALS", "mjax.lax.unreduced")
DEVICE_PUT_UNREDUCED = Slot("DEVICE_PUT_UNREDUCED", "mjax.lax.unreduced")

# reshard(tracer, named_sharding) -> tracer (mjax.lax.sharding): device_put of a traced
# value to a NamedSharding lays it out so inside the program, as JAX's device_put in jit.
DEVICE_PUT_TRACED = Slot("DEVICE_PUT_TRACED", "mjax.lax.sharding")
# device_put_memory(tracer, memory_kind) -> tracer (mjax.lax.sharding): device_put of a
# traced value to a sharding in some memory: a `jaxpr.device_put` op (mjax/specs/memory_kinds.py).
DEVICE_PUT_MEMORY = Slot("DEVICE_PUT_MEMORY", "mjax.lax.sharding")

# key_array_of_abstract(ShapeDtypeStruct with a key dtype) -> a key array over the abstract
# uint32 data (mjax.lax.prng): eval_shape / jit(...).lower take abstract key arguments as JAX's.
KEY_ARRAY_OF_ABSTRACT = Slot("KEY_ARRAY_OF_ABSTRACT", "mjax.lax.prng")

# bind_on_keys(opcls, args, params) -> results (mjax.lax.key_ops): an op applied to key arrays,
# whose values are uint32 data with trailing key dims that only mjax.lax.prng knows. core's
# bind sends an op here when an operand's type is in KEY_ARRAY_TYPES (filled by key_ops);
# structural ops (reshape, broadcast, slice, gather, select, ...) apply to the data, the
# rest raise JAX's TypeError.
BIND_ON_KEYS = Slot("BIND_ON_KEYS", "mjax.lax.key_ops")
KEY_ARRAY_TYPES: set = set()

# eval_jaxpr(jaxpr, consts, *args) (mjax.jaxpr.objects): jax.core.eval_jaxpr lives in
# mjax.core, which JAX's jaxpr objects (read from a trace, with lax's control flow) sit above.
EVAL_JAXPR = Slot("EVAL_JAXPR", "mjax.jaxpr.objects")

# User-defined traces (jax.core.Trace subclasses, mjax.extend.user_traces), reached from core.bind,
# mjax.tracing.primitive and lax's control flow while one is current: user_bind(op class or
# Primitive, args, params) -> results, or NotImplemented when an mjax trace entered since
# takes the op; user_staged_call(fun, args, kwargs) -> fun's results, fun traced to a
# jaxpr whose equations the user trace then sees; bind_with_trace(primitive, trace, args,
# params) -> primitive bound with `trace` current.
USER_BIND = Slot("USER_BIND", "mjax.extend.user_traces")
USER_STAGED_CALL = Slot("USER_STAGED_CALL", "mjax.extend.user_traces")
# unstaged_jit_call(jitted, args, kwargs): a jit's call under jax_disable_jit (its function
# called as it is) or under a user trace (user_staged_call; when an mjax trace entered
# since is current, the ordinary call).
UNSTAGED_JIT_CALL = Slot("UNSTAGED_JIT_CALL", "mjax.extend.user_traces")
# user_emit(op class, operands, params) -> results or NotImplemented: a transformation op
# (staging.emit) with a user trace current: custom_jvp/custom_vjp calls go to the trace's
# process_custom_jvp_call / process_custom_vjp_call.
USER_EMIT = Slot("USER_EMIT", "mjax.extend.user_traces")
BIND_WITH_TRACE = Slot("BIND_WITH_TRACE", "mjax.extend.user_traces")

# op class -> bind(*args, **params) taking the op's bodies as ClosedJaxprs: the Primitive
# objects of cond, while, scan, reduce, jit, ... (mjax.tracing.primitive) bind the parameters of
# JAX's jaxpr equations (mjax.jaxpr.objects; mjax.ad.custom_eval for the custom calls).
REGION_BINDS: dict = {}
# op class -> get_bind_params(params) of its Primitive object when it differs from the
# parameters themselves (the custom calls' `subfuns`: mjax.ad.custom_eval).
BIND_PARAMS: dict = {}

# functions giving the Arrays mjax keeps for itself (mjax.numpy.promotion's cache of Python
# scalars' constants): jax.live_arrays (mjax.arrays.placement) leaves them out, as JAX has none.
INTERNAL_ARRAYS: list = []

# id(f) -> f for jnp functions that are pure functions of their arguments' avals: tracing
# one has no other effect and emits the same program for the same avals, static values
# and config, whatever the arrays' values (the ufuncs that are one op after promotion:
# jits in JAX). An eager vmap of one keeps its program per avals (mjax.vmap.batching), as
# JAX keeps a jitted jnp function's; mjax.numpy.elementwise fills it. (Keyed by id and
# checked by identity: these live as long as the process; an attribute would be copied
# onto a user's function by functools.wraps.)
PURE_OF_AVALS: dict = {}


def pure_of_avals(f):
    """Registers f in PURE_OF_AVALS; returns f."""
    PURE_OF_AVALS[id(f)] = f
    return f
