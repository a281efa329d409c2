"""Code cells of JAX's tutorial(s) docs/jep/2026-custom-derivatives.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/jep/2026-custom-derivatives.md python tags=
# old custom_transforms api to be replaced
@jax.custom_transforms
def f(x):
  return 2. * x

# f_vjp :: a -> (b, CT b --o CT a)
def f_vjp(x):
  return f(x), lambda g: 3. * x  # 3 instead of 2

jax.defvjp_all(f, f_vjp)

grad(f)(1.)  # 3.
vmap(grad(f))(np.ones(4))  # [3., 3., 3., 3.]
grad(lambda x: vmap(f)(x).sum())(np.ones(4))  # [2., 2., 2., 2.]

# %% docs/jep/2026-custom-derivatives.md python tags=
vmap(f)(xs) == np.stack([f(x) for x in xs])

# %% docs/jep/2026-custom-derivatives.md python tags=
jvp(vmap(f))(xs) == jvp(lambda xs: np.stack([f(x) for x in xs]))

# %% docs/jep/2026-custom-derivatives.md python tags=
# old custom_transforms api to be replaced
@jax.custom_transforms
def f(x):
  if x > 0:
    return x
  else:
    return 0.

def f_vjp(x):
  return ...

jax.defvjp_all(f, f_vjp)

grad(f)(1.)  # Error!

# %% docs/jep/2026-custom-derivatives.md python tags=
vmap(call(f)) == call(vmap(f))

# %% docs/jep/2026-custom-derivatives.md python tags=
vmap(custom_jvp_call(f, f_jvp)) == custom_jvp_call(vmap(f), vmap(f_jvp))

# %% docs/jep/2026-custom-derivatives.md python tags=
jvp(call(f)) == call(jvp(f))

jvp(custom_jvp_call(f, f_jvp)) == f_jvp

# %% docs/jep/2026-custom-derivatives.md python tags=
eval(call(f)) == eval(f)
jit(call(f)) == hlo_call(jit(f))

eval(custom_jvp_call(f, f_jvp)) == eval(f)
jit(custom_jvp_call(f, f_jvp)) == hlo_call(jit(f))

# %% docs/jep/2026-custom-derivatives.md python tags=
# f :: a -> b
@jax.custom_jvp
def f(x):
  return np.sin(x)

# f_jvp :: (a, T a) -> (b, T b)
def f_jvp(primals, tangents):
  x, = primals
  t, = tangents
  return f(x), np.cos(x) * t

f.defjvp(f_jvp)

# %% docs/jep/2026-custom-derivatives.md python tags=
# f :: a -> b
@jax.custom_vjp
def f(x):
  return np.sin(x)

# f_fwd :: a -> (b, c)
def f_fwd(x):
  return f(x), np.cos(x)

# f_bwd :: (c, CT b) -> CT a
def f_bwd(cos_x, g):
  return (cos_x * g,)

f.defvjp(f_fwd, f_bwd)
