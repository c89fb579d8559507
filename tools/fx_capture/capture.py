#!/usr/bin/env python3
"""Captures Inductor's post-grad FX graphs (before its reinplacing pass) for ctfx's FX parser tests.

For each small program below: compiles it with torch.compile on CPU, takes the graph that
`torch._inductor.config.post_grad_custom_pre_pass` sees (the functional post-grad graph with its
copy_ epilogue, before reinplace_inplaceable_ops), prints it with
`print_readable(include_stride=True, include_device=True)` and writes

  test/data/fx/<name>.txt           the graph text, as PyTorch printed it
  test/data/fx/<name>.input<i>.npy  the i-th tensor placeholder's value before the call
  test/data/fx/<name>.output<j>.npy the j-th graph output, from PyTorch eager
  test/data/fx/<name>.mutated<i>.npy the i-th tensor placeholder after the eager call, when the
                                    program mutates it
  test/data/fx/<name>.size<k>.*.npy  the same for the k-th extra size of a dynamic program
  test/data/fx/<name>.<attr>.npy    the values of each tensor constant (`self.<attr>`, e.g.
                                    _tensor_constant0), which the graph text does not hold

Sym placeholders (dynamic shapes) are not files: ctfx binds symbols from the input shapes.
Not run in CI (needs torch; `pip install torch numpy`). Usage: capture.py [OUTDIR]
"""
import os
import sys

import numpy as np
import torch
from torch._inductor import config

config.enable_auto_functionalized_v2 = False  # ctfx reads auto_functionalized (v1)
config.freezing = False

R = torch.randn
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "test", "data", "fx")


@torch.library.custom_op("ctfx_test::sin_", mutates_args={"out"})
def sin_(x: torch.Tensor, out: torch.Tensor) -> None:
    out.copy_(x.sin())


@torch.library.custom_op("ctfx_test::sin_cos_", mutates_args={"out_sin", "out_cos"})
def sin_cos_(x: torch.Tensor, out_sin: torch.Tensor, out_cos: torch.Tensor) -> None:
    out_sin.copy_(x.sin())
    out_cos.copy_(x.cos())


@torch.library.custom_op("ctfx_test::add_one_", mutates_args={"x"})
def add_one_(x: torch.Tensor) -> None:
    x.add_(1)


@torch.library.custom_op("ctfx_test::double_acc_", mutates_args={"acc"})
def double_acc_(x: torch.Tensor, acc: torch.Tensor) -> torch.Tensor:
    acc.add_(x)
    return (x * 2).t().contiguous().t()


@double_acc_.register_fake
def _(x, acc):
    # a column-major result: its layout is the fake implementation's choice, which only the
    # printed graph tells
    return x.new_empty((x.shape[1], x.shape[0])).t()


@torch.library.custom_op("ctfx_test::double_t", mutates_args=())
def double_t(x: torch.Tensor) -> torch.Tensor:
    return (x * 2).t().contiguous().t()


@double_t.register_fake
def _(x):
    return x.new_empty((x.shape[1], x.shape[0])).t()  # column-major, as double_acc_'s


# ----- the programs -----
def index_put_copy(x, idx, v):
    x[idx] = v


def index_put_accumulate(x, idx, v):
    x.index_put_((idx,), v, accumulate=True)


def slice_scatter_chain(x, a, b):
    x[0:2] = a
    x[4:6] = b
    return x.sum(0)


def select_scatter(x, y):
    x[:, 1] = y
    return x * 2


def select_scatter_row(x, y):
    x[3] = y


def kv_cache_index(cache, k, pos):
    cache[:, :, pos] = k


def kv_cache_slice(cache, k):
    cache[:, :, 5:6] = k
    return cache.sum(2)


def halo_exchange(u):
    # periodic ghost cells of a 2-D grid with one ghost layer on each side
    u[0, 1:-1] = u[-2, 1:-1]
    u[-1, 1:-1] = u[1, 1:-1]
    u[:, 0] = u[:, -2]
    u[:, -1] = u[:, 1]


def clone_noop(x):
    y = x.clone()
    return y + 1


def clone_returned(x):
    y = x.clone()
    x.copy_(y * 2)
    return y


def alias_views(x):
    return x.view(4, 8).permute(1, 0).contiguous() * 1.5


def foreach_add(a, b, c, d):
    return torch._foreach_add([a, b], [c, d])


def foreach_add_inplace(a, b, c, d):
    torch._foreach_add_([a, b], [c, d])


def factories(x):
    z = torch.zeros(4, 8) + x
    f = torch.full((4, 8), 2.5) * x
    return z, f


def cat_sum(a, b):
    return torch.cat([a, b], 0).sum(1)


def expand_unsqueeze(x, y):
    return x.unsqueeze(0).expand(3, 4, 8) + y


def diagonal_scatter(x, d):
    x.diagonal().copy_(d)


def convert_and_mul(x):
    return x.to(torch.float64) * 3


def dynamic_slice(x):
    return x[1:] * 2


def dynamic_update(x, y):
    x[0] = y
    return x.sum(1)


# from PyTorch's test/inductor/test_inplacing_pass.py (CPU-only programs)
def inplace_custom_op(x):
    out = torch.empty_like(x)
    sin_(x, out)
    return out


def inplace_custom_op_intermediate(x):
    out = torch.empty_like(x)
    sin_(x, out)
    y = out + 1
    return out, y


def inplace_custom_op_two_mutated(x):
    a = torch.empty_like(x)
    b = torch.empty_like(x)
    sin_cos_(x, a, b)
    return a, b


def inplace_custom_op_input(x):
    add_one_(x)
    return x.sum()


def view_inplaced(x):
    y = torch.zeros(3, 4)
    sin_(x, y[0])
    return y


def multiple_intermediate(x):
    a = x.clone()
    add_one_(a)
    b = a * 2
    add_one_(b)
    return b


def index_put_chain(x, i1, v1, i2, v2):
    y = x.index_put((i1,), v1)
    z = y.index_put((i2,), v2)
    x.copy_(z)


def unsafe_index_put_like(x, idx, v):
    x[idx, :] = v
    return x + 0


def compare_ops(x, y, i):
    # tensor and scalar right operands, a NaN and ties in the inputs, an int tensor against floats
    return x == y, x != 0.5, x < y, x <= 1, x > y, x >= y, i > 1.5, i == y


def logical_ops(x, y):
    a, b = x > 0, y < 0
    return torch.logical_and(a, b), torch.logical_or(a, b), torch.logical_not(a), torch.logical_not(x), a & b, a | ~b


def where_ops(x, y):
    return torch.where(x > 0, x, y), torch.where(x > 0, x, 0.0), torch.where(y > 0, 1.0, y) * 2


def clamp_ops(x, lo):
    return x.clamp(-0.5, 0.5), x.clamp(min=0.1), x.clamp(max=0.2), torch.clamp_min(x, lo), torch.clamp_max(x, lo)


def maximum_minimum_full(x, y):
    return torch.maximum(x, y), torch.minimum(x, y), torch.full((3, 4), 2.0) + x


def mean_dims(x):
    return x.mean(1), x.mean((0, 2), keepdim=True), x.mean(-1), x.half().mean(1), x.double().mean()


def masked_fill_put(x, m):
    x[m] = 0.5


def index_gather(x, i, j):
    # rows, a column per row (two adjacent indices, one negative), and a None before the index
    return x[i] * 2, x[i, j], x[:, j], x[j.view(3, 1)]


def masked_put_value(x, m, v):
    x[m] = v  # v 0-d: Inductor keeps index_put with the bool mask


def masked_put_rows(x, m, v):
    x[m] = v  # a row mask, one row of values for every selected row


def masked_put_accumulate(x, m, v):
    x.index_put_((m,), v, accumulate=True)


def masked_index_put(x, m, v):
    y = x * 2
    y[:, m] = v  # a mask over dimension 1 (None before it), values broadcast over the selection
    return y + 1


def compare_promotion(i, f, h, s, b):
    # i64 against f32 compares in f32 (16777217 == 16777216.0); an f16 tensor against a float
    # scalar in f16; a 0-d f32 branch of an f16 where stays f16; a bool tensor against an int
    return i == f, h < 0.1, h >= 0.1, torch.where(h > 0, h, s), b == 1, torch.logical_and(i, h[:1])


# ----- numbers exactly: constants as Python prints them, scalars and 0-d tensors as PyTorch promotes them -----
# Constants drawn once when this file is imported (a fresh draw at each capture): ctfx must read
# each exactly as Python does, whatever its digits.
_RNG = __import__("random").Random()
RANDOM_DOUBLES = [_RNG.random() for _ in range(12)] + [_RNG.uniform(-1e300, 1e300), _RNG.uniform(-1e-300, 1e-300)]


def exact_float_constants(x):
    # f64: 1/24 (a repr of 17 digits), finfo.max / tiny / the smallest subnormal, random doubles
    fi = torch.finfo(torch.float64)
    y = x * 0.041666666666666664
    big = torch.where(x > 0, x * 0 + fi.max, x * 0 + fi.min)
    small = x * fi.tiny + 5e-324
    acc = x
    for c in RANDOM_DOUBLES:
        acc = acc * c + c
    return y, big, small, acc


def exact_int_constants(x):
    # i64: 2**53 + 1, 10**17 + 1, int64's max and min, as Python ints
    a = x + 9007199254740993
    b = x == 9007199254740993
    c = torch.where(x > 0, x, torch.full([], 9223372036854775807, dtype=torch.int64))
    d = x * 3 - (10**17 + 1)
    e = torch.where(x < 0, torch.full([], -9223372036854775808, dtype=torch.int64), x)
    return a, b, c, d, e


def hf_attention_mask_f64(scores, keep):
    # a fully masked row filled with finfo.min stays finite: softmax's shifted logits are 0 there, not
    # nan (its exp is left out: PyTorch's f64 exp is SLEEF's, 1 ulp from the correctly rounded one)
    s = scores.masked_fill(~keep, torch.finfo(torch.float64).min)
    m = s.amax(-1, keepdim=True)
    return s - m, m


def scalar_promotion_half(h):
    # a Python float meets f16: converted to the tensor's dtype first, except by mul and div (bf16
    # has no NumPy dtype to hold its values: test/unit's promotion table covers it)
    return (h + 0.1234567, h - 3.3333333, h * 0.1234567, h / 3.3333333, h < 0.1234567, h == 0.0999755859375,
            h >= 3.3333333, torch.clamp(h, 0.1234567, 0.7777777), torch.remainder(h, 0.3333333), h + 70000,
            torch.maximum(h, torch.tensor(0.1234567)))


def scalar_promotion_int(i8, i32):
    # an int scalar wraps to the tensor's type (300 is 44 in i8; 2**40 is 0 in i32)
    return i8 * 300, i8 + 1000, i32 == 2**40, i32 + 2**40 + 5, i32 - 2**33, i8 > 200


def zero_dim_compare(h, s, i, n):
    # a 0-d tensor of a wider dtype joins the dimensioned operand's dtype before comparing
    return h < s, h >= s, h == s, i < n, i == n


def sign_and_divisions(x, y, i, j):
    # sign (nan -> 0, -0.0 -> +0.0); floor and trunc division of floats and ints, by tensors and numbers,
    # negative operands, zero divisors of floats; a paged KV cache's block index pos // block_size
    return (torch.sign(x), torch.div(x, y, rounding_mode="floor"), torch.div(x, y, rounding_mode="trunc"), x // 0.75,
            torch.div(i, j, rounding_mode="floor"), torch.div(i, j, rounding_mode="trunc"), i // 16, torch.sign(i),
            torch.div(x.half(), 0.3, rounding_mode="floor"))


def nan_inf_reciprocal_xor(x, i, m):
    # isnan / isinf (nan_to_num's tests), reciprocal of floats and ints, logical_xor of bools and numbers
    return torch.isnan(x), torch.isinf(x), torch.reciprocal(x), torch.reciprocal(i), torch.logical_xor(m, x > 0), torch.logical_xor(i, x)


def foreach_half_scalars(a, b):
    # f16 lists and a Python float: _foreach_add converts it to f16 as add does, _foreach_mul does not
    x = torch._foreach_add([a, b], 0.1234567)
    y = torch._foreach_mul([a, b], 0.1234567)
    return x[0], x[1], y[0], y[1]


def scalar_first_ops(x, i, h):
    # a number as the first operand: sub.Tensor(1, x), div.Tensor(2, x), ... (rsub, rdiv)
    return 1 - x, 2 - i, 2 / x, 1.5 - i, 0.1 - h, 7 / i, 3 % i


def float_to_int_casts(x, h):
    # truncation toward zero; NaN and values out of 32 (64) bits are INT_MIN on x86; an int8 keeps
    # the low byte of the 32-bit integer (200.0 -> -56)
    return x.to(torch.int32), x.to(torch.int64), x.to(torch.int8), x.to(torch.bool), h.to(torch.int8), h.to(torch.int32)


def int_to_float_unary(i, j, m):
    # exp, log, sqrt, ... of integer and bool tensors compute in, and give, f32
    return i.exp(), i.log(), j.sqrt(), j.sigmoid(), m.tanh(), i.rsqrt(), j.sin(), m.cos()


def embedding_lookup(w, ids, ids32, x, j):
    # an embedding table read by int64 and int32 ids (2-d), and index_select on dims 0 and 1
    e = torch.nn.functional.embedding(ids, w)
    return e * 2, torch.nn.functional.embedding(ids32, w, padding_idx=0), x.index_select(1, j), x.index_select(0, j[2:]) + 1


def squeeze_any_all(x, m, y):
    # squeeze() of every size-1 dim and of a list; any/all of bools and of floats (NaN is true), by dim
    return (x.squeeze() * 2, x.squeeze((0, 2)) + 1, m.any(), m.all(), m.any(1), m.all(0, keepdim=True),
            y.any(), y.all(-1), (y > 0).all())


# ----- optimizer steps as torch.optim writes them (single-tensor and foreach): add/sub with alpha,
# lerp, addcmul, addcdiv, the list ops. Captured with Dynamo's own decompositions off
# ({"dynamo_decompositions": False}): with them on, Dynamo rewrites `x.addcmul_(a, b, value=v)` as
# fma(a * b, v, x) and `x.addcdiv_(a, b, value=v)` as fma(a / b, v, x), which round otherwise than
# PyTorch eager (fma(v * a, b, x); x + (v * a) / b), so the graph itself would differ from eager.
# Sizes 37 and 130: not multiples of a vector width (f32/f64 results are position independent).
def optim_sgd_momentum(p, g, buf):
    # SGD: weight decay, momentum with dampening, Nesterov (torch/optim/sgd.py, _single_tensor_sgd)
    lr, wd, momentum, dampening = 0.05, 1e-2, 0.9, 0.1
    g = g.add(p, alpha=wd)
    buf.mul_(momentum).add_(g, alpha=1 - dampening)
    g = g.add(buf, alpha=momentum)
    p.add_(g, alpha=-lr)


def optim_adamw(p, g, m, v):
    # AdamW at step 3 (torch/optim/adam.py, _single_tensor_adam with decoupled weight decay)
    lr, b1, b2, eps, wd, step = 1e-3, 0.9, 0.999, 1e-8, 1e-2, 3
    p.mul_(1 - lr * wd)
    m.lerp_(g, 1 - b1)
    v.mul_(b2).addcmul_(g, g.conj(), value=1 - b2)
    bc1, bc2 = 1 - b1**step, 1 - b2**step
    denom = (v.sqrt() / (bc2**0.5)).add_(eps)
    p.addcdiv_(m, denom, value=-(lr / bc1))


def optim_adam_foreach(p1, p2, g1, g2, m1, m2, v1, v2):
    # Adam, foreach (torch/optim/adam.py, _multi_tensor_adam) with decoupled weight decay
    params, grads, ms, vs = [p1, p2], [g1, g2], [m1, m2], [v1, v2]
    lr, b1, b2, eps, wd, step = 1e-3, 0.9, 0.999, 1e-8, 1e-2, 3
    torch._foreach_mul_(params, 1 - lr * wd)
    torch._foreach_lerp_(ms, grads, 1 - b1)
    torch._foreach_mul_(vs, b2)
    torch._foreach_addcmul_(vs, grads, grads, 1 - b2)
    bc1, bc2 = 1 - b1**step, 1 - b2**step
    denom = torch._foreach_sqrt(vs)
    torch._foreach_div_(denom, bc2**0.5)
    torch._foreach_add_(denom, eps)
    torch._foreach_addcdiv_(params, ms, denom, -(lr / bc1))


def optim_adagrad(p, g, state_sum):
    # Adagrad at step 2 with weight decay (torch/optim/adagrad.py, _single_tensor_adagrad)
    lr, wd, lr_decay, eps, step = 1e-2, 1e-3, 1e-4, 1e-10, 2
    g = g.add(p, alpha=wd)
    clr = lr / (1 + (step - 1) * lr_decay)
    state_sum.addcmul_(g, g, value=1)
    std = state_sum.sqrt().add_(eps)
    p.addcdiv_(g, std, value=-clr)


def optim_clip_step(p1, p2, g1, g2, coef):
    # clip_grad_norm_'s scaling by a clamped 0-d coefficient (_foreach_mul_ by a tensor), then a
    # foreach SGD step (_foreach_add_ with alpha), and the same step written with _foreach_sub
    grads = [g1, g2]
    torch._foreach_mul_(grads, coef.clamp(max=1.0))
    torch._foreach_add_([p1, p2], grads, alpha=-0.1)
    s = torch._foreach_sub([p1, p2], grads, alpha=0.01)
    d = torch._foreach_div([p1, p2], 3.0)
    e = torch._foreach_sub([p1, p2], 0.25)
    return s[0], s[1], d[0], e[1]


def lerp_tensor_sub_alpha(s, e, w, x, y, i, j):
    # lerp with a tensor weight (both branches, 0.5 itself, negatives), with numbers on either side
    # of 0.5, sub/add with alpha (floats and integers, which wrap), addcmul with the default value
    return (torch.lerp(s, e, w), torch.lerp(s, e, 0.75), torch.lerp(s, e, -0.25), torch.sub(x, y, alpha=0.3),
            torch.add(x, y, alpha=-2.5), torch.sub(i, j, alpha=3), torch.add(i, j, alpha=-7), torch.addcmul(s, e, w),
            torch.addcdiv(s, e, w.abs() + 0.5))


def _optim_inputs(n, dt):
    return lambda: (R(n, dtype=dt), R(n, dtype=dt), R(n, dtype=dt) * 0.1)


def _adam_inputs(n, dt):
    return lambda: (R(n, dtype=dt), R(n, dtype=dt), R(n, dtype=dt) * 0.1, R(n, dtype=dt).abs() * 0.01)


def _lerp_inputs(n, dt):
    def make():
        w = R(n, dtype=dt)
        w[0], w[1], w[2], w[3] = 0.5, -0.5, 0.49999997, 1.0
        i = torch.randint(-2**62, 2**62, (n,))
        i[0] = 2**63 - 1
        return (R(n, dtype=dt), R(n, dtype=dt) * 100, w, R(n, dtype=dt), R(n, dtype=dt), i, torch.randint(-2**62, 2**62, (n,)))
    return make


NO_DYNAMO_DECOMPS = {"dynamo_decompositions": False}
F64 = torch.float64
PROGRAMS_OPTIM = [
    ("optim_sgd_momentum", optim_sgd_momentum, _optim_inputs(37, torch.float32), NO_DYNAMO_DECOMPS),
    ("optim_sgd_momentum_f64", optim_sgd_momentum, _optim_inputs(130, F64), NO_DYNAMO_DECOMPS),
    ("optim_adamw", optim_adamw, _adam_inputs(130, torch.float32), NO_DYNAMO_DECOMPS),
    ("optim_adamw_f64", optim_adamw, _adam_inputs(37, F64), NO_DYNAMO_DECOMPS),
    ("optim_adam_foreach", optim_adam_foreach,
     lambda: (R(37), R(130), R(37), R(130), R(37) * 0.1, R(130) * 0.1, R(37).abs() * 0.01, R(130).abs() * 0.01), NO_DYNAMO_DECOMPS),
    ("optim_adam_foreach_f64", optim_adam_foreach,
     lambda: tuple(R(n, dtype=F64).abs() * 0.01 if k >= 6 else R(n, dtype=F64) for k, n in enumerate([130, 37] * 4)), NO_DYNAMO_DECOMPS),
    ("optim_adagrad", optim_adagrad, lambda: (R(130), R(130), R(130).abs()), NO_DYNAMO_DECOMPS),
    ("optim_clip_step", optim_clip_step, lambda: (R(37), R(130), R(37), R(130), torch.tensor(0.37)), NO_DYNAMO_DECOMPS),
    ("lerp_tensor_sub_alpha", lerp_tensor_sub_alpha, _lerp_inputs(130, torch.float32), NO_DYNAMO_DECOMPS),
    ("lerp_tensor_sub_alpha_f64", lerp_tensor_sub_alpha, _lerp_inputs(37, F64), NO_DYNAMO_DECOMPS),
]


PROGRAMS_NUMBERS = [
    ("squeeze_any_all", squeeze_any_all,
     lambda: (torch.randn(1, 3, 1, 2), torch.tensor([[True, False, True], [True, True, True]]),
              torch.tensor([[0.0, float("nan"), -0.0], [1.5, 2.0, -3.0]])), {}),
    ("embedding_lookup", embedding_lookup,
     lambda: (torch.randn(10, 4), torch.tensor([[1, 0, 9], [9, 3, 3]]), torch.tensor([2, 0, 5], dtype=torch.int32),
              torch.randn(3, 5), torch.tensor([4, 0, 2, 1])), {}),
    ("int_to_float_unary", int_to_float_unary,
     lambda: (torch.tensor([0, 1, 2, 10, 88, 89, 3, 16777217]), torch.tensor([4, 0, 7, 2**30, 1, 9], dtype=torch.int32),
              torch.tensor([True, False, True])), {}),
    ("scalar_first_ops", scalar_first_ops,
     lambda: (torch.tensor([0.5, -0.0, 1.0, 3.0, float("nan"), 1e-8, -2.0, 0.1]),
              torch.tensor([1, -2, 3, -9, 2**40, -(2**40), 7, 5]),
              torch.tensor([0.1, 0.2, -0.3, 1000.5, 65504.0, -0.0, 0.0999, 2.0]).half()), {}),
    ("float_to_int_casts", float_to_int_casts,
     lambda: (torch.tensor([-1.7, 2.9, -0.5, 0.5, 127.9, -128.9, 200.0, 1000.0, -129.5, 3e9, -3e9, 2147483520.0,
                            -2147483648.0, 9.3e18, -9.3e18, float("nan"), float("inf"), -float("inf"), 0.0, -0.0]),
              torch.tensor([200.0, -300.5, 65504.0, float("nan"), -0.0, 127.5, float("inf"), 1000.0]).half()), {}),
    ("foreach_half_scalars", foreach_half_scalars, lambda: ((torch.randn(64) * 4).half(), (torch.randn(3, 8) * 4).half()), {}),
    ("sign_and_divisions", sign_and_divisions,
     lambda: (torch.tensor([7.0, -7.0, 7.5, -0.0, float("nan"), 1e30, -2.25, 5.0, 0.0, -3.0]),
              torch.tensor([2.0, 2.0, -2.0, 3.0, 1.0, 3.0, 0.5, 0.0, 0.0, -0.0]),
              torch.tensor([7, -7, 7, -9, 0, 100, -1, 2**40, -2**40, 13]),
              torch.tensor([2, 2, -2, 4, 5, -7, 3, 3, -3, 13])), {}),
    ("nan_inf_reciprocal_xor", nan_inf_reciprocal_xor,
     lambda: (torch.tensor([1.5, float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 3.0, -2.0]),
              torch.tensor([1, 0, 3, -4, 7, 0, -1, 2]),
              torch.tensor([True, False, True, False, True, True, False, False])), {}),
    ("exact_float_constants", exact_float_constants,
     lambda: (torch.tensor([1.0, -2.5, 3.0e-3, 0.0, -0.0, 7.0], dtype=torch.float64),), {}),
    ("exact_int_constants", exact_int_constants,
     lambda: (torch.tensor([0, 9007199254740992, -5, 12345678901234, 1, -9007199254740993]),), {}),
    ("hf_attention_mask_f64", hf_attention_mask_f64,
     lambda: (torch.randn(2, 3, 5, dtype=torch.float64), torch.tensor([[True] * 5, [False] * 5, [True, False] * 2 + [True]]).expand(2, 3, 5).clone()), {}),
    ("scalar_promotion_half", scalar_promotion_half,
     lambda: ((torch.randn(64) * 4).half(),), {}),
    ("scalar_promotion_int", scalar_promotion_int,
     lambda: (torch.randint(-128, 128, (16,), dtype=torch.int8), torch.randint(-2**31, 2**31, (16,), dtype=torch.int32)), {}),
    ("zero_dim_compare", zero_dim_compare,
     lambda: (torch.tensor([0.1, 0.0999, 0.1001, -1.0], dtype=torch.float16), torch.tensor(0.1),
              torch.tensor([3, 4, -1, 2**31 - 1], dtype=torch.int32), torch.tensor(2**32 + 3)), {}),
]


# ----- result layouts: permuted, strided and broadcast operands (PyTorch's stride rules) -----
def t_slice_add_(x):
    x.t()[1:3] += 1


def clone_permuted_slice(x):
    return x.t()[1:4].clone() * 2


def permute_add(x):
    return x.permute(2, 0, 1) + 1


def permuted_plus_contig(x, y):
    return x.t() + y


def contig_plus_permuted(y, x):
    return y + x.t()


def two_permuted(x, y):
    return x.permute(1, 0, 2) * y.permute(1, 0, 2)


def mixed_perms(x, y):
    return x.permute(2, 1, 0) - y.permute(1, 2, 0)


def broadcast_permuted_row(x, b):
    return x.t() + b


def broadcast_col_permuted(b, x):
    return b * x.t()


def broadcast_three(x, r, c):
    return x.t() + r + c


def column_mul_(x):
    x[:, 1].mul_(2)


def column_add_(x, y):
    x[:, 2] += y
    return x * 1


def column_custom(x):
    add_one_(x[:, 1])


def column_custom_clone(x):
    y = x.clone()
    add_one_(y[:, 1])
    return y


def empty_like_permuted(x):
    out = torch.empty_like(x.t())
    out.copy_(x.t() * 2)
    return out


def empty_like_nondense(x):
    v = x[:, 1:4]
    out = torch.empty_like(v)
    out.copy_(v)
    return out + 1


def channels_last_relu(x):
    return torch.relu(x) + 1


def channels_last_plus_contig(x, y):
    return x + y


def contig_plus_channels_last(y, x):
    return y * x


def channels_last_clone(x):
    return x.clone() + x


def channels_last_broadcast(x, b):
    return x * b


def fortran_mul(x):
    return x * 3


def fortran_3d_add(x, y):
    return x + y


def fortran_plus_contig(x, y):
    return x - y


def scatter_strided_select(x, y):
    x.t()[1] = y


def scatter_strided_slice(x, z):
    x.t()[:, 2:4] = z


def scatter_col_of_permuted(x, y):
    x[:, 1] = y
    return x + 0


def where_permuted(x, y):
    return torch.where(x.t() > 0, x.t(), y)


def where_broadcast_permuted(x, y):
    return torch.where(y > 0, x.t(), 0.0)


def compare_permuted(x, y):
    return x.t() > y, x.t() == x.t()


def convert_permuted(x):
    return x.permute(1, 0, 2).to(torch.float64) * 2, x.permute(2, 0, 1).half()


def convert_nondense(x):
    return x[:, 1:4].to(torch.float64)


def neg_nondense(x):
    return -x[:, 1:4], x[1:3, 2:].abs()


def expand_permuted(x):
    return x.t().unsqueeze(0).expand(2, 4, 3) + 1


def size_one_dims(x):
    return x.t().unsqueeze(1) * 2


def zero_dim_mix(x, s):
    return x.t() * s, s + x.permute(1, 0)


def fill_column(x):
    x[:, 1].fill_(0.5)
    return x * 1


def diagonal_scatter_permuted(x, d):
    x.t().diagonal().copy_(d)


def contiguous_of_permuted(x):
    return x.t().contiguous() + 1


def return_view_of_result(x):
    return (x.t() + 1)[1:3]


def maximum_permuted(x, y, z):
    return torch.maximum(x.t(), y.t()), torch.minimum(x.t(), z)


def clamp_permuted(x):
    return x.permute(2, 0, 1).clamp(-0.5, 0.5)


def logical_permuted(x, y):
    return torch.logical_and(x.t() > 0, y > 0), torch.logical_not(x.t() > 0)


def clone_then_inplace(x):
    y = x.t().clone()
    y[0] += 1
    return y


def t_mutate_return(x):
    x.t().mul_(2)
    return x + 1


def t_slice_copy(x, y):
    x.t()[1:3] = y


def permuted_result_inplace(x):
    y = x.permute(1, 0) * 1
    y.add_(1)
    return y


def index_put_permuted(x, idx, v):
    x.t()[idx] = v


def sum_permuted(x):
    return x.permute(2, 0, 1).sum(1), (x.permute(1, 0, 2) * 2).sum(0)


def slice_of_permuted_inplace(x):
    x.permute(1, 0, 2)[0:2].add_(1)


def chain_permuted(x):
    return (x.permute(2, 0, 1) * 2).abs() + 1


def step_slice_clone(x):
    return x[:, ::2].clone() + x[:, ::2]


def equal_strides_tie(x):
    return x.expand(3, 4) + 1, x.t() * 2


def cat_channels_last_dim0(x, y):
    return torch.cat([x, y], 0)


def cat_channels_last_dim1(x, y):
    return torch.cat([x, y], 1) * 2


def cat_channels_last_dim3(x, y):
    return torch.cat([x, y], 3) + 1


def cat_channels_last_plus_contig(x, y):
    return torch.cat([x, y], 1) + 1


def cat_channels_last_of_ops(x, y):
    return torch.cat([torch.relu(x) + 1, x * y], 1) * 0.5, torch.cat([x - y, y * 2], 0)


def cat_channels_last_3d(x, y):
    return torch.cat([x, y], 2) + 1


def foreach_add_permuted(a, b, c, s):
    return torch._foreach_add([a, b.t(), s.expand(4, 3)], [c, c, a])


def foreach_mul_permuted(a, b, c, s):
    return (*torch._foreach_mul([a, s.expand(3, 4)], [c.t(), b.t()]), *torch._foreach_mul([b.t(), a], 3.0))


def with_nan(*shape):
    t = torch.randn(*shape)
    t.view(-1)[1] = float("nan")
    t.view(-1)[2] = 0.5
    return t


I64 = torch.int64
PROGRAMS = [
    *PROGRAMS_NUMBERS,
    *PROGRAMS_OPTIM,
    ("compare_ops", compare_ops, lambda: (with_nan(3, 4), with_nan(3, 4), torch.arange(-6, 6).reshape(3, 4)), {}),
    ("logical_ops", logical_ops, lambda: (with_nan(3, 4), torch.randn(3, 4)), {}),
    ("where_ops", where_ops, lambda: (with_nan(3, 4), torch.randn(4)), {}),
    ("clamp_ops", clamp_ops, lambda: (with_nan(3, 4), with_nan(3, 4)), {}),
    ("maximum_minimum_full", maximum_minimum_full, lambda: (with_nan(3, 4), torch.randn(3, 4)), {}),
    # eighths: every partial sum is exact, so the values do not depend on the order PyTorch's
    # vectorized sum folds in (ctfx folds in row-major order); the division is what is compared
    ("mean_dims", mean_dims, lambda: (torch.randint(-64, 64, (3, 37, 5)).float() / 8,), {}),
    ("index_gather", index_gather, lambda: (torch.randn(5, 4), torch.tensor([0, 3, -1]), torch.tensor([1, -4, 2])), {}),
    ("masked_put_value", masked_put_value, lambda: (torch.randn(5, 4), torch.randn(5, 4) > 0, torch.tensor(2.5)), {}),
    ("masked_put_rows", masked_put_rows, lambda: (torch.randn(5, 4), torch.tensor([True, False, True, True, False]), torch.randn(4)), {}),
    ("masked_put_accumulate", masked_put_accumulate, lambda: (torch.randn(5, 4), torch.randn(5, 4) > 0, torch.tensor(0.1)), {}),
    ("masked_index_put", masked_index_put, lambda: (torch.randn(3, 5, 4), torch.randn(5) > 0, torch.randn(3, 1, 4)), {}),
    ("compare_promotion", compare_promotion,
     lambda: (torch.tensor([16777217, 3, -2, 0]), torch.tensor([16777216.0, 3.0, 2.0, 0.5]),
              torch.tensor([0.1, 0.0999, -1.0, 2.0], dtype=torch.float16), torch.tensor(0.3), torch.tensor([True, False, True, False])), {}),
    ("masked_fill_put", masked_fill_put, lambda: (torch.randn(5, 4), torch.randn(5, 4) > 0), {}),
    ("index_put_copy", index_put_copy, lambda: (torch.randn(8, 4), torch.tensor([1, 5]), torch.randn(2, 4)), {}),
    ("index_put_accumulate", index_put_accumulate, lambda: (torch.randn(8, 4), torch.tensor([1, 1, 6]), torch.randn(3, 4)), {}),
    ("slice_scatter_chain", slice_scatter_chain, lambda: (torch.randn(8, 4), torch.randn(2, 4), torch.randn(2, 4)), {}),
    ("select_scatter", select_scatter, lambda: (torch.randn(4, 6), torch.randn(4)), {}),
    ("select_scatter_row", select_scatter_row, lambda: (torch.randn(6, 4), torch.randn(4)), {}),
    ("kv_cache_index", kv_cache_index, lambda: (torch.randn(2, 3, 16, 4), torch.randn(2, 3, 1, 4), torch.tensor([5])), {}),
    ("kv_cache_slice", kv_cache_slice, lambda: (torch.randn(2, 3, 16, 4), torch.randn(2, 3, 1, 4)), {}),
    ("halo_exchange", halo_exchange, lambda: (torch.randn(6, 7),), {}),
    ("clone_noop", clone_noop, lambda: (torch.randn(4, 8),), {}),
    ("clone_returned", clone_returned, lambda: (torch.randn(4, 8),), {}),
    ("alias_views", alias_views, lambda: (torch.randn(32),), {}),
    ("foreach_add", foreach_add, lambda: tuple(torch.randn(4, 3) for _ in range(4)), {}),
    ("foreach_add_inplace", foreach_add_inplace, lambda: tuple(torch.randn(5) for _ in range(4)), {}),
    ("factories", factories, lambda: (torch.randn(4, 8),), {}),
    ("cat_sum", cat_sum, lambda: (torch.randn(2, 5), torch.randn(3, 5)), {}),
    ("expand_unsqueeze", expand_unsqueeze, lambda: (torch.randn(4, 8), torch.randn(3, 4, 8)), {}),
    ("diagonal_scatter", diagonal_scatter, lambda: (torch.randn(5, 5), torch.randn(5)), {}),
    ("convert_and_mul", convert_and_mul, lambda: (torch.randn(3, 4),), {}),
    ("dynamic_slice", dynamic_slice, lambda: (torch.randn(9, 4),), {"dynamic": True}),
    ("dynamic_update", dynamic_update, lambda: (torch.randn(7, 4), torch.randn(4)), {"dynamic": True}),
    ("inplace_custom_op", inplace_custom_op, lambda: (torch.randn(3, 3),), {}),
    ("inplace_custom_op_intermediate", inplace_custom_op_intermediate, lambda: (torch.randn(3, 3),), {}),
    ("inplace_custom_op_two_mutated", inplace_custom_op_two_mutated, lambda: (torch.randn(3, 3),), {}),
    ("inplace_custom_op_input", inplace_custom_op_input, lambda: (torch.randn(3, 3),), {}),
    ("view_inplaced", view_inplaced, lambda: (torch.randn(4),), {}),
    ("multiple_intermediate", multiple_intermediate, lambda: (torch.randn(3, 3),), {}),
    ("index_put_chain", index_put_chain,
     lambda: (torch.randn(8, 4), torch.tensor([0, 2]), torch.randn(2, 4), torch.tensor([2, 7]), torch.randn(2, 4)), {}),
    ("unsafe_index_put_like", unsafe_index_put_like, lambda: (torch.randn(6, 3), torch.tensor([4, 1]), torch.randn(2, 3)), {}),
]

CL = torch.channels_last


def fortran(*shape):
    return R(*reversed(shape)).permute(*reversed(range(len(shape))))


PROGRAMS += [
    ("layout_t_slice_add_", t_slice_add_, lambda: (R(4, 5),), {}),
    ("layout_clone_permuted_slice", clone_permuted_slice, lambda: (R(4, 6),), {}),
    ("layout_permute_add", permute_add, lambda: (R(2, 3, 4),), {}),
    ("layout_permuted_plus_contig", permuted_plus_contig, lambda: (R(3, 4), R(4, 3)), {}),
    ("layout_contig_plus_permuted", contig_plus_permuted, lambda: (R(4, 3), R(3, 4)), {}),
    ("layout_two_permuted", two_permuted, lambda: (R(2, 3, 4), R(2, 3, 4)), {}),
    ("layout_mixed_perms", mixed_perms, lambda: (R(2, 3, 4), R(2, 4, 3)), {}),
    ("layout_broadcast_permuted_row", broadcast_permuted_row, lambda: (R(3, 4), R(3)), {}),
    ("layout_broadcast_col_permuted", broadcast_col_permuted, lambda: (R(4, 1), R(3, 4)), {}),
    ("layout_broadcast_three", broadcast_three, lambda: (R(3, 4), R(4, 1), R(1, 3)), {}),
    ("layout_column_mul_", column_mul_, lambda: (R(4, 5),), {}),
    ("layout_column_add_", column_add_, lambda: (R(4, 5), R(4)), {}),
    ("layout_column_custom", column_custom, lambda: (R(4, 5),), {}),
    ("layout_column_custom_clone", column_custom_clone, lambda: (R(4, 5),), {}),
    ("layout_empty_like_permuted", empty_like_permuted, lambda: (R(3, 5),), {}),
    ("layout_empty_like_nondense", empty_like_nondense, lambda: (R(4, 6),), {}),
    ("layout_channels_last_relu", channels_last_relu, lambda: (R(2, 3, 4, 5).to(memory_format=CL),), {}),
    ("layout_channels_last_plus_contig", channels_last_plus_contig, lambda: (R(2, 3, 4, 5).to(memory_format=CL), R(2, 3, 4, 5)), {}),
    ("layout_contig_plus_channels_last", contig_plus_channels_last, lambda: (R(2, 3, 4, 5), R(2, 3, 4, 5).to(memory_format=CL)), {}),
    ("layout_channels_last_clone", channels_last_clone, lambda: (R(2, 3, 4, 5).to(memory_format=CL),), {}),
    ("layout_channels_last_broadcast", channels_last_broadcast, lambda: (R(2, 3, 4, 5).to(memory_format=CL), R(3, 1, 1)), {}),
    ("layout_fortran_mul", fortran_mul, lambda: (fortran(4, 5),), {}),
    ("layout_fortran_3d_add", fortran_3d_add, lambda: (fortran(2, 3, 4), fortran(2, 3, 4)), {}),
    ("layout_fortran_plus_contig", fortran_plus_contig, lambda: (fortran(3, 5), R(3, 5)), {}),
    ("layout_scatter_strided_select", scatter_strided_select, lambda: (R(4, 5), R(4)), {}),
    ("layout_scatter_strided_slice", scatter_strided_slice, lambda: (R(6, 5), R(5, 2)), {}),
    ("layout_scatter_col_of_permuted", scatter_col_of_permuted, lambda: (fortran(4, 5), R(4)), {}),
    ("layout_where_permuted", where_permuted, lambda: (R(3, 4), R(4, 3)), {}),
    ("layout_where_broadcast_permuted", where_broadcast_permuted, lambda: (R(3, 4), R(3)), {}),
    ("layout_compare_permuted", compare_permuted, lambda: (R(3, 4), R(4, 3)), {}),
    ("layout_convert_permuted", convert_permuted, lambda: (R(3, 4, 2),), {}),
    ("layout_convert_nondense", convert_nondense, lambda: (R(3, 6),), {}),
    ("layout_neg_nondense", neg_nondense, lambda: (R(4, 6),), {}),
    ("layout_expand_permuted", expand_permuted, lambda: (R(3, 4),), {}),
    ("layout_size_one_dims", size_one_dims, lambda: (R(3, 4),), {}),
    ("layout_zero_dim_mix", zero_dim_mix, lambda: (R(3, 4), torch.tensor(1.5)), {}),
    ("layout_fill_column", fill_column, lambda: (R(4, 5),), {}),
    ("layout_diagonal_scatter_permuted", diagonal_scatter_permuted, lambda: (fortran(4, 4), R(4)), {}),
    ("layout_contiguous_of_permuted", contiguous_of_permuted, lambda: (R(3, 4),), {}),
    ("layout_return_view_of_result", return_view_of_result, lambda: (R(3, 4),), {}),
    ("layout_maximum_permuted", maximum_permuted, lambda: (with_nan(3, 4), R(3, 4), R(4, 3)), {}),
    ("layout_clamp_permuted", clamp_permuted, lambda: (R(3, 4, 2),), {}),
    ("layout_logical_permuted", logical_permuted, lambda: (R(3, 4), R(4, 3)), {}),
    ("layout_clone_then_inplace", clone_then_inplace, lambda: (R(3, 4),), {}),
    ("layout_t_mutate_return", t_mutate_return, lambda: (R(3, 4),), {}),
    ("layout_t_slice_copy", t_slice_copy, lambda: (R(4, 5), R(2, 4)), {}),
    ("layout_permuted_result_inplace", permuted_result_inplace, lambda: (R(3, 4),), {}),
    ("layout_index_put_permuted", index_put_permuted, lambda: (R(4, 5), torch.tensor([0, 3]), R(2, 4)), {}),
    ("layout_sum_permuted", sum_permuted, lambda: ((torch.randint(-64, 64, (3, 4, 5)).float() / 8),), {}),
    ("layout_slice_of_permuted_inplace", slice_of_permuted_inplace, lambda: (R(3, 4, 2),), {}),
    ("layout_chain_permuted", chain_permuted, lambda: (R(3, 4, 2),), {}),
    ("layout_step_slice_clone", step_slice_clone, lambda: (R(3, 8),), {}),
    ("layout_equal_strides_tie", equal_strides_tie, lambda: (R(1, 4), ), {}),
    ("layout_cat_channels_last_dim0", cat_channels_last_dim0, lambda: (R(2, 3, 4, 5).to(memory_format=CL), R(1, 3, 4, 5).to(memory_format=CL)), {}),
    ("layout_cat_channels_last_dim1", cat_channels_last_dim1, lambda: (R(2, 3, 4, 5).to(memory_format=CL), R(2, 2, 4, 5).to(memory_format=CL)), {}),
    ("layout_cat_channels_last_dim3", cat_channels_last_dim3, lambda: (R(2, 3, 4, 5).to(memory_format=CL), R(2, 3, 4, 2).to(memory_format=CL)), {}),
    ("layout_cat_channels_last_plus_contig", cat_channels_last_plus_contig, lambda: (R(2, 3, 4, 5).to(memory_format=CL), R(2, 2, 4, 5)), {}),
    ("layout_cat_channels_last_of_ops", cat_channels_last_of_ops, lambda: (R(2, 3, 4, 5).to(memory_format=CL), R(2, 3, 4, 5).to(memory_format=CL)), {}),
    ("layout_cat_channels_last_3d", cat_channels_last_3d, lambda: (R(2, 3, 2, 3, 4).to(memory_format=torch.channels_last_3d), R(2, 3, 1, 3, 4).to(memory_format=torch.channels_last_3d)), {}),
    ("layout_foreach_add_permuted", foreach_add_permuted, lambda: (fortran(4, 3), R(3, 4), R(4, 3), R(1, 1)), {}),
    ("layout_foreach_mul_permuted", foreach_mul_permuted, lambda: (fortran(3, 4), R(4, 3), R(4, 3), R(1, 4)), {}),
]


# Dynamic shapes (torch.compile(dynamic=True)): sizes as PyTorch writes them — floor division,
# modulo, Max/Min, negative and symbolic slice bounds, reshape(-1), cat of dynamic inputs. Each
# is captured once and checked at its traced size and at the sizes of opts["sizes"] (extra
# argument makers, files <name>.size<k>.*); those sizes keep the guards the trace relies on
# (e.g. an even length where the graph divides by 2).


def dyn_floordiv_view(x):
    return x.view(x.shape[0] // 2, 2, x.shape[1]).sum(1)


def dyn_half_split(x):
    h = x.shape[0] // 2
    return x[:h] * 2, x[h:] + 1


def dyn_last_row(x):
    return x[-1] * 3


def dyn_last_col(x):
    return x[:, -1] + x[:, 0]


def dyn_drop_last(x):
    return x[1:] - x[:-1]


def dyn_inner(x):
    return x[1:-1, 1:-1] * 2


def dyn_reshape_flat(x):
    return x.reshape(-1) * 2


def dyn_reshape_flat3(x):
    return x.reshape(-1) + 1


def dyn_reshape_infer(x):
    return x.reshape(-1, 4) * 2


def dyn_cat_two(a, b):
    return torch.cat([a, b]) * 2


def dyn_cat_three(a, b, c):
    return torch.cat([a, b, c]) + 1


def dyn_cat_cols(a, b):
    return torch.cat([a, b], 1) * 2


def dyn_cat_drop_first(a, b):
    return torch.cat([a, b])[1:] * 2


def dyn_cat_flat(a, b):
    return torch.cat([a, b])[1:].reshape(-1) + 1


def dyn_mod_trim(x):
    n = x.shape[0]
    return x[: n - n % 4].view(-1, 4, x.shape[1]).sum(1)


def dyn_mod_tail(x):
    return x[x.shape[0] - x.shape[0] % 3:] * 2


def dyn_min_head(x):
    return x[: min(x.shape[0], 5)] * 2


def dyn_max_head(x):
    return x[: max(x.shape[0] - 3, 2)] + 1


def dyn_last_three(x):
    return x[-3:] * 2


def dyn_step_slice(x):
    return x[::2] * 2


def dyn_step_slice3(x):
    return x[1::3] + 1


def dyn_narrow_mid(x):
    return x.narrow(0, 1, x.shape[0] - 2) * 2


def dyn_middle_third(x):
    n = x.shape[0]
    return x[n // 3: 2 * n // 3] + 1


def dyn_ceil_half(x):
    return x[: (x.shape[0] + 1) // 2] * 2




def dyn_stack_two(a, b):
    return torch.stack([a, b]) * 2


def dyn_unflatten(x):
    return x.unflatten(0, (-1, 2)).sum(1)



def dyn_flatten2(x):
    return x.reshape(x.shape[0] * x.shape[1]) * 2


def dyn_pairs(x):
    return x[0::2] + x[1::2]


def dyn_window(x):
    n = x.shape[0]
    return x[n // 4: n - n // 4] * 2


def dyn_expand(x, y):
    return x.expand(y.shape[0], x.shape[1]) + y


PROGRAMS += [
    ("dyn_floordiv_view", dyn_floordiv_view, lambda: (R(8, 3),), {"dynamic": True, "sizes": [lambda: (R(12, 5),)]}),
    ("dyn_half_split", dyn_half_split, lambda: (R(7, 3),), {"dynamic": True, "sizes": [lambda: (R(10, 4),)]}),
    ("dyn_last_row", dyn_last_row, lambda: (R(5, 3),), {"dynamic": True, "sizes": [lambda: (R(9, 4),)]}),
    ("dyn_last_col", dyn_last_col, lambda: (R(5, 3),), {"dynamic": True, "sizes": [lambda: (R(4, 7),)]}),
    ("dyn_drop_last", dyn_drop_last, lambda: (R(6, 3),), {"dynamic": True, "sizes": [lambda: (R(11, 2),)]}),
    ("dyn_inner", dyn_inner, lambda: (R(6, 5),), {"dynamic": True, "sizes": [lambda: (R(9, 4),)]}),
    ("dyn_reshape_flat", dyn_reshape_flat, lambda: (R(5, 3),), {"dynamic": True, "sizes": [lambda: (R(7, 6),)]}),
    ("dyn_reshape_flat3", dyn_reshape_flat3, lambda: (R(5, 3, 2),), {"dynamic": True, "sizes": [lambda: (R(3, 4, 6),)]}),
    ("dyn_reshape_infer", dyn_reshape_infer, lambda: (R(6, 8),), {"dynamic": True, "sizes": [lambda: (R(3, 12),)]}),
    ("dyn_cat_two", dyn_cat_two, lambda: (R(3, 4), R(5, 4)), {"dynamic": True, "sizes": [lambda: (R(6, 2), R(2, 2))]}),
    ("dyn_cat_three", dyn_cat_three, lambda: (R(3, 4), R(5, 4), R(2, 4)), {"dynamic": True, "sizes": [lambda: (R(4, 3), R(2, 3), R(6, 3))]}),
    ("dyn_cat_cols", dyn_cat_cols, lambda: (R(3, 4), R(3, 5)), {"dynamic": True, "sizes": [lambda: (R(5, 2), R(5, 6))]}),
    ("dyn_cat_drop_first", dyn_cat_drop_first, lambda: (R(3, 4), R(5, 4)), {"dynamic": True, "sizes": [lambda: (R(2, 6), R(4, 6))]}),
    ("dyn_cat_flat", dyn_cat_flat, lambda: (R(3, 4), R(5, 4)), {"dynamic": True, "sizes": [lambda: (R(2, 6), R(4, 6))]}),
    ("dyn_mod_trim", dyn_mod_trim, lambda: (R(11, 3),), {"dynamic": True, "sizes": [lambda: (R(17, 2),)]}),
    ("dyn_mod_tail", dyn_mod_tail, lambda: (R(11, 3),), {"dynamic": True, "sizes": [lambda: (R(14, 2),)]}),
    ("dyn_min_head", dyn_min_head, lambda: (R(8, 3),), {"dynamic": True, "sizes": [lambda: (R(3, 4),)]}),
    ("dyn_max_head", dyn_max_head, lambda: (R(8, 3),), {"dynamic": True, "sizes": [lambda: (R(4, 2),)]}),
    ("dyn_last_three", dyn_last_three, lambda: (R(8, 3),), {"dynamic": True, "sizes": [lambda: (R(5, 4),)]}),
    ("dyn_step_slice", dyn_step_slice, lambda: (R(7, 3),), {"dynamic": True, "sizes": [lambda: (R(10, 2),)]}),
    ("dyn_step_slice3", dyn_step_slice3, lambda: (R(8, 3),), {"dynamic": True, "sizes": [lambda: (R(12, 2),)]}),
    ("dyn_narrow_mid", dyn_narrow_mid, lambda: (R(7, 3),), {"dynamic": True, "sizes": [lambda: (R(4, 5),)]}),
    ("dyn_middle_third", dyn_middle_third, lambda: (R(10, 3),), {"dynamic": True, "sizes": [lambda: (R(14, 2),)]}),
    ("dyn_ceil_half", dyn_ceil_half, lambda: (R(7, 3),), {"dynamic": True, "sizes": [lambda: (R(10, 4),)]}),
    ("dyn_stack_two", dyn_stack_two, lambda: (R(3, 4), R(3, 4)), {"dynamic": True, "sizes": [lambda: (R(5, 2), R(5, 2))]}),
    ("dyn_unflatten", dyn_unflatten, lambda: (R(8, 3),), {"dynamic": True, "sizes": [lambda: (R(6, 5),)]}),
    ("dyn_flatten2", dyn_flatten2, lambda: (R(3, 4),), {"dynamic": True, "sizes": [lambda: (R(5, 7),)]}),
    ("dyn_pairs", dyn_pairs, lambda: (R(8, 3),), {"dynamic": True, "sizes": [lambda: (R(12, 5),)]}),
    ("dyn_window", dyn_window, lambda: (R(9, 3),), {"dynamic": True, "sizes": [lambda: (R(14, 2),)]}),
    ("dyn_expand", dyn_expand, lambda: (R(1, 4), R(3, 4)), {"dynamic": True, "sizes": [lambda: (R(1, 2), R(6, 2))]}),
]



# ----- reinplacing parity with Inductor (tools/parity) -----
def put_own_rows(x, i):  # the clone must survive no-op removal: x is written
    x.index_put_((i,), x[0:2].clone())


def slice_then_as_strided(x, s):  # the as_strided read realizes the slice write
    x[1:3] = s
    x.as_strided((2,), (5,), 0).add_(1)


# ----- tensor constants (values saved as <name>._tensor_constant<k>.npy) -----
def const_add(x):
    return x + torch.tensor([1., 2., 3.])


def const_index_put(x, v):
    x[torch.tensor([0, 2])] = v


def const_gather(x):
    return x[torch.tensor([2, 0, 2, -1])]


def const_where(x):
    return torch.where(torch.tensor([True, False, True]), x, torch.tensor([-1., -2., -3.]))


# ----- a wider set: ops -----
def gather_repeated(x, i):
    return x[i] * 2


def gather_negative(x, i):
    return x[i]


def gather_two_dims(x, i, j):
    return x[i, j]


def gather_middle_dim(x, i):
    return x[:, i]


def scalar_tensor_put(x, i):
    x[i] = 0.25
    return x.sum(0)


def full_plus(x):
    return torch.full((3, 4), 2.5) + x


def fill_input(x):
    x.fill_(3.0)


def fill_slice(x):
    x[1:3].fill_(7.0)


def fill_int(n):
    n[:, 0] = 5


def comparisons(x, y):
    return x >= y, x != 0.5, x < y, x.eq(y), x > 0


def int_comparisons(n, m):
    return n <= m, n == 3, n.ne(m)


def logical_mix(a, b):
    return a & b, a | ~b, torch.logical_not(a), torch.logical_and(a, b.logical_not())


def where_broadcast(x, y):
    return torch.where(x > 0, x, y)


def where_scalar(x):
    return torch.where(x > 0.5, 1.0, x)


def where_int(n, m):
    return torch.where(n > 0, n, m)


def mask_put_scalar(x):
    x[x < 0] = 0.0


def mask_put_tensor(x, m, v):
    x[m] = v


def clamp_both(x):
    return x.clamp(-0.5, 0.5)


def clamp_tensor(x, lo, hi):
    return torch.clamp(x, min=lo, max=hi)


def clamp_min_int(n):
    return n.clamp(min=0)


def minimum_maximum(x, y):
    return torch.minimum(x, y), torch.maximum(x, y)


# tanh_op, sigmoid_op and unary_chain (its sqrt) are compared within 1 ulp (CTFX_OPT_ULP in
# tools/ctfx_opt/CMakeLists.txt, ulp_allowed in test/unit/fx_values_test.cpp): PyTorch's tanh and
# exp are SLEEF's in vector lanes and libm's in a loop's tail, its x86 wheels' sqrt MKL VML's, not
# correctly rounded. pow_ops (x.pow(3) as x*x*x) is bit for bit.
def sigmoid_op(x):
    return torch.sigmoid(x)


def tanh_op(x):
    return torch.tanh(x)


def rsqrt_op(x):
    return torch.rsqrt(x)


def mean_all(x):
    return x.mean(), x.mean(1, keepdim=True)


def unary_chain(x):
    return x.abs().sqrt().neg(), x.exp(), x.relu()


def pow_ops(x):
    return x ** 2, x.pow(3)


def int_arith(n, m):
    return n + m, n * 3, n - m


def true_div_int(n):
    return n / 4


def convert_types(x):
    return x.to(torch.int32), (x > 0).float(), x.to(torch.float16)


def amax_sum(x):
    return x.amax(1), x.sum(0, keepdim=True)


def cat_two(x, y):
    return torch.cat([x, y], 1) + 1


def expand_add(x, y):
    return x.unsqueeze(1).expand(3, 4, 2) + y


def masked_fill_op(x, m):
    return x.masked_fill(m, 1.5)


def squeeze_permute(x):
    return x.squeeze(1).permute(1, 0) * 2


# ----- views after the copy_ epilogue -----
def epilogue_views(x):
    x[0] = 7
    return x[:, 1], x.t()


def epilogue_flat_view(x):
    x[:, 0] += 1
    return x.view(-1)[2:5]


def epilogue_add_views(x):
    x.add_(1)
    return x.unsqueeze(0), x[1]


def epilogue_view_and_value(x, v):
    x[1:3] = v
    return x[2], x.sum()


# ----- slice clamping -----
def slice_past_end(x):
    return x[2:100] * 2


def slice_negative_start(x):
    return x[-3:] + 1


def slice_negative_both(x):
    return x[-100:2], x[:, -2:-1]


def slice_write_negative_end(x, v):
    x[1:-1] = v


def slice_step_past_end(x):
    return x[::2] + x[1:1000:2]


def slice_empty(x):
    return x[5:2].sum() + x[3:]


# ----- indices computed in the graph -----
def put_index_minus(x, i, v):
    x[i - 3] = v


def put_index_plus(x, pos, v):
    x[pos + 1] = v


def gather_index_times(x, i):
    return x[i * 2]


def kv_cache_next(cache, k, pos):
    cache[:, pos + 1] = k


def put_index_accumulate_computed(x, i, v):
    x.index_put_((i - 2,), v, accumulate=True)


def put_index_remainder(x, i, v):
    x[i % 4] = v


def remainder_ops(n, x, y):
    return n % 3, x % 1.5, x.remainder(y), n.remainder(-4)


# ----- mutation through chains of views -----
def chain_slice_select(x, v):
    x[1:3][:, 0] = v


def chain_transpose_row(x, v):
    x.t()[0] = v


def chain_view_slice(x, v):
    x.view(2, 6)[1, 2:4] = v


def chain_select_select(x):
    x.select(0, 1).select(0, 2).fill_(9.0)


def chain_transpose_slice_mul(x):
    x.transpose(0, 1)[1:3].mul_(2)


def chain_unsqueeze_add(x):
    x.unsqueeze(0)[0, 1].add_(1)


def chain_intermediate(x, v):
    y = x * 2
    y[1:3][:, 1] = v
    return y


# ----- overlapping slices -----
def overlap_shift_clone(x):
    x[1:4] = x[0:3].clone()


def overlap_shift_value(x):
    x[1:4] = x[0:3] * 2


def overlap_two_views(x):
    a = x[0:3]
    b = x[2:5]
    a.add_(1)
    b.mul_(2)


def overlap_read_sum(x):
    return x[0:3] + x[1:4]


def overlap_put_rows(x, i):
    x[i] = x[1:3] + 1


# ----- split and repeat: a tuple of slices; unsqueeze, expand, contiguous clone, view -----
def split_rows(x):
    a, b, c = torch.split(x, 2)
    return a * 2, c + 1


def chunk_cols(x):
    a, b = x.chunk(2, dim=1)
    return a - b


def split_sizes(x):
    a, b = torch.split(x, [1, 4])
    return b.sum(0), a


def split_write(x, v):  # a write through an element of a split: in place in x
    a, b = torch.split(x, 3)
    b.add_(v)


def repeat_op(x):
    return x.repeat(2, 3)


def repeat_3d(x):
    return x.repeat(2, 1, 1) * 1.5


PROGRAMS += [
    ("put_own_rows", put_own_rows, lambda: (R(50, 20), torch.tensor([3, 7])), {}),
    ("slice_then_as_strided", slice_then_as_strided, lambda: (R(4, 4), R(2, 4)), {}),
    ("const_add", const_add, lambda: (R(2, 3),), {}),
    ("const_index_put", const_index_put, lambda: (R(4, 3), R(2, 3)), {}),
    ("const_gather", const_gather, lambda: (R(4, 3),), {}),
    ("const_where", const_where, lambda: (R(2, 3),), {}),
    ("gather_repeated", gather_repeated, lambda: (R(5, 3), torch.tensor([2, 2, 0, 2, 4])), {}),
    ("gather_negative", gather_negative, lambda: (R(5, 3), torch.tensor([-1, 0, -5, 3])), {}),
    ("gather_two_dims", gather_two_dims, lambda: (R(4, 5), torch.tensor([0, -1, 2]), torch.tensor([4, 4, -2])), {}),
    ("gather_middle_dim", gather_middle_dim, lambda: (R(3, 5, 2), torch.tensor([[1, -1], [0, 0]])), {}),
        # eighths: the column sums are exact whatever order they are added in
    ("scalar_tensor_put", scalar_tensor_put, lambda: (torch.randint(-64, 64, (6, 3)).float() / 8, torch.tensor([4, 1])), {}),
    ("full_plus", full_plus, lambda: (R(3, 4),), {}),
    ("fill_input", fill_input, lambda: (R(3, 4),), {}),
    ("fill_slice", fill_slice, lambda: (R(5, 2),), {}),
    ("fill_int", fill_int, lambda: (torch.arange(12).reshape(4, 3),), {}),
    ("comparisons", comparisons, lambda: (with_nan(3, 4), with_nan(3, 4)), {}),
    ("int_comparisons", int_comparisons, lambda: (torch.arange(-4, 8).reshape(3, 4), torch.arange(12).reshape(3, 4) % 5), {}),
    ("logical_mix", logical_mix, lambda: (R(3, 4) > 0, R(3, 4) > 0), {}),
    ("where_broadcast", where_broadcast, lambda: (with_nan(3, 4), R(4)), {}),
    ("where_scalar", where_scalar, lambda: (with_nan(3, 4),), {}),
    ("where_int", where_int, lambda: (torch.arange(-6, 6).reshape(3, 4), torch.arange(4) * 10), {}),
    ("mask_put_scalar", mask_put_scalar, lambda: (R(4, 5),), {}),
    ("mask_put_tensor", mask_put_tensor, lambda: (R(4, 5), R(4, 5) > 0, torch.tensor(-2.0)), {}),
    ("clamp_both", clamp_both, lambda: (with_nan(3, 4),), {}),
    ("clamp_tensor", clamp_tensor, lambda: (with_nan(3, 4), R(4) - 1, R(3, 1) + 1), {}),
    ("clamp_min_int", clamp_min_int, lambda: (torch.arange(-5, 7).reshape(3, 4),), {}),
    ("minimum_maximum", minimum_maximum, lambda: (with_nan(3, 4), with_nan(3, 4)), {}),
    ("sigmoid_op", sigmoid_op, lambda: (R(4, 5) * 4,), {}),
    ("tanh_op", tanh_op, lambda: (R(4, 5) * 2,), {}),
    ("rsqrt_op", rsqrt_op, lambda: (R(4, 5).abs() + 0.01,), {}),
    ("mean_all", mean_all, lambda: (torch.randint(-64, 64, (3, 8)).float() / 8,), {}),
    ("unary_chain", unary_chain, lambda: (R(3, 4),), {}),
    ("pow_ops", pow_ops, lambda: (R(3, 4),), {}),
    ("int_arith", int_arith, lambda: (torch.arange(-6, 6).reshape(3, 4), torch.arange(12).reshape(3, 4)), {}),
    ("true_div_int", true_div_int, lambda: (torch.arange(-6, 6),), {}),
    ("convert_types", convert_types, lambda: (R(3, 4) * 10,), {}),
    ("amax_sum", amax_sum, lambda: (torch.randint(-64, 64, (3, 5)).float() / 8,), {}),
    ("cat_two", cat_two, lambda: (R(3, 2), R(3, 4)), {}),
    ("expand_add", expand_add, lambda: (R(3, 2), R(4, 2)), {}),
    ("masked_fill_op", masked_fill_op, lambda: (R(3, 4), R(3, 4) > 0), {}),
    ("squeeze_permute", squeeze_permute, lambda: (R(3, 1, 4),), {}),
    ("epilogue_views", epilogue_views, lambda: (R(3, 4),), {}),
    ("epilogue_flat_view", epilogue_flat_view, lambda: (R(3, 4),), {}),
    ("epilogue_add_views", epilogue_add_views, lambda: (R(3, 4),), {}),
    ("epilogue_view_and_value", epilogue_view_and_value, lambda: (torch.randint(-64, 64, (5, 4)).float() / 8, R(2, 4).round()), {}),
    ("slice_past_end", slice_past_end, lambda: (R(5, 3),), {}),
    ("slice_negative_start", slice_negative_start, lambda: (R(5, 3),), {}),
    ("slice_negative_both", slice_negative_both, lambda: (R(5, 3),), {}),
    ("slice_write_negative_end", slice_write_negative_end, lambda: (R(5, 3), R(3, 3)), {}),
    ("slice_step_past_end", slice_step_past_end, lambda: (R(6, 3),), {}),
    ("slice_empty", slice_empty, lambda: (R(6, 3),), {}),
    ("put_index_minus", put_index_minus, lambda: (R(6, 3), torch.tensor([4, 7]), R(2, 3)), {}),
    ("put_index_plus", put_index_plus, lambda: (R(6, 3), torch.tensor([2]), R(1, 3)), {}),
    ("gather_index_times", gather_index_times, lambda: (R(8, 3), torch.tensor([0, 3, -1])), {}),
    ("kv_cache_next", kv_cache_next, lambda: (R(2, 8, 4), R(2, 1, 4), torch.tensor([4])), {}),
    ("put_index_accumulate_computed", put_index_accumulate_computed, lambda: (R(4, 3), torch.tensor([5, 2, 5]), R(3, 3)), {}),
    ("put_index_remainder", put_index_remainder, lambda: (R(4, 3), torch.tensor([5, -1]), R(2, 3)), {}),
    ("remainder_ops", remainder_ops, lambda: (torch.arange(-6, 6).reshape(3, 4), R(3, 4) * 4, R(3, 4) + 0.5), {}),
    ("chain_slice_select", chain_slice_select, lambda: (R(5, 3), R(2)), {}),
    ("chain_transpose_row", chain_transpose_row, lambda: (R(4, 3), R(4)), {}),
    ("chain_view_slice", chain_view_slice, lambda: (R(3, 4), R(2)), {}),
    ("chain_select_select", chain_select_select, lambda: (R(3, 4),), {}),
    ("chain_transpose_slice_mul", chain_transpose_slice_mul, lambda: (R(3, 4),), {}),
    ("chain_unsqueeze_add", chain_unsqueeze_add, lambda: (R(3, 4),), {}),
    ("chain_intermediate", chain_intermediate, lambda: (R(4, 3), R(2)), {}),
    ("overlap_shift_clone", overlap_shift_clone, lambda: (R(5, 2),), {}),
    ("overlap_shift_value", overlap_shift_value, lambda: (R(5, 2),), {}),
    ("overlap_two_views", overlap_two_views, lambda: (R(6, 2),), {}),
    ("overlap_read_sum", overlap_read_sum, lambda: (R(5, 2),), {}),
    ("overlap_put_rows", overlap_put_rows, lambda: (R(5, 2), torch.tensor([2, 0])), {}),
    ("split_rows", split_rows, lambda: (R(6, 3),), {}),
    ("chunk_cols", chunk_cols, lambda: (R(3, 4),), {}),
    ("split_sizes", split_sizes, lambda: (R(5, 2),), {}),
    ("split_write", split_write, lambda: (R(6, 2), R(3, 2)), {}),
    ("repeat_op", repeat_op, lambda: (R(2, 3),), {}),
    ("repeat_3d", repeat_3d, lambda: (R(2, 3),), {}),
]


# ----- index.Tensor results, laid out as PyTorch's index meta function lays them out -----
def index_permuted_cols(x, i):
    return x.permute(2, 0, 1)[:, i]


def index_permuted_rows(x, i):
    return x.permute(1, 2, 0)[i] * 2


def index_channels_last(x, i):
    return x[:, :, i], x[:, i]


def index_split_dims(x, i, j):
    return x.permute(2, 1, 0)[i, :, j]


def index_two_dim_index(x, i):
    return x.t()[:, i]


def index_zero_d(x, i):
    return torch.ops.aten.index.Tensor(x.permute(3, 1, 0, 2), [None, i])


PROGRAMS += [
    ("index_permuted_cols", index_permuted_cols, lambda: (R(3, 4, 5), torch.tensor([2, 0, -1])), {}),
    ("index_permuted_rows", index_permuted_rows, lambda: (R(3, 4, 5), torch.tensor([[1, 0], [3, 3]])), {}),
    ("index_channels_last", index_channels_last, lambda: (R(2, 3, 4, 5).to(memory_format=CL), torch.tensor([1, 2, 0])), {}),
    ("index_split_dims", index_split_dims, lambda: (R(3, 4, 5), torch.tensor([4, 0]), torch.tensor([1, -1])), {}),
    ("index_two_dim_index", index_two_dim_index, lambda: (R(4, 6), torch.tensor([[0, 2, 3], [1, 1, -1]])), {}),
    ("index_zero_d", index_zero_d, lambda: (R(2, 3, 4, 5), torch.tensor(2)), {}),
]


# ----- a user op's fresh result in the layout its fake implementation gives -----
def user_result_column_major(x, acc):
    y = double_acc_(x, acc)
    return y, y + 1


def dyn_user_result_column_major(x, acc):
    y = double_acc_(x, acc)
    return y, y * acc


def user_call_column_major(x):  # a user op that mutates nothing: called directly, not functionalized
    y = double_t(x)
    return y, y + 1


PROGRAMS += [
    ("user_call_column_major", user_call_column_major, lambda: (R(3, 4),), {}),
    ("user_result_column_major", user_result_column_major, lambda: (R(3, 4), R(3, 4)), {}),
    ("dyn_user_result_column_major", dyn_user_result_column_major, lambda: (R(3, 4), R(3, 4)),
     {"dynamic": True, "sizes": [lambda: (R(5, 2), R(5, 2)), lambda: (R(2, 7), R(2, 7))]}),
]


# ----- symbolic extents: results in the stride order PyTorch gives them -----
def dyn_permute_mul(x):
    return x.permute(2, 0, 1) * 2


def dyn_transposed_plus(x, y):
    return x.t() + y, y + x.t()


def dyn_channels_last_relu(x):
    return torch.relu(x), x + 1


def dyn_clone_permuted(x):
    return x.permute(1, 0, 2).clone(), x.permute(1, 0, 2).to(torch.float64)


def dyn_slice_t_add(x):
    return x.t()[1:] + 1, x[:, ::2].t() * 3


def dyn_index_permuted(x, i):
    return x.permute(2, 0, 1)[:, i]


def dyn_cat_channels_last(x, y):
    return torch.cat([x, y], 1), torch.cat([x, x], 0)


def dyn_where_permuted(x, y):
    return torch.where(x.t() > 0, x.t(), y)


# Strides 3 and s1: their order depends on s1, which no graph fixes. ctfx takes the order PyTorch
# printed (traced with 7 columns) under a guard that s1 orders them so (3 < s1, ...): a run with 2
# columns is refused when it binds its sizes (tools/ctfx_opt's error test stride_order_guard).
def dyn_step3_transposed(x):
    return x[:, ::3].t() * 2


CL3 = lambda *s: R(*s).to(memory_format=CL)
PROGRAMS += [
    ("dyn_permute_mul", dyn_permute_mul, lambda: (R(3, 4, 5),), {"dynamic": True, "sizes": [lambda: (R(2, 6, 3),)]}),
    ("dyn_transposed_plus", dyn_transposed_plus, lambda: (R(3, 4), R(4, 3)), {"dynamic": True, "sizes": [lambda: (R(5, 2), R(2, 5))]}),
    ("dyn_channels_last_relu", dyn_channels_last_relu, lambda: (CL3(2, 3, 4, 5),), {"dynamic": True, "sizes": [lambda: (CL3(3, 2, 5, 4),)]}),
    ("dyn_clone_permuted", dyn_clone_permuted, lambda: (R(3, 4, 5),), {"dynamic": True, "sizes": [lambda: (R(4, 2, 3),)]}),
    ("dyn_slice_t_add", dyn_slice_t_add, lambda: (R(3, 5),), {"dynamic": True, "sizes": [lambda: (R(4, 7),)]}),
    # (no two extents equal: PyTorch would give them one symbol, and the other sizes would recompile)
    ("dyn_index_permuted", dyn_index_permuted, lambda: (R(3, 4, 5), torch.tensor([2, -1])), {"dynamic": True, "sizes": [lambda: (R(4, 5, 6), torch.tensor([3, 0, -4]))]}),
    ("dyn_cat_channels_last", dyn_cat_channels_last, lambda: (CL3(2, 3, 4, 5), CL3(2, 6, 4, 5)), {"dynamic": True, "sizes": [lambda: (CL3(3, 2, 5, 4), CL3(3, 7, 5, 4))]}),
    ("dyn_where_permuted", dyn_where_permuted, lambda: (R(3, 4), R(4, 3)), {"dynamic": True, "sizes": [lambda: (R(2, 5), R(5, 2))]}),
    ("dyn_step3_transposed", dyn_step3_transposed, lambda: (R(3, 7),), {"dynamic": True, "sizes": [lambda: (R(5, 10),)]}),
]


NEW_SET = [p[0] for p in PROGRAMS[PROGRAMS.index(next(q for q in PROGRAMS if q[0] == "put_own_rows")):]]


def same_bits(a, b):
    # torch.equal is false for a NaN against itself: an input holding NaN would look mutated
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8))


def save_run(prefix, order, before, after, outs):
    # order[i]: the argument of fn that tensor placeholder i is
    for i, k in enumerate(order):
        np.save(os.path.join(OUT, f"{prefix}.input{i}.npy"), before[k].numpy())
        if not same_bits(after[k], before[k]):
            np.save(os.path.join(OUT, f"{prefix}.mutated{i}.npy"), after[k].numpy())
    for j, o in enumerate(outs):
        np.save(os.path.join(OUT, f"{prefix}.output{j}.npy"), o.detach().numpy())


def capture(name, fn, make_args, opts):
    texts, placeholders, constants = [], [], {}

    def pre_pass(graph):
        gm = graph.owning_module
        texts.append(gm.print_readable(print_output=False, include_stride=True, include_device=True))
        # Tensor constants (`self._tensor_constant0`): their values are not in the text; ctfx binds
        # each by name from <name>.<attribute>.npy.
        for n in graph.find_nodes(op="get_attr"):
            v = getattr(gm, n.target)
            if isinstance(v, torch.Tensor):
                constants[n.target] = v.detach().clone()

    def backend(gm, example_inputs):
        # Dynamo's graph inputs in placeholder order: the real tensors (or SymInts) of this call.
        placeholders.append(list(example_inputs))
        from torch._inductor.compile_fx import compile_fx
        return compile_fx(gm, example_inputs)

    config.post_grad_custom_pre_pass = pre_pass
    torch._dynamo.reset()
    opts = dict(opts)
    extra_sizes = opts.pop("sizes", [])
    # Values read from tensors (item(), tolist()) as unbacked symbols, not graph breaks.
    scalars = opts.pop("scalars", False)
    torch._dynamo.config.capture_scalar_outputs = scalars
    torch._dynamo.config.capture_dynamic_output_shape_ops = scalars
    torch._dynamo.config.enable_dynamo_decompositions = opts.pop("dynamo_decompositions", True)
    args = make_args()
    before = [a.clone() for a in args]
    compiled = torch.compile(fn, backend=backend, fullgraph=True, **opts)
    compiled(*args)
    # A program with torch.cond or while_loop: Inductor runs the pass on each subgraph before their
    # parent, whose text holds them all as nested `class ...(torch.nn.Module)` blocks; the parent is last.
    assert len(placeholders) == 1 and ("higher_order" in texts[-1] or len(texts) == 1), f"{name}: expected one graph"
    texts[:] = texts[-1:]
    calls = len(texts)
    # Eager on fresh copies gives the reference outputs and the inputs after mutation.
    eager_args = [b.clone() for b in before]
    out = fn(*eager_args)
    outs = [] if out is None else list(out) if isinstance(out, (tuple, list)) else [out]
    tensor_inputs = [p for p in placeholders[0] if isinstance(p, torch.Tensor)]
    with open(os.path.join(OUT, name + ".txt"), "w") as f:
        f.write(texts[0].rstrip() + "\n")
    # which argument of fn each tensor placeholder is
    order = [next(j for j, a in enumerate(args) if a is p) for p in tensor_inputs]
    save_run(name, order, before, eager_args, outs)
    # The same dynamic graph at other sizes: eager's results on fresh arguments, and the compiled
    # program must run them without recompiling (the graph's guards hold there too).
    frames = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    for k, make in enumerate(extra_sizes, start=1):
        more = make()
        more_before = [a.clone() for a in more]
        compiled(*[a.clone() for a in more])
        assert len(texts) == calls and torch._dynamo.utils.counters["stats"]["unique_graphs"] == frames, f"{name}: size {k} recompiled"
        more_eager = [b.clone() for b in more_before]
        out = fn(*more_eager)
        save_run(f"{name}.size{k}", order, more_before, more_eager,
                 [] if out is None else list(out) if isinstance(out, (tuple, list)) else [out])
    for attr, v in constants.items():
        np.save(os.path.join(OUT, f"{name}.{attr}.npy"), v.numpy())
    print(f"{name}: {texts[0].count(chr(10))} lines, {len(tensor_inputs)} inputs, {len(outs)} outputs")


# ----- dynamic shapes and layouts users write: a KV prefill at a dynamic length, a head split by -1,
# permuted and strided writes, long view chains -----
def dyn_kv_prefill(cache, k):
    cache[:, : k.shape[1]] = k
    return cache


def dyn_head_split(x):
    return x.view(x.shape[0], -1, 4).sum(-1)


def permuted_slice_write(x, v):
    x.permute(1, 0)[1:3] = v
    return x


def nine_view_chain(x):
    y = x.view(4, 6).t().unsqueeze(0).squeeze(0).reshape(3, 8).t()[1:7].permute(1, 0).reshape(-1)[2:20]
    return y * 3


def strided_input(x):
    return x * 2 + 1


# ----- gather and scatter along one dimension: a label-smoothing loss, a histogram, a segment sum
# (scatter_reduce over an expanded index), duplicate destinations, an in-place scatter_ of an input,
# an empty index -----
def label_smoothing_gather(logp, target):
    nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    return (0.9 * nll + 0.1 * -logp.mean(-1)).mean(), nll


def scatter_add_histogram(bins, w):
    ones = torch.ones_like(bins, dtype=torch.float32)
    return torch.zeros(6).scatter_add(0, bins, ones), torch.zeros(6).scatter_add(0, bins, w)


def segment_sum_scatter_reduce(x, seg):
    out = torch.zeros(4, x.shape[1]).scatter_reduce(0, seg[:, None].expand(-1, x.shape[1]), x, "sum", include_self=True)
    return out, x.new_full((4, x.shape[1]), 0.5).scatter_reduce(0, seg[:, None].expand(-1, x.shape[1]), x * 2, "sum")


def scatter_duplicates(z, k, s):
    return z.scatter(1, k, s), z.scatter(0, k, 2.5), torch.scatter_add(z, 1, k, s)


def scatter_inplace_input(x, k, s):
    x.scatter_(1, k, s)
    x.scatter_add_(0, k, s)
    return x.sum(1)


def unbind_tuple(x):
    a, b, c = x.unbind(0)
    cols = x.unbind(-1)
    return a * 2 + b - c, cols[0] * cols[3]


def erf_op(x, i):
    return torch.erf(x), torch.erf(i)  # an i64 input computes in f32


def log1p_expm1_op(x, i):
    # softplus (log1p of exp), log-sigmoid, ELU: the functions exact near 0; an i64 input computes in f32
    return torch.log1p(x.abs()), torch.expm1(x), torch.nn.functional.softplus(x), torch.nn.functional.elu(x), torch.log1p(i), torch.expm1(i)


def bitwise_ops(a, b, c, m):
    # integer &, |, ^, ~, << and >> (i64, i32, i8; counts out of range: 0, or the sign), and bools'
    return (a & b, a | b, a ^ b, ~a, a << 2, a >> 1, c << b.clamp(-2, 40).to(torch.int32), c >> 33,
            (c & 0xF0) ^ 7, m ^ (a > 0), ~m, m & (b > 0))


def prod_forms(x, y, i):
    # prod of every element and along a dim: PyTorch's CPU order (rows of 32 or more use its vector
    # lanes), integers and bools in int64, the product of nothing 1
    return x.prod(), x.prod(1), x.prod(0, keepdim=True), y.prod(-1), i.prod(), i.prod(0), (i > 0).prod(), x[:, :0].prod(1)


def pow_scalar_exp2_hypot(x, y, n):
    # a number base (pow.Scalar), exp2 and hypot (libm's; eager's vector lanes may differ by 1 ulp)
    return torch.pow(2.0, x), torch.pow(3, n), torch.pow(2, n.float()), torch.exp2(x), torch.exp2(n), torch.hypot(x, y)


def log2_log10_atan2(x, y, i):
    # base-2 and base-10 logarithms and atan2 (integers give f32); libm's, eager's vector lanes may differ by 1 ulp
    return torch.log2(x.abs()), torch.log10(x.abs()), torch.atan2(x, y), torch.log2(i), torch.atan2(i, i.flip(0))


def unfold_windows(x):
    # x.unfold(dim, size, step): overlapping windows as an as_strided view, then arithmetic on them
    return x.unfold(1, 3, 1), x.unfold(0, 2, 2) * 2, x.t().unfold(1, 4, 3).sum(-1)


def channels_last_clone(x, w):
    # contiguous(memory_format=channels_last) captured as clone(memory_format=...): its strides
    y = x.contiguous(memory_format=torch.channels_last)
    # (a sum over H and W of it is left out: PyTorch's cascade sum over strided elements has an order
    # of its own)
    return y * w.view(1, -1, 1, 1), y.sum(1), y.amax((2, 3)), y + 1


def fmod_roll(x, i, y):
    # torch.roll's indices (iota, add, fmod) and fmod itself: the dividend's sign, floats and integers
    return torch.roll(x, 2, 1), torch.fmod(x, 1.5), torch.fmod(i, 3), torch.fmod(i, -4), torch.fmod(x, y)


def gather_empty_index(x, i):
    return x.gather(0, i), x.scatter(0, i, x[:0]) * 2


# ----- scatter_reduce with prod, mean, amax, amin and include_self=False: an embedding bag's max
# (NaN in a row), a segment mean (an empty segment), integer means (floor), f16 / bf16 sums and
# means and products (PyTorch's kernel accumulates them in f32), prod and amin along dim 1 -----
def embedding_bag_max(table, idx, bag):
    rows = table[idx]
    d = rows.shape[1]
    out = torch.full((3, d), float("-inf")).scatter_reduce(0, bag[:, None].expand(-1, d), rows, "amax", include_self=False)
    return out, torch.zeros(3, d).scatter_reduce(0, bag[:, None].expand(-1, d), rows, "amax")


def segment_mean(x, seg):
    idx = seg[:, None].expand(-1, x.shape[1])
    return (torch.zeros(5, x.shape[1]).scatter_reduce(0, idx, x, "mean", include_self=False),
            x.new_full((5, x.shape[1]), 0.5).scatter_reduce(0, idx, x, "mean"))


def scatter_prod_amin(x, k, s, xi, si):
    return (x.scatter_reduce(1, k, s, "prod"), x.scatter_reduce(1, k, s, "amin", include_self=False),
            x.scatter_reduce(1, k, s, "sum", include_self=False), xi.scatter_reduce(1, k, si, "mean"),
            xi.scatter_reduce(1, k, si, "mean", include_self=False), xi.scatter_reduce(1, k, si, "prod", include_self=False))


def scatter_reduce_half(h, seg, s):
    return (h.scatter_reduce(0, seg, s, "sum"), h.scatter_reduce(0, seg, s, "mean", include_self=False),
            h.scatter_add(0, seg, s), h.scatter_reduce(0, seg, s * 3, "prod"), h.scatter_reduce(0, seg, s, "amax"))


# ----- sum / mean with dtype= (PyTorch converts, then reduces in that dtype: an int32 sum stays
# int32), and the int64 sum of a bool mask and of an int32 tensor -----
def sum_mean_dtype(x16, m, y, i):
    return (x16.sum(dtype=torch.float32), m.sum(1, dtype=torch.int32), y.sum(0, keepdim=True, dtype=torch.float64),
            y.mean(1, dtype=torch.float64), m.sum(), i.sum(0), i.mean(dtype=torch.float32), (y * 1e3).sum(dtype=torch.float16))


PROGRAMS += [
    ("embedding_bag_max", embedding_bag_max,
     lambda: (torch.cat([R(6, 4), torch.tensor([[float("nan"), 1.0, -0.0, 2.0]])]), torch.tensor([0, 6, 2, 2, 5, 1, 3]),
              torch.tensor([0, 0, 0, 2, 2, 2, 2])), {}),
    ("sum_mean_dtype", sum_mean_dtype,
     lambda: (R(3, 50).half() * 10, R(3, 50) > 0, R(4, 50), torch.randint(-2**31, 2**31 - 1, (7, 3), dtype=torch.int32)), {}),
    ("segment_mean", segment_mean, lambda: (R(9, 3) * 100, torch.tensor([0, 0, 1, 4, 4, 4, 0, 1, 4])), {}),
    ("scatter_prod_amin", scatter_prod_amin,
     lambda: (R(3, 4), torch.tensor([[2, 0, 2, 2], [1, 1, 3, 1], [0, 0, 0, 0]]), R(3, 5) * 2,
              torch.randint(-20, 20, (3, 4)), torch.randint(-9, 9, (3, 5))), {}),
    ("scatter_reduce_half", scatter_reduce_half,
     lambda: (torch.tensor([1.0, 2048.0, -0.5, 3.0]).half(), torch.tensor([0, 1, 1, 1, 1, 0, 3, 1]),
              torch.tensor([1e-3, 1.0, 1.0, 1.0, 3.0, 0.1, 0.3, 1.0]).half()), {}),
]


PROGRAMS += [
    ("label_smoothing_gather", label_smoothing_gather,
     lambda: (torch.log_softmax(R(8, 5), -1), torch.tensor([0, 4, 2, 2, 1, 3, 0, 4])), {}),
    ("scatter_add_histogram", scatter_add_histogram,
     lambda: (torch.tensor([0, 5, 2, 2, 2, 1, 0, 5, 5, 3]),
              torch.tensor([1e8, 1.0, 0.1, 0.2, 0.3, -1.0, -1e8, 2.5, -0.0, 7.0])), {}),
    ("segment_sum_scatter_reduce", segment_sum_scatter_reduce,
     lambda: (R(9, 3) * 1000, torch.tensor([0, 0, 1, 3, 3, 3, 0, 1, 3])), {}),
    ("scatter_duplicates", scatter_duplicates,
     lambda: (R(3, 5), torch.tensor([[1, 1, 2, 0], [2, 2, 2, 1]]), R(2, 5) * 100), {}),
    ("scatter_inplace_input", scatter_inplace_input,
     lambda: (R(3, 4), torch.tensor([[2, 0, 2], [1, 1, 1]]), R(2, 3)), {}),
    ("gather_empty_index", gather_empty_index, lambda: (R(4, 3), torch.zeros(0, 3, dtype=torch.long)), {}),
    ("unbind_tuple", unbind_tuple, lambda: (R(3, 4),), {}),
    ("erf_op", erf_op,
     lambda: (torch.cat([R(300) * 2, torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-30, 6.0, -4.0])]),
              torch.tensor([0, 1, -1, 3, -7])), {}),
    ("bitwise_ops", bitwise_ops,
     lambda: (torch.randint(-1000, 1000, (30,)), torch.randint(-1000, 1000, (30,)),
              torch.randint(-100, 100, (30,)).to(torch.int8), R(30) > 0), {}),
    ("prod_forms", prod_forms,
     lambda: (torch.rand(5, 70) * 0.1 + 0.96, torch.cat([torch.rand(3, 6) + 0.5, torch.tensor([[float("nan")] * 2 + [float("inf")] * 2 + [0.0, -1.0]])]).double(),
              torch.randint(-4, 5, (6, 3)).to(torch.int32)), {}),
    ("pow_scalar_exp2_hypot", pow_scalar_exp2_hypot,
     lambda: (torch.cat([R(40) * 4, torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 130.0, -150.0, 0.5])]),
              torch.cat([R(40), torch.tensor([0.0, 3.0, float("nan"), float("inf"), 1.0, 1e30, -1e-30, 4.0])]),
              torch.tensor([0, 1, 2, 3, 10, -1, 40, 5])), {}),
    ("log2_log10_atan2", log2_log10_atan2,
     lambda: (torch.cat([R(40) * 3, torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-40, 1.0, 1024.0])]),
              torch.cat([R(40), torch.tensor([0.0, 0.0, 1.0, float("inf"), 1.0, -0.0, -1.0, float("-inf")])]),
              torch.tensor([1, 2, 8, 0, -3, 10, 1000, 7])), {}),
    ("unfold_windows", unfold_windows, lambda: (R(6, 7),), {}),
    ("channels_last_clone", channels_last_clone, lambda: (R(2, 3, 4, 5), R(3)), {}),
    ("fmod_roll", fmod_roll,
     lambda: (R(4, 6) * 5, torch.tensor([-7, -3, 0, 3, 7, 9, -9]),
              torch.cat([R(20), torch.tensor([0.0, -0.0, float("inf"), -2.0])]).reshape(4, 6)), {}),
    ("log1p_expm1_op", log1p_expm1_op,
     lambda: (torch.cat([R(300) * 3, torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-30, -1e-8, 3e-8, 30.0, -30.0, 90.0])]),
              torch.tensor([0, 1, 2, 3, 10, -1])), {}),
]


PROGRAMS += [
    ("dyn_kv_prefill", dyn_kv_prefill, lambda: (R(2, 16, 4), R(2, 5, 4)), {"dynamic": True, "sizes": [lambda: (R(2, 16, 4), R(2, 9, 4))]}),
    ("dyn_head_split", dyn_head_split, lambda: (R(3, 16),), {"dynamic": True, "sizes": [lambda: (R(5, 24),)]}),
    ("permuted_slice_write", permuted_slice_write, lambda: (R(4, 5), R(2, 4)), {}),
    ("nine_view_chain", nine_view_chain, lambda: (R(24),), {}),
    ("strided_input", strided_input, lambda: (R(8, 4)[:, ::2],), {}),
]


# ----- reductions and scans real programs use: amin, argmax/argmin, max.dim/min.dim (NaN, signed zeros,
# ties), cumsum -----
def _edge_rows(n, m, dtype=torch.float32, plus_zero=True):
    # rows of m values: random; a NaN late, then an earlier one; -0 ties (row 1) and +0 ties (row 2)
    # with no -0 and +0 in one row or column (which of two equal zeros PyTorch's amax/amin returns
    # depends on its vector path); a lone -0 minimum among positives; all equal
    x = (torch.randint(-64, 64, (n, m)).to(dtype) / 8)
    x[0, m - 2] = float("nan")
    x[0, 3] = float("nan")
    x[1] = torch.where(torch.arange(m) % 2 == 0, torch.tensor(-0.0, dtype=dtype), torch.tensor(4.0, dtype=dtype))
    x[2] = torch.where(torch.arange(m) % 2 == 1, torch.tensor(0.0 if plus_zero else -0.0, dtype=dtype), torch.tensor(4.0, dtype=dtype))
    x[3] = torch.arange(m).to(dtype) % 5 + 1
    x[3, m // 2] = -0.0
    x[4] = 2.5
    return x


def amin_edges(x, y, k):
    # (the columns without row 0's NaNs: over an outer dimension PyTorch's vector path returns an
    # all-ones NaN, not the input's)
    return x.amin(1), x[1:].amin(0, keepdim=True), (x * 2 - 1).amin(-1), y.amin((0, 2)), k.amin(1), x[1:].t().amin(1)


def classifier_argmax(logits, labels):
    # a classifier's prediction and top-1 accuracy
    pred = logits.argmax(-1)
    return pred, (pred == labels).float().mean(), logits.argmin(1, keepdim=True)


def running_max_indices(x):
    # the best value and where it is, per row and per column; the flattened argmax
    v, i = x.max(dim=1)
    w, j = x.min(0, keepdim=True)
    return v, i, w, j, x.argmax(), x.argmin(None, True)


def full_max_min(x, k):
    # x.max() and x.min() of everything (aten.max.default), as clipping code writes them (and
    # logsumexp's decomposition, whose sum of exps ctfx orders its own way)
    return x.max(), x.min(), k.max()


def layer_norm_f32(x, w, b):
    # a layer norm written out, as Inductor decomposes F.layer_norm (var_mean over the last
    # dimension, then rsqrt): eager F.layer_norm's own kernel computes x * (rstd * w) + (b - ...)
    # in another order, so only this form has eager bits to compare with
    var, mean = torch.var_mean(x, -1, correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + 1e-5) * w + b


def layer_norm_f64(x):
    # over the last two dimensions, written out as above
    var, mean = torch.var_mean(x, (-2, -1), correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + 1e-6)


def var_std(x):
    # var with corrections, var_mean over every dimension (std is captured as sqrt(var), rounded
    # twice where eager's std rounds once: not compared here)
    return (x.var(1), x.var(0, keepdim=True), *torch.var_mean(x, None, correction=0), x.var(1, correction=0.5))


def arg_edges(x, k):
    # NaN (first wins), ties, signed zeros; integers with their extremes; a transposed input
    return (x.argmax(1), x.argmin(1), x.t().argmax(0), k.argmax(0), *k.max(1))


PROGRAMS += [
    ("classifier_argmax", classifier_argmax, lambda: (R(16, 10), torch.randint(0, 10, (16,))), {}),
    ("running_max_indices", running_max_indices, lambda: (torch.randint(-8, 8, (7, 9)).float(),), {}),
    ("full_max_min", full_max_min, lambda: (R(6, 40), torch.randint(-2**31, 2**31 - 1, (5, 40), dtype=torch.int32)), {}),
    ("layer_norm_f32", layer_norm_f32, lambda: (R(6, 768) * 3 + 1, R(768), R(768)), {}),
    ("layer_norm_f64", layer_norm_f64, lambda: (R(3, 4, 50, dtype=torch.float64) * 10,), {}),
    ("var_std", var_std, lambda: (R(9, 37) * 2 - 1,), {}),
    ("arg_edges", arg_edges, lambda: (_edge_rows(6, 40), torch.randint(-2**31, 2**31 - 1, (5, 40), dtype=torch.int32)), {}),
]
def cumulative_sums(x, d, k, m, h):
    # long f32 rows (PyTorch accumulates them in double), f64 down columns, an int32 promoted to
    # int64, a bool mask counted, an int32 summed as f32 (dtype=), f16 (accumulated in f32), a
    # transposed input
    return (x.cumsum(1), d.cumsum(0), k.cumsum(-1), m.cumsum(1), k.cumsum(0, dtype=torch.float32), h.cumsum(1),
            x.t().cumsum(1))


PROGRAMS += [
    ("cumulative_sums", cumulative_sums, lambda: (R(4, 3000) * 100, R(50, 3, dtype=torch.float64), torch.randint(-2**31, 2**31 - 1, (3, 40), dtype=torch.int32),
                                                  R(5, 9) > 0, R(3, 700).half()), {}),
]
PROGRAMS += [
    ("amin_edges", amin_edges, lambda: (_edge_rows(6, 37), _edge_rows(6, 70, torch.float64, False).reshape(6, 7, 10),
                                        torch.randint(-2**31, 2**31 - 1, (5, 40), dtype=torch.int32)), {}),
]



# ----- iota (arange): start + i * step in an integer dtype; float aranges are an int64 iota
# scaled in f64 (Inductor's graph), tril/triu compare two iotas, one_hot and roll index with one -----
def iota_tril_triu(x, y):
    return torch.tril(x), torch.triu(y, 1), torch.tril(y, -2)


def flip_forms(x):
    # flip (prims.rev) of one and of two dims, and the reversed cumsum
    return x.flip(-1), x.flip(0, 1) + 1, x.flip(-1).cumsum(-1).flip(-1)


def arange_forms(x, d):
    return (x + torch.arange(10, -3, -3)[:, None], x[0] * torch.arange(0.0, 1.0, 0.1),
            # an exact step: with 0.3 eager's f64 kernel rounds base + j * step per vector block,
            # which differs from its own graph's start + i * step (ctfx follows the graph)
            d + torch.arange(-1.5, 2.0, 0.25, dtype=torch.float64), torch.arange(-2**40, 2**40, 2**39 + 1) * 3,
            torch.arange(5, dtype=torch.int32) * 7)


def one_hot_compare(y):
    # F.one_hot's own graph also asserts the class range (_assert_async, not read by ctfx)
    return (y[:, None] == torch.arange(7)).float().sum(0)


def cumulative_products(x, d, k, m, h):
    # f32 rows (multiplied in double), f64 down columns, int32 and bool promoted to int64, f16
    # (multiplied in f32), and a probability chain
    return x.cumprod(1), d.cumprod(0), k.cumprod(-1), m.cumprod(1), h.cumprod(1), (1 - x * 0.1).cumprod(-1)


def position_ids(x):
    # (torch.roll's graph indexes by an iota taken modulo with fmod, which ctfx does not read)
    return x + torch.arange(x.shape[-1]), x[:, 1:] * torch.arange(1, x.shape[-1], dtype=torch.int32)


def pad_forms(x, k):
    # F.pad: positive pads with a value, negative pads (crops), zero pads, an integer tensor
    F = torch.nn.functional
    return (F.pad(x, (1, 2, 0, 3), value=0.5), F.pad(x, (-1, 2, 1, -2)), F.pad(x, (0, 0, 2, 0)) * 2, F.pad(k, (3, 1), value=-7),
            F.pad(x, (2, 2, 1, 1, 1, 0), mode="constant", value=-0.0))


PROGRAMS += [
    ("iota_tril_triu", iota_tril_triu, lambda: (R(5, 5), R(4, 6)), {}),
    ("arange_forms", arange_forms, lambda: (R(5, 10), R(14, dtype=torch.float64)), {}),
    ("one_hot_compare", one_hot_compare, lambda: (torch.randint(0, 7, (20,)),), {}),
    ("cumulative_products", cumulative_products, lambda: (R(4, 300) * 0.5 + 1, R(50, 3, dtype=torch.float64), torch.randint(-3, 4, (3, 60), dtype=torch.int32),
                                                          R(5, 9) > -1, R(3, 70).half() * 0.2 + 1), {}),
    ("position_ids", position_ids, lambda: (R(3, 7),), {}),
    ("flip_forms", flip_forms, lambda: (R(3, 4, 9),), {}),
    ("pad_forms", pad_forms, lambda: (R(2, 3, 4), torch.arange(12).reshape(3, 4)), {}),
]

# ----- matrix products (mm, addmm, bmm, baddbmm: extern kernels, a BLAS on either side; compared
# with a tolerance per dtype, docs/guide.md) -----
def linear_bias(x, w, b):
    return torch.nn.functional.linear(x, w, b)


def mlp_relu(x, w1, b1, w2, b2):
    h = torch.relu(torch.nn.functional.linear(x, w1, b1))
    return torch.nn.functional.linear(h, w2, b2)


def attention_scores(q, k, v):
    s = (q @ k.transpose(-2, -1)) * 0.25
    return s, s @ v


def batched_matmul(a, b):
    return torch.bmm(a, b) + 1


def addmm_scaled(c, a, b):
    return torch.addmm(c, a, b, beta=0.5, alpha=2.0)


def baddbmm_scaled(c, a, b):
    return torch.baddbmm(c, a, b, beta=-1.0, alpha=0.75)


def mm_transposed(a, b):
    return a.t() @ b, a.t() @ b.t().contiguous().t()


def int_matmul(a, b):
    return a @ b, torch.addmm(a[:, :3], a, b, beta=2, alpha=-3)


def f64_matmul(a, b):
    return a @ b.t()


PROGRAMS += [
    ("linear_bias", linear_bias, lambda: (R(8, 32), R(16, 32), R(16)), {}),
    ("mlp_relu", mlp_relu, lambda: (R(8, 32), R(64, 32), R(64), R(16, 64), R(16)), {}),
    # [batch * heads, seq, dim] (sdpa_math has the 4-d form: a view of the permuted k that merges
    # batch and heads)
    ("attention_scores", attention_scores, lambda: (R(8, 8, 16), R(8, 8, 16), R(8, 8, 16)), {}),
    ("batched_matmul", batched_matmul, lambda: (R(3, 5, 7), R(3, 7, 4)), {}),
    ("addmm_scaled", addmm_scaled, lambda: (R(6, 5), R(6, 9), R(9, 5)), {}),
    ("baddbmm_scaled", baddbmm_scaled, lambda: (R(5), R(2, 4, 6), R(2, 6, 5)), {}),
    ("mm_transposed", mm_transposed, lambda: (R(6, 5), R(6, 4)), {}),
    ("int_matmul", int_matmul, lambda: (torch.randint(-1000, 1000, (4, 6)), torch.randint(-1000, 1000, (6, 3))), {}),
    ("f64_matmul", f64_matmul, lambda: (R(5, 12, dtype=torch.float64), R(7, 12, dtype=torch.float64)), {}),
]


# ----- scaled dot-product attention (what F.scaled_dot_product_attention captures as on CPU:
# _scaled_dot_product_flash_attention_for_cpu, composed of bmm, a scale, a mask and a softmax;
# compared with the matrix products' tolerance): causal (top-left, L < S and L > S), a bool mask
# with a fully masked row, a broadcast float mask with -inf, an explicit scale, grouped-query heads,
# the logsumexp read, a transformer block on permuted q/k/v views, f64 -----
F = torch.nn.functional


def sdpa_plain(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def sdpa_causal(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True), F.scaled_dot_product_attention(k, q, q, is_causal=True)


def sdpa_bool_mask(q, k, v, m):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=m)


def sdpa_float_mask(q, k, v, m):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=m)


def sdpa_scale(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, scale=0.3)


def sdpa_gqa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True, is_causal=True)


def sdpa_lse(q, k, v, m):
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=m)
    return out, lse, lse.exp().sum(-1)


def sdpa_block(x, w_qkv, b_qkv, w_o):
    B, S, E = x.shape
    q, k, v = F.linear(x, w_qkv, b_qkv).view(B, S, 3, 4, E // 4).permute(2, 0, 3, 1, 4).unbind(0)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return x + F.linear(o.transpose(1, 2).reshape(B, S, E), w_o)


def sdpa_math(q, k, v, x):
    # v's head dimension differs from q's: Inductor decomposes the call (its math form: q and k^T
    # scaled by sqrt(scale), bmm over a view of the permuted k, a softmax that gives 0 on a fully
    # masked row); a manual 4-d attention the same way
    s = (x @ x.transpose(-2, -1)) * 0.25
    return F.scaled_dot_product_attention(q, k, v), s.softmax(-1) @ x


def sdpa_f64(q, k, v, m):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=m), F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.125)


def _bool_mask():
    m = torch.rand(5, 7) > 0.3
    m[2] = False  # a row masked entirely: 0, as PyTorch's CPU kernel gives
    return m


def _float_mask():
    m = R(2, 1, 5, 7)
    m[0, 0, 1, 3:] = float("-inf")
    return m


PROGRAMS += [
    ("sdpa_plain", sdpa_plain, lambda: (R(2, 3, 5, 8), R(2, 3, 7, 8), R(2, 3, 7, 8)), {}),
    ("sdpa_causal", sdpa_causal, lambda: (R(2, 3, 5, 8), R(2, 3, 9, 8), R(2, 3, 9, 8)), {}),
    ("sdpa_bool_mask", sdpa_bool_mask, lambda: (R(2, 3, 5, 8), R(2, 3, 7, 8), R(2, 3, 7, 8), _bool_mask()), {}),
    ("sdpa_float_mask", sdpa_float_mask, lambda: (R(2, 3, 5, 8), R(2, 3, 7, 8), R(2, 3, 7, 8), _float_mask()), {}),
    ("sdpa_scale", sdpa_scale, lambda: (R(1, 2, 6, 16), R(1, 2, 6, 16), R(1, 2, 6, 16)), {}),
    ("sdpa_gqa", sdpa_gqa, lambda: (R(2, 6, 5, 8), R(2, 2, 5, 8), R(2, 2, 5, 8)), {}),
    ("sdpa_lse", sdpa_lse, lambda: (R(2, 3, 5, 8), R(2, 3, 7, 8), R(2, 3, 7, 8), _float_mask()), {}),
    ("sdpa_block", sdpa_block, lambda: (R(2, 6, 16), R(48, 16) * 0.3, R(48), R(16, 16) * 0.3), {}),
    ("sdpa_math", sdpa_math, lambda: (R(2, 3, 5, 8), R(2, 3, 7, 8), R(2, 3, 7, 6), R(2, 4, 6, 8)), {}),
    ("sdpa_f64", sdpa_f64, lambda: (R(2, 3, 5, 8, dtype=torch.float64), R(2, 3, 7, 8, dtype=torch.float64),
                                    R(2, 3, 7, 8, dtype=torch.float64), _float_mask().double()), {}),
]

# ----- logcumsumexp as PyTorch's CPU kernel folds it (log1p(exp(min - max)) + max in double for
# f32 and f64, in float for f16): wide ranges, and a row of special values (NaN, both
# infinities, each after the others) -----
def logcumsumexp_op(x, s, d, h):
    return x.logcumsumexp(-1), s.logcumsumexp(1), d.logcumsumexp(0), h.logcumsumexp(1), x.logcumsumexp(0), s.double().logcumsumexp(0)


def _specials():
    inf, nan = float("inf"), float("nan")
    rows = [[inf, 1.0, inf, -inf, 2.0], [-inf, -inf, 3.0, -inf, inf], [1.0, nan, 2.0, inf, -inf], [-inf, inf, -inf, nan, 1.0],
            [inf, -inf, -inf, inf, nan], [1e30, -1e30, 88.0, 89.0, -104.0], [-0.0, 0.0, -1e-40, 1e-40, 0.5]]
    return torch.tensor(rows)


PROGRAMS += [
    ("logcumsumexp_op", logcumsumexp_op, lambda: (R(6, 300) * 30, _specials(), R(40, 3, dtype=torch.float64) * 100,
                                                  (R(3, 50) * 4).half()), {}),
]

# ----- _assert_async (one_hot checks its classes: a call with a class out of range must fail
# before anything is written) -----
def one_hot_assert(y, w):
    return F.one_hot(y, 7).float().sum(0) * w, F.one_hot(y, 7) * 3


PROGRAMS += [
    ("one_hot_assert", one_hot_assert, lambda: (torch.randint(0, 7, (20,)), R(7)), {}),
]

# ----- control flow: torch.cond and while_loop (each subgraph a nested graph module of the text) -----
from torch._higher_order_ops.while_loop import while_loop  # noqa: E402


def cf_sgd_skip(p, g):  # an optimizer step skipped on overflow
    finite = torch.isfinite(g).all()
    return torch.cond(finite, lambda p, g: p - 0.01 * g, lambda p, g: p.clone(), (p, g))


def cf_running_stats(x, rm, training):  # running stats updated only in training
    return torch.cond(training.sum() > 0, lambda x, rm: rm * 0.9 + 0.1 * x.mean(0), lambda x, rm: rm.clone(), (x, rm))


def cf_kv_write(cache, k, flag):  # a KV-cache write in one branch
    def write(cache, k):
        c = cache.clone()
        c[:, 3:4] = k
        return c
    return torch.cond(flag > 0, write, lambda cache, k: cache.clone(), (cache, k))


def cf_nested(g):  # nested conds: clip by the norm, twice
    n = g.norm()

    def big(g, n):
        return torch.cond(n > 100.0, lambda g, n: g * (1.0 / n), lambda g, n: g * 0.5, (g, n))
    return torch.cond(n > 10.0, big, lambda g, n: g.clone(), (g, n))


def cf_two_outs(x, y):
    return torch.cond(x.sum() > y.sum(), lambda x, y: (x + y, x * y), lambda x, y: (x - y, x / (y.abs() + 1)), (x, y))


def cf_clip(g1, g2):  # gradient clipping of two tensors by their joint norm
    norm = torch.sqrt((g1 * g1).sum() + (g2 * g2).sum())

    def clip(g1, g2, norm):
        s = 1.0 / (norm + 1e-6)
        return g1 * s, g2 * s
    return torch.cond(norm > 1.0, clip, lambda g1, g2, norm: (g1.clone(), g2.clone()), (g1, g2, norm))


def cf_scale_update(x, s):  # a loss scaler: grow on finite values, back off on overflow
    return torch.cond(torch.isfinite(x).all(), lambda x, s: (x * s, s * 2.0), lambda x, s: (x.clone(), s * 0.5), (x, s))


def cf_jacobi_fixed(u, f):  # Jacobi sweeps, a fixed trip count
    def body(i, u):
        v = u.clone()
        v[1:-1] = 0.5 * (u[:-2] + u[2:]) - f[1:-1]
        return i + 1, v
    i, u = while_loop(lambda i, u: i < 10, body, (torch.zeros((), dtype=torch.int64), u))
    return u


def cf_jacobi_conv(u, f):  # Jacobi sweeps until converged
    def body(u, err):
        v = u.clone()
        v[1:-1] = 0.5 * (u[:-2] + u[2:] + f[1:-1])
        return v, (v - u).abs().max()
    return while_loop(lambda u, err: err > 1e-3, body, (u, torch.ones(())))


def cf_loop_n(x, n):  # n trips, zero included
    i, x = while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 2), (torch.zeros((), dtype=torch.int64), x))
    return x, i


def cf_bisect(a):  # cube roots by bisection
    def body(lo, hi, i):
        mid = (lo + hi) * 0.5
        big = mid * mid * mid > a
        return torch.where(big, lo, mid), torch.where(big, mid, hi), i + 1
    lo, hi, i = while_loop(lambda lo, hi, i: i < 30, body, (torch.zeros_like(a), a + 1.0, torch.zeros((), dtype=torch.int64)))
    return (lo + hi) * 0.5


def cf_cond_in_loop(x):  # a cond inside a loop body
    def body(i, x):
        return i + 1, torch.cond(x.sum() > 0, lambda x: x - 1.0, lambda x: x + 2.0, (x,))
    i, x = while_loop(lambda i, x: i < 6, body, (torch.zeros((), dtype=torch.int64), x))
    return x


PROGRAMS += [
    ("cf_sgd_skip", cf_sgd_skip, lambda: (R(8, 4), R(8, 4)), {}),
    ("cf_sgd_skip_inf", cf_sgd_skip, lambda: (R(8, 4), torch.full((8, 4), float("inf"))), {}),
    ("cf_running_stats", cf_running_stats, lambda: (R(16, 5), R(5), torch.ones(1)), {}),
    ("cf_running_stats_eval", cf_running_stats, lambda: (R(16, 5), R(5), torch.zeros(1)), {}),
    ("cf_kv_write", cf_kv_write, lambda: (R(2, 8, 4), R(2, 1, 4), torch.ones(())), {}),
    ("cf_nested", cf_nested, lambda: (R(10, 10) * 5,), {}),
    ("cf_nested_small", cf_nested, lambda: (R(3) * 0.1,), {}),
    ("cf_two_outs", cf_two_outs, lambda: (R(6), R(6)), {}),
    ("cf_clip", cf_clip, lambda: (R(5, 4), R(7)), {}),
    ("cf_clip_small", cf_clip, lambda: (R(5, 4) * 0.01, R(7) * 0.01), {}),
    ("cf_scale_update", cf_scale_update, lambda: (R(9), torch.tensor(1024.0)), {}),
    ("cf_scale_update_inf", cf_scale_update, lambda: (torch.tensor([1.0, float("inf"), 2.0]), torch.tensor(1024.0)), {}),
    ("cf_jacobi_fixed", cf_jacobi_fixed, lambda: (R(16), R(16) * 0.1), {}),
    ("cf_jacobi_conv", cf_jacobi_conv, lambda: (torch.zeros(12), R(12) * 0.01), {}),
    ("cf_loop_zero", cf_loop_n, lambda: (R(5), torch.tensor(0)), {}),
    ("cf_loop_three", cf_loop_n, lambda: (R(5), torch.tensor(3)), {}),
    ("cf_bisect", cf_bisect, lambda: (torch.rand(6) * 5,), {}),
    ("cf_cond_in_loop", cf_cond_in_loop, lambda: (R(7),), {}),
]


# ----- values read from tensors: item() and tolist() as unbacked symbols (u5), the assertions on
# them, slices and writes at positions read from a tensor, sizes from them -----
def it_kv_write(cache, k, pos):
    p = pos.item()
    cache[:, p:p + 1] = k
    return cache


def it_valid_len(x, n):
    return x[:n.item()] * 2


def it_table(table, i, x):
    return table[i.item()] * x


def it_mod(x, n):
    return x[n.item() % 4]


def it_tolist(x, ab):
    a, b = ab.tolist()
    return x[a:b] + 1


def it_split_counts(x, counts):
    parts = torch.split(x, counts.tolist())
    return parts[0] * 2, parts[1].sum(0)


def it_window(x, s):
    i = s.item()
    return x[2 * i: 2 * i + 2].clone()


def it_select_write(cache, pos, v):
    cache[pos.item()] = v


def it_check_is_size(x, n):
    m = n.item()
    torch._check_is_size(m)
    torch._check(m < x.shape[0])
    return x[m] - x[0]


def it_mask_len(x, lens):
    return x[1, :lens[1].item()].mean()


def it_moe_split(x, idx):
    n0 = (idx == 0).sum().item()
    torch._check_is_size(n0)
    torch._check(n0 <= x.shape[0])
    a, b = torch.split(x, [n0, x.shape[0] - n0])
    return a * 2, b.sum(0)


def it_argmax_row(x, table):
    return table[x.argmax().item()] + 1


def it_mask_prefix(x, mask):
    return x[:mask.sum().item()] * 3


def it_kv_computed(cache, k, lens):
    p = lens.max().item()
    cache[:, p:p + 1] = k


def it_add_at(x, pos):
    x[pos.item()] += 1
    return x.sum()


S = {"scalars": True}
PROGRAMS += [
    ("it_kv_write", it_kv_write, lambda: (torch.zeros(2, 8, 3), R(2, 1, 3), torch.tensor(5)), S),
    ("it_valid_len", it_valid_len, lambda: (R(10, 3), torch.tensor(4)), S),
    ("it_table", it_table, lambda: (R(7, 4), torch.tensor(3), R(4)), S),
    ("it_mod", it_mod, lambda: (R(4, 3), torch.tensor(6)), S),
    ("it_tolist", it_tolist, lambda: (R(10, 2), torch.tensor([2, 7])), S),
    ("it_split_counts", it_split_counts, lambda: (R(9, 4), torch.tensor([3, 6])), S),
    ("it_window", it_window, lambda: (R(12, 3), torch.tensor(3)), S),
    ("it_select_write", it_select_write, lambda: (torch.zeros(6, 4), torch.tensor(2), R(4)), S),
    ("it_check_is_size", it_check_is_size, lambda: (R(7, 2), torch.tensor(3)), S),
    ("it_mask_len", it_mask_len, lambda: (R(3, 9), torch.tensor([2, 5, 7])), S),
    ("it_moe_split", it_moe_split, lambda: (R(8, 4), torch.tensor([0, 1, 0, 0, 1, 1, 0, 1])), S),
    ("it_argmax_row", it_argmax_row, lambda: (R(6), R(6, 3)), S),
    ("it_mask_prefix", it_mask_prefix, lambda: (R(10, 2), torch.tensor([1, 1, 0, 1, 0, 0, 1, 0, 0, 0])), S),
    ("it_kv_computed", it_kv_computed, lambda: (torch.zeros(2, 8, 3), R(2, 1, 3), torch.tensor([3, 5, 2])), S),
    ("it_add_at", it_add_at, lambda: (torch.zeros(5, 2), torch.tensor(3)), S),
]

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    only = set(sys.argv[2:])
    for name, fn, make_args, opts in PROGRAMS:
        if only and name not in only:
            continue
        try:
            capture(name, fn, make_args, opts)
        except Exception as e:  # keep going: report what could not be captured
            print(f"{name}: FAILED {type(e).__name__}: {e}")
