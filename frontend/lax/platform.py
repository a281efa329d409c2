"""`lax.platform_dependent`: code chosen by the platform a program is compiled for.

JAX stages every branch and picks one when it lowers for a platform. mjax compiles for
one platform per process (the default backend's device target: 'cpu', 'cuda', 'rocm',
or IREE's 'cpu', 'cuda', 'vulkan', ...), known while tracing, so the branch is chosen
then: eagerly, under jit, grad and vmap alike; only that branch is traced and compiled.
"""
from __future__ import annotations

from mjax.runtime.backend import platform_record, target_platform


def current_platform() -> str:
    """The platform name platform_dependent matches: the target of the platform programs
    are lowered for (the default backend's, or lower(lowering_platforms=)'s)."""
    return target_platform().target


def lapack_available() -> bool:
    """Whether programs may call jaxlib's LAPACK kernels (the platform record's linalg
    family: XLA on the CPU)."""
    return platform_record().linalg == "lapack"


def solver_kernels_available() -> bool:
    """Whether programs may call jaxlib's linear-algebra kernels: LAPACK on the CPU, or
    the GPU solvers (cuSOLVER/cuSPARSE, hipSOLVER) under XLA on a GPU."""
    return platform_record().linalg in ("lapack", "gpu-solver")


def platform_dependent(*args, default=None, **per_platform):
    """per_platform[platform](*args) for the platform the program runs on ('cpu', 'cuda',
    'rocm', 'tpu', ...), else default(*args); no branch and no default is an error.
    JAX: lax.platform_dependent. (JAX also traces the other branches and checks their
    results agree; mjax traces only the chosen one.)"""
    groups: list[tuple[list[str], object]] = []     # identical branches share an index
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a "
                            f"callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        for names, other in groups:
            if other == branch:
                names.append(name)
                break
        else:
            groups.append(([name], branch))
    platforms = tuple(tuple(names) for names, _ in groups)
    if default is not None:
        if not callable(default):
            raise TypeError("lax.platform_dependent: the 'default' branch must be a "
                            "callable.")
        platforms += (None,)
    here = current_platform()
    for names, branch in groups:
        if here in names:
            return branch(*args)
    if default is None:
        raise NotImplementedError(f"MLIR translation rule for primitive "
                                  f"'platform_index(platforms={platforms})' not found for "
                                  f"platform {here}")
    return default(*args)
