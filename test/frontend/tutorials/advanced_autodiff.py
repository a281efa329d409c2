"""Code cells of JAX's tutorial(s) docs/higher-order.md, docs/jacobian-vector-products.md, docs/notebooks/Custom_derivative_rules_for_Python_code.md (jax-ml/jax@cec06d116c05,
Apache-2.0), extracted unchanged for test_tutorials.py; one cell per `# %%` marker,
with its notebook tags."""

# %% docs/higher-order.md cell tags=
import jax

def hessian(f):
  return jax.jacfwd(jax.grad(f))

# %% docs/higher-order.md cell tags=
import jax.numpy as jnp

def f(x):
  return jnp.dot(x, x)

hessian(f)(jnp.array([1., 2., 3.]))

# %% docs/higher-order.md python tags=
def meta_loss_fn(params, data):
  """Computes the loss after one step of SGD."""
  grads = jax.grad(loss_fn)(params, data)
  return loss_fn(params - lr * grads, data)

meta_grads = jax.grad(meta_loss_fn)(params, data)

# %% docs/higher-order.md cell tags=
# Value function and initial parameters
value_fn = lambda theta, state: jnp.dot(theta, state)
theta = jnp.array([0.1, -0.1, 0.])

# %% docs/higher-order.md cell tags=
# An example transition.
s_tm1 = jnp.array([1., 2., -1.])
r_t = jnp.array(1.)
s_t = jnp.array([2., 1., 0.])

# %% docs/higher-order.md cell tags=
def td_loss(theta, s_tm1, r_t, s_t):
  v_tm1 = value_fn(theta, s_tm1)
  target = r_t + value_fn(theta, s_t)
  return -0.5 * ((target - v_tm1) ** 2)

td_update = jax.grad(td_loss)
delta_theta = td_update(theta, s_tm1, r_t, s_t)

delta_theta

# %% docs/higher-order.md cell tags=
def td_loss(theta, s_tm1, r_t, s_t):
  v_tm1 = value_fn(theta, s_tm1)
  target = r_t + value_fn(theta, s_t)
  return -0.5 * ((jax.lax.stop_gradient(target) - v_tm1) ** 2)

td_update = jax.grad(td_loss)
delta_theta = td_update(theta, s_tm1, r_t, s_t)

delta_theta

# %% docs/higher-order.md cell tags=
s_grad = jax.grad(value_fn)(theta, s_tm1)
delta_theta_original_calculation = (r_t + value_fn(theta, s_t) - value_fn(theta, s_tm1)) * s_grad

delta_theta_original_calculation # [1.2, 2.4, -1.2], same as `delta_theta`

# %% docs/higher-order.md cell tags=
def f(x):
  return jnp.round(x)  # non-differentiable

def straight_through_f(x):
  # Create an exactly-zero expression with Sterbenz lemma that has
  # an exactly-one gradient.
  zero = x - jax.lax.stop_gradient(x)
  return zero + jax.lax.stop_gradient(f(x))

print("f(x): ", f(3.2))
print("straight_through_f(x):", straight_through_f(3.2))

print("grad(f)(x):", jax.grad(f)(3.2))
print("grad(straight_through_f)(x):", jax.grad(straight_through_f)(3.2))

# %% docs/higher-order.md cell tags=
perex_grads = jax.jit(jax.vmap(jax.grad(td_loss), in_axes=(None, 0, 0, 0)))

# Test it:
batched_s_tm1 = jnp.stack([s_tm1, s_tm1])
batched_r_t = jnp.stack([r_t, r_t])
batched_s_t = jnp.stack([s_t, s_t])

perex_grads(theta, batched_s_tm1, batched_r_t, batched_s_t)

# %% docs/higher-order.md cell tags=
dtdloss_dtheta = jax.grad(td_loss)

dtdloss_dtheta(theta, s_tm1, r_t, s_t)

# %% docs/higher-order.md cell tags=
almost_perex_grads = jax.vmap(dtdloss_dtheta)

batched_theta = jnp.stack([theta, theta])
almost_perex_grads(batched_theta, batched_s_tm1, batched_r_t, batched_s_t)

# %% docs/higher-order.md cell tags=
inefficient_perex_grads = jax.vmap(dtdloss_dtheta, in_axes=(None, 0, 0, 0))

inefficient_perex_grads(theta, batched_s_tm1, batched_r_t, batched_s_t)

# %% docs/higher-order.md cell tags=
perex_grads = jax.jit(inefficient_perex_grads)

perex_grads(theta, batched_s_tm1, batched_r_t, batched_s_t)

# %% docs/higher-order.md cell tags=
%timeit inefficient_perex_grads(theta, batched_s_tm1, batched_r_t, batched_s_t).block_until_ready()
%timeit perex_grads(theta, batched_s_tm1, batched_r_t, batched_s_t).block_until_ready()

# %% docs/higher-order.md cell tags=
def hvp(f, x, v):
    return jax.grad(lambda x: jnp.vdot(jax.grad(f)(x), v))(x)

# %% docs/higher-order.md cell tags=
from jax import jacfwd, jacrev

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

# Initialize random model coefficients
key = jax.random.key(0)
key, W_key, b_key = jax.random.split(key, 3)
W = jax.random.normal(W_key, (3,))
b = jax.random.normal(b_key, ())

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

J = jacfwd(f)(W)
print("jacfwd result, with shape", J.shape)
print(J)

J = jacrev(f)(W)
print("jacrev result, with shape", J.shape)
print(J)

# %% docs/higher-order.md cell tags=
def predict_dict(params, inputs):
    return predict(params['W'], params['b'], inputs)

J_dict = jax.jacrev(predict_dict)({'W': W, 'b': b}, inputs)
for k, v in J_dict.items():
    print("Jacobian from {} to logits is".format(k))
    print(v)

# %% docs/higher-order.md cell tags=
def hessian(f):
    return jax.jacfwd(jax.jacrev(f))

H = hessian(f)(W)
print("hessian, with shape", H.shape)
print(H)

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

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
import jax.numpy as jnp
from jax import custom_jvp

@custom_jvp
def f(x, y):
  return jnp.sin(x) * y

@f.defjvp
def f_jvp(primals, tangents):
  x, y = primals
  x_dot, y_dot = tangents
  primal_out = f(x, y)
  tangent_out = jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot
  return primal_out, tangent_out

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import jvp, grad

print(f(2., 3.))
y, y_dot = jvp(f, (2., 3.), (1., 0.))
print(y)
print(y_dot)
print(grad(f)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
# Equivalent alternative using the defjvps convenience wrapper

@custom_jvp
def f(x, y):
  return jnp.sin(x) * y

f.defjvps(lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
          lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(f(2., 3.))
y, y_dot = jvp(f, (2., 3.), (1., 0.))
print(y)
print(y_dot)
print(grad(f)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import custom_vjp

@custom_vjp
def f(x, y):
  return jnp.sin(x) * y

def f_fwd(x, y):
  # Returns primal output and residuals to be used in backward pass by f_bwd.
  return f(x, y), (jnp.cos(x), jnp.sin(x), y)

def f_bwd(res, g):
  cos_x, sin_x, y = res # Gets residuals computed in f_fwd
  return (cos_x * g * y, sin_x * g)

f.defvjp(f_fwd, f_bwd)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))

log1pexp(3.)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import jit, grad, vmap

print(jit(log1pexp)(3.))
print(jit(grad(log1pexp))(3.))
print(vmap(jit(grad(log1pexp)))(jnp.arange(3.)))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(log1pexp)(100.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import make_jaxpr

make_jaxpr(grad(log1pexp))(100.)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import custom_jvp

@custom_jvp
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))

@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
  x, = primals
  x_dot, = tangents
  ans = log1pexp(x)
  ans_dot = (1 - 1/(1 + jnp.exp(x))) * x_dot
  return ans, ans_dot

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(log1pexp)(100.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(jit(log1pexp)(3.))
print(jit(grad(log1pexp))(3.))
print(vmap(jit(grad(log1pexp)))(jnp.arange(3.)))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))

log1pexp.defjvps(lambda t, ans, x: (1 - 1/(1 + jnp.exp(x))) * t)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(log1pexp)(100.))
print(jit(log1pexp)(3.))
print(jit(grad(log1pexp))(3.))
print(vmap(jit(grad(log1pexp)))(jnp.arange(3.)))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
def f(x):
  return x / (1 + jnp.sqrt(x))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(0.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x):
  return x / (1 + jnp.sqrt(x))

@f.defjvp
def f_jvp(primals, tangents):
  x, = primals
  x_dot, = tangents
  ans = f(x)
  ans_dot = ((jnp.sqrt(x) + 2) / (2 * (jnp.sqrt(x) + 1)**2)) * x_dot
  return ans, ans_dot

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(0.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x):
  return x / (1 + jnp.sqrt(x))

f.defjvps(lambda t, ans, x: ((jnp.sqrt(x) + 2) / (2 * (jnp.sqrt(x) + 1)**2)) * t)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(0.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from functools import partial
from jax import custom_vjp

@custom_vjp
def clip_gradient(lo, hi, x):
  return x  # identity function

def clip_gradient_fwd(lo, hi, x):
  return x, (lo, hi)  # save bounds as residuals

def clip_gradient_bwd(res, g):
  lo, hi = res
  return (None, None, jnp.clip(g, lo, hi))  # use None to indicate zero cotangents for lo and hi

clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
import matplotlib.pyplot as plt
from jax import vmap

t = jnp.linspace(0, 10, 1000)

plt.plot(jnp.sin(t))
plt.plot(vmap(grad(jnp.sin))(t))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
def clip_sin(x):
  x = clip_gradient(-0.75, 0.75, x)
  return jnp.sin(x)

plt.plot(clip_sin(t))
plt.plot(vmap(grad(clip_sin))(t))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax.lax import while_loop

def fixed_point(f, a, x_guess):
  def cond_fun(carry):
    x_prev, x = carry
    return jnp.abs(x_prev - x) > 1e-6

  def body_fun(carry):
    _, x = carry
    return x, f(a, x)

  _, x_star = while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
  return x_star

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
def newton_sqrt(a):
  update = lambda a, x: 0.5 * (x + a / x)
  return fixed_point(update, a, a)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(newton_sqrt(2.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(jit(vmap(newton_sqrt))(jnp.array([1., 2., 3., 4.])))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import vjp

@partial(custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
  def cond_fun(carry):
    x_prev, x = carry
    return jnp.abs(x_prev - x) > 1e-6

  def body_fun(carry):
    _, x = carry
    return x, f(a, x)

  _, x_star = while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
  return x_star

def fixed_point_fwd(f, a, x_init):
  x_star = fixed_point(f, a, x_init)
  return x_star, (a, x_star)

def fixed_point_rev(f, res, x_star_bar):
  a, x_star = res
  _, vjp_a = vjp(lambda a: f(a, x_star), a)
  a_bar, = vjp_a(fixed_point(partial(rev_iter, f),
                             (a, x_star, x_star_bar),
                             x_star_bar))
  return a_bar, jnp.zeros_like(x_star)

def rev_iter(f, packed, u):
  a, x_star, x_star_bar = packed
  _, vjp_x = vjp(lambda x: f(a, x), x_star)
  return x_star_bar + vjp_x(u)[0]

fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(newton_sqrt(2.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(newton_sqrt)(2.))
print(grad(grad(newton_sqrt))(2.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(jnp.sqrt)(2.))
print(grad(grad(jnp.sqrt))(2.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import custom_jvp
import jax.numpy as jnp

# f :: a -> b
@custom_jvp
def f(x):
  return jnp.sin(x)

# f_jvp :: (a, T a) -> (b, T b)
def f_jvp(primals, tangents):
  x, = primals
  t, = tangents
  return f(x), jnp.cos(x) * t

f.defjvp(f_jvp)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import jvp

print(f(3.))

y, y_dot = jvp(f, (3.,), (1.,))
print(y)
print(y_dot)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md python tags=
@custom_jvp
def f(x):
  ...

@f.defjvp
def f_jvp(primals, tangents):
  ...

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import grad

print(grad(f)(3.))
print(grad(grad(f))(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x, y):
  return x ** 2 * y

@f.defjvp
def f_jvp(primals, tangents):
  x, y = primals
  x_dot, y_dot = tangents
  primal_out = f(x, y)
  tangent_out = 2 * x * y * x_dot + x ** 2 * y_dot
  return primal_out, tangent_out

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x):
  return jnp.sin(x)

f.defjvps(lambda t, ans, x: jnp.cos(x) * t)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x, y):
  return x ** 2 * y

f.defjvps(lambda x_dot, primal_out, x, y: 2 * x * y * x_dot,
          lambda y_dot, primal_out, x, y: x ** 2 * y_dot)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(2., 3.))
print(grad(f, 0)(2., 3.))  # same as above
print(grad(f, 1)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x, y):
  return x ** 2 * y

f.defjvps(lambda x_dot, primal_out, x, y: 2 * x * y * x_dot,
          None)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(2., 3.))
print(grad(f, 0)(2., 3.))  # same as above
print(grad(f, 1)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x):
  print('called f!')  # a harmless side-effect
  return jnp.sin(x)

@f.defjvp
def f_jvp(primals, tangents):
  print('called f_jvp!')  # a harmless side-effect
  x, = primals
  t, = tangents
  return f(x), jnp.cos(x) * t

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import vmap, jit

print(f(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(vmap(f)(jnp.arange(3.)))
print(jit(f)(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
y, y_dot = jvp(f, (3.,), (1.,))
print(y_dot)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
grad(grad(f))(3.)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_jvp
def f(x):
  if x > 0:
    return jnp.sin(x)
  else:
    return jnp.cos(x)

@f.defjvp
def f_jvp(primals, tangents):
  x, = primals
  x_dot, = tangents
  ans = f(x)
  if x > 0:
    return ans, 2 * x_dot
  else:
    return ans, 3 * x_dot

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(1.))
print(grad(f)(-1.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import custom_vjp
import jax.numpy as jnp

# f :: a -> b
@custom_vjp
def f(x):
  return jnp.sin(x)

# f_fwd :: a -> (b, c)
def f_fwd(x):
  return f(x), jnp.cos(x)

# f_bwd :: (c, CT b) -> CT a
def f_bwd(cos_x, y_bar):
  return (cos_x * y_bar,)

f.defvjp(f_fwd, f_bwd)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import grad

print(f(3.))
print(grad(f)(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import custom_vjp

@custom_vjp
def f(x, y):
  return jnp.sin(x) * y

def f_fwd(x, y):
  return f(x, y), (jnp.cos(x), jnp.sin(x), y)

def f_bwd(res, g):
  cos_x, sin_x, y = res
  return (cos_x * g * y, sin_x * g)

f.defvjp(f_fwd, f_bwd)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(2., 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_vjp
def f(x):
  print("called f!")
  return jnp.sin(x)

def f_fwd(x):
  print("called f_fwd!")
  return f(x), jnp.cos(x)

def f_bwd(cos_x, y_bar):
  print("called f_bwd!")
  return (cos_x * y_bar,)

f.defvjp(f_fwd, f_bwd)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(f(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(f)(3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
y, f_vjp = vjp(f, 3.)
print(y)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(f_vjp(1.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from jax import jvp

try:
  jvp(f, (3.,), (1.,))
except TypeError as e:
  print('ERROR! {}'.format(e))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
import pdb

@custom_vjp
def debug(x):
  return x  # acts like identity

def debug_fwd(x):
  return x, x

def debug_bwd(x, g):
  pdb.set_trace()
  return g

debug.defvjp(debug_fwd, debug_bwd)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
def foo(x):
  y = x ** 2
  y = debug(y)  # insert pdb in corresponding backward pass step
  return jnp.sin(y)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md python tags=
jax.grad(foo)(3.)

> <ipython-input-113-b19a2dc1abf7>(12)debug_bwd()
-> return g
(Pdb) p x
Array(9., dtype=float32)
(Pdb) p g
Array(-0.91113025, dtype=float32)
(Pdb) q

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from collections import namedtuple
Point = namedtuple("Point", ["x", "y"])

@custom_jvp
def f(pt):
  x, y = pt.x, pt.y
  return {'a': x ** 2,
          'b': (jnp.sin(x), jnp.cos(y))}

@f.defjvp
def f_jvp(primals, tangents):
  pt, = primals
  pt_dot, =  tangents
  ans = f(pt)
  ans_dot = {'a': 2 * pt.x * pt_dot.x,
             'b': (jnp.cos(pt.x) * pt_dot.x, -jnp.sin(pt.y) * pt_dot.y)}
  return ans, ans_dot

def fun(pt):
  dct = f(pt)
  return dct['a'] + dct['b'][0]

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
pt = Point(1., 2.)

print(f(pt))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(fun)(pt))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@custom_vjp
def f(pt):
  x, y = pt.x, pt.y
  return {'a': x ** 2,
          'b': (jnp.sin(x), jnp.cos(y))}

def f_fwd(pt):
  return f(pt), pt

def f_bwd(pt, g):
  a_bar, (b0_bar, b1_bar) = g['a'], g['b']
  x_bar = 2 * pt.x * a_bar + jnp.cos(pt.x) * b0_bar
  y_bar = -jnp.sin(pt.y) * b1_bar
  return (Point(x_bar, y_bar),)

f.defvjp(f_fwd, f_bwd)

def fun(pt):
  dct = f(pt)
  return dct['a'] + dct['b'][0]

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
pt = Point(1., 2.)

print(f(pt))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(fun)(pt))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
from functools import partial

@partial(custom_jvp, nondiff_argnums=(0,))
def app(f, x):
  return f(x)

@app.defjvp
def app_jvp(f, primals, tangents):
  x, = primals
  x_dot, = tangents
  return f(x), 2. * x_dot

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(app(lambda x: x ** 3, 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(app, 1)(lambda x: x ** 3, 3.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@partial(custom_jvp, nondiff_argnums=(0, 2))
def app2(f, x, g):
  return f(g((x)))

@app2.defjvp
def app2_jvp(f, g, primals, tangents):
  x, = primals
  x_dot, = tangents
  return f(g(x)), 3. * x_dot

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(app2(lambda x: x ** 3, 3., lambda y: 5 * y))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(app2, 1)(lambda x: x ** 3, 3., lambda y: 5 * y))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
@partial(custom_vjp, nondiff_argnums=(0,))
def app(f, x):
  return f(x)

def app_fwd(f, x):
  return f(x), x

def app_bwd(f, x, g):
  return (5 * g,)

app.defvjp(app_fwd, app_bwd)

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(app(lambda x: x ** 2, 4.))

# %% docs/notebooks/Custom_derivative_rules_for_Python_code.md cell tags=
print(grad(app, 1)(lambda x: x ** 2, 4.))
