"""Code cells of JAX's tutorial(s) docs/jacobian-vector-products.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/jacobian-vector-products.md cell tags=
import jax
import jax.numpy as jnp

key = jax.random.key(0)

# Initialize random model coefficients
key, W_key, b_key = jax.random.split(key, 3)
W = jax.random.normal(W_key, (3,))
b = jax.random.normal(b_key, ())

# Define a sigmoid function.
def sigmoid(x):
    return 0.5 * (jnp.tanh(x / 2) + 1)

# Outputs probability of a label being true.
def predict(W, b, inputs):
    return sigmoid(jnp.dot(inputs, W) + b)

# Build a toy dataset.
inputs = jnp.array([[0.52, 1.12,  0.77],
                   [0.88, -1.08, 0.15],
                   [0.52, 0.06, -1.30],
                   [0.74, -2.49, 1.39]])

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

key, subkey = jax.random.split(key)
v = jax.random.normal(subkey, W.shape)

# Push forward the vector `v` along `f` evaluated at `W`
y, u = jax.jvp(f, (W,), (v,))

# %% docs/jacobian-vector-products.md cell tags=
from jax import vjp

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

y, vjp_fun = vjp(f, W)

key, subkey = jax.random.split(key)
u = jax.random.normal(subkey, y.shape)

# Pull back the covector `u` along `f` evaluated at `W`
v = vjp_fun(u)

# %% docs/jacobian-vector-products.md cell tags=
def vgrad(f, x):
  y, vjp_fn = jax.vjp(f, x)
  return vjp_fn(jnp.ones(y.shape))[0]

print(vgrad(lambda x: 3*x**2, jnp.ones((2, 2))))

# %% docs/jacobian-vector-products.md cell tags=
def hvp(f, x, v):
    return jax.grad(lambda x: jnp.vdot(jax.grad(f)(x), v))(x)

# %% docs/jacobian-vector-products.md cell tags=
# forward-over-reverse
def hvp(f, primals, tangents):
  return jax.jvp(jax.grad(f), primals, tangents)[1]

# %% docs/jacobian-vector-products.md cell tags=
def f(X):
  return jnp.sum(jnp.tanh(X)**2)

key, subkey1, subkey2 = jax.random.split(key, 3)
X = jax.random.normal(subkey1, (30, 40))
V = jax.random.normal(subkey2, (30, 40))

def hessian(f):
    return jax.jacfwd(jax.jacrev(f))

ans1 = hvp(f, (X,), (V,))
ans2 = jnp.tensordot(hessian(f)(X), V, 2)

print(jnp.allclose(ans1, ans2, 1e-4, 1e-4))

# %% docs/jacobian-vector-products.md cell tags=
# Reverse-over-forward
def hvp_revfwd(f, primals, tangents):
  g = lambda primals: jax.jvp(f, primals, tangents)[1]
  return jax.grad(g)(primals)

# %% docs/jacobian-vector-products.md cell tags=
# Reverse-over-reverse, only works for single arguments
def hvp_revrev(f, primals, tangents):
  x, = primals
  v, = tangents
  return jax.grad(lambda x: jnp.vdot(jax.grad(f)(x), v))(x)


print("Forward over reverse")
%timeit -n10 -r3 hvp(f, (X,), (V,))
print("Reverse over forward")
%timeit -n10 -r3 hvp_revfwd(f, (X,), (V,))
print("Reverse over reverse")
%timeit -n10 -r3 hvp_revrev(f, (X,), (V,))

print("Naive full Hessian materialization")
%timeit -n10 -r3 jnp.tensordot(jax.hessian(f)(X), V, 2)

# %% docs/jacobian-vector-products.md cell tags=
# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

# Pull back the covectors `m_i` along `f`, evaluated at `W`, for all `i`.
# First, use a list comprehension to loop over rows in the matrix M.
def loop_mjp(f, x, M):
    y, vjp_fun = jax.vjp(f, x)
    return jnp.vstack([jnp.asarray(vjp_fun(mi)) for mi in M])

# Now, use vmap to build a computation that does a single fast matrix-matrix
# multiply, rather than an outer loop over vector-matrix multiplies.
def vmap_mjp(f, x, M):
    y, vjp_fun = jax.vjp(f, x)
    outs, = jax.vmap(vjp_fun)(M)
    return outs

key = jax.random.key(0)
num_covecs = 128
U = jax.random.normal(key, (num_covecs,) + y.shape)

loop_vs = loop_mjp(f, W, M=U)
print('Non-vmapped Matrix-Jacobian product')
%timeit -n10 -r3 loop_mjp(f, W, M=U)

print('\nVmapped Matrix-Jacobian product')
vmap_vs = vmap_mjp(f, W, M=U)
%timeit -n10 -r3 vmap_mjp(f, W, M=U)

assert jnp.allclose(loop_vs, vmap_vs), 'Vmap and non-vmapped Matrix-Jacobian Products should be identical'

# %% docs/jacobian-vector-products.md cell tags=
def loop_jmp(f, W, M):
    # jvp immediately returns the primal and tangent values as a tuple,
    # so we'll compute and select the tangents in a list comprehension
    return jnp.vstack([jax.jvp(f, (W,), (mi,))[1] for mi in M])

def vmap_jmp(f, W, M):
    _jvp = lambda s: jax.jvp(f, (W,), (s,))[1]
    return jax.vmap(_jvp)(M)
num_vecs = 128
S = jax.random.normal(key, (num_vecs,) + W.shape)

loop_vs = loop_jmp(f, W, M=S)
print('Non-vmapped Jacobian-Matrix product')
%timeit -n10 -r3 loop_jmp(f, W, M=S)
vmap_vs = vmap_jmp(f, W, M=S)
print('\nVmapped Jacobian-Matrix product')
%timeit -n10 -r3 vmap_jmp(f, W, M=S)

assert jnp.allclose(loop_vs, vmap_vs), 'Vmap and non-vmapped Jacobian-Matrix products should be identical'

# %% docs/jacobian-vector-products.md cell tags=
from jax import jacrev as builtin_jacrev

def our_jacrev(f):
    def jacfun(x):
        y, vjp_fun = jax.vjp(f, x)
        # Use vmap to do a matrix-Jacobian product.
        # Here, the matrix is the Euclidean basis, so we get all
        # entries in the Jacobian at once.
        J, = jax.vmap(vjp_fun, in_axes=0)(jnp.eye(len(y)))
        return J
    return jacfun

assert jnp.allclose(builtin_jacrev(f)(W), our_jacrev(f)(W)), 'Incorrect reverse-mode Jacobian results!'

# %% docs/jacobian-vector-products.md cell tags=
from jax import jacfwd as builtin_jacfwd

def our_jacfwd(f):
    def jacfun(x):
        _jvp = lambda s: jax.jvp(f, (x,), (s,))[1]
        Jt = jax.vmap(_jvp, in_axes=1)(jnp.eye(len(x)))
        return jnp.transpose(Jt)
    return jacfun

assert jnp.allclose(builtin_jacfwd(f)(W), our_jacfwd(f)(W)), 'Incorrect forward-mode Jacobian results!'

# %% docs/jacobian-vector-products.md cell tags=
def f(x):
    try:
        if x < 3:
            return 2 * x ** 3
        else:
            raise ValueError
    except ValueError:
        return jnp.pi * x

y, f_vjp = jax.vjp(f, 4.)
print(jax.jit(f_vjp)(1.))
