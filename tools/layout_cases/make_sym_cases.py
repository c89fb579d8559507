#!/usr/bin/env python3
"""Random operand layouts with symbolic extents (dynamic shapes) and the result strides PyTorch's fake
tensors give them, for ctfx's result-layout rules on symbolic layouts (include/ctfx/ops/result_layout.hpp,
ops/layout_compare.hpp; test/unit/ir_layout_rules_test.cpp).

Each case is built eight times, from sizes drawn afresh (every extent a distinct size of 2 to 9,
four times the smallest, 2 to 5, so that each is its own symbol and a derived extent like
(s0 + 1)//2 is 1 now and then; extents a case shares, as broadcast operands do, are equal), in a
FakeTensorMode with a ShapeEnv: an operand permuted, channels-last or sliced with step 2 or 3, then
one of add (with a second operand, broadcast along some dimensions), neg, clone, convert (to
float64), index (an int64 index of static length after Nones) and cat. Symbols are renamed s0, s1,
... in the order the operands' extents name them.

A layout fits a build when, at that build's sizes, it gives every extent longer than 1 the stride
PyTorch gave it (the strides of an extent of 1 address nothing). `same`: the strides PyTorch printed
for one of the builds fit all of them; ctfx's layout must then fit them all too (or ctfx refuses the
node, rule result-stride-order, where what the graph fixes does not decide it). `varies`: no build's
strides fit all: PyTorch ordered the result by the sizes it traced with, and ctfx must refuse it.

Each line: verdict|op|operand annotations (FX's "f32[...][...]", separated by ';')|the result's
dtype and extents ("f32[...]")|the builds, separated by ';', each the symbols' values, then ':' and
the result's extents and strides at those sizes (numbers, separated by ','), e.g. "4,5:4,5,5,1"|
the result's annotation as PyTorch prints it in each build, strides included (separated by ';'):
a graph traced at that build's sizes prints these strides, which decide an order ctfx's rules leave
to the sizes (ctfx takes them under a run-time guard).
Not run in CI (needs torch). Usage: make_sym_cases.py [OUT] [COUNT]
"""
import os
import random
import sys

import sympy
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "test", "data", "layout_sym_cases.txt")
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 200
SHORT = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64", torch.bool: "b8"}


def plan(rng):
    """A case, independent of sizes: the op, the operands' ranks and how each is laid out."""
    op = rng.choice(["add", "add", "neg", "clone", "convert", "index", "cat"])
    rank = rng.randint(2, 4) if op != "cat" else 4
    perm = list(range(rank))
    rng.shuffle(perm)
    p = {"op": op, "rank": rank, "perm": perm, "kind": rng.choice(["perm", "perm", "cl", "step", "step3"]),
         "bcast": [rng.random() < 0.3 for _ in range(rank)], "perm2": rng.sample(range(rank), rank),
         "kind2": rng.choice(["perm", "row", "cl"]), "step_dim": rng.randrange(rank), "idx_dim": rng.randrange(rank),
         "idx_len": rng.randint(1, 3), "cat_dim": rng.randrange(rank)}
    return p


def build(p, sizes, mode):
    """The operands (fake, symbolic) and the result of case p with extents `sizes`."""
    def sym(t):
        return mode.from_tensor(t, symbolic_context=StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * t.dim()))

    def laid(kind, perm, shape):
        if kind == "cl" and len(shape) == 4:
            return torch.empty(shape).to(memory_format=torch.channels_last)
        if kind == "row":
            return torch.empty(shape)
        inv = [perm.index(i) for i in range(len(shape))]
        return torch.empty([shape[q] for q in perm]).permute(inv)

    rank, op = p["rank"], p["op"]
    x = sym(laid(p["kind"] if not p["kind"].startswith("step") else "perm", p["perm"], sizes))
    with mode:
        if p["kind"].startswith("step"):  # a step slice: strides that are not dense, a derived extent
            step = 3 if p["kind"] == "step3" else 2
            x = x[tuple(slice(None, None, step) if d == p["step_dim"] else slice(None) for d in range(rank))]
        ops = [x]
        if op == "add":  # y (x's symbols) broadcast along the dimensions bcast marks (extent 1: stride 0)
            y = laid(p["kind2"], p["perm2"], [1 if b else sz for b, sz in zip(p["bcast"], x.shape)])
            ops.append(y)
            r = x + y
        elif op == "neg":
            r = -x
        elif op == "clone":
            r = x.clone()
        elif op == "convert":
            r = x.to(torch.float64)
        elif op == "index":
            i = torch.zeros(p["idx_len"], dtype=torch.int64)
            ops.append(i)
            idx = [None] * p["idx_dim"] + [i]
            r = torch.ops.aten.index.Tensor(x, idx)
        else:
            s2 = list(x.shape)
            s2[p["cat_dim"]] = 2 * s2[p["cat_dim"]]  # twice x's extent along the cat dimension
            y = laid(p["kind2"], p["perm2"], s2)
            ops.append(y)
            r = torch.cat([x, y], p["cat_dim"])
    return ops, r


def text(t, names):
    def e(v):
        if isinstance(v, int):
            return str(v)
        return str(v.node.expr.xreplace(names))
    return f"{SHORT[t.dtype]}[{', '.join(e(s) for s in t.shape)}][{', '.join(e(s) for s in t.stride())}]"


def canonical(t, names):
    """t's extents and strides as expressions in the canonical symbols."""
    def e(v):
        return sympy.Integer(v) if isinstance(v, int) else v.node.expr.xreplace(names)
    return [e(v) for v in t.shape], [e(v) for v in t.stride()]


def run(p, rng):
    """The case's annotations at eight draws of sizes (four of them the smallest, 2 to 5, where a
    derived extent like (s0 + 1)//2 is 1); None when a build fails."""
    outs = []
    for k in range(8):
        sizes = rng.sample(range(2, 10), p["rank"]) if k % 2 else rng.sample(range(2, 2 + p["rank"]), p["rank"])
        env = ShapeEnv()
        mode = FakeTensorMode(shape_env=env)
        try:
            ops, r = build(p, sizes, mode)
        except Exception:
            return None
        names = {}
        for o in ops:
            for s in o.shape:
                if not isinstance(s, int):
                    for f in sorted(s.node.expr.free_symbols, key=str):
                        names.setdefault(f, sympy.Symbol(f"s{len(names)}", integer=True, positive=True))
        values = {names[f]: env.backed_var_to_val[f] for f in names}
        concrete = [int(v) if isinstance(v, int) else int(v.node.hint) for v in list(r.shape) + list(r.stride())]
        outs.append((";".join(text(o, names) for o in ops), text(r, names), canonical(r, names), values, concrete))
    return outs


def fits(strides, out):
    """Whether stride expressions give build `out`'s strides at its sizes, on its extents longer than 1."""
    values, concrete = out[3], out[4]
    rank = len(strides)
    return all(concrete[d] == 1 or int(strides[d].subs(values)) == concrete[rank + d] for d in range(rank))


def main():
    rng = random.Random(17)
    lines = []
    while len(lines) < COUNT:
        p = plan(rng)
        outs = run(p, rng)
        if outs is None or len({o[0] for o in outs}) != 1:
            continue  # (a build PyTorch refused, or operands whose annotations depend on the sizes)
        # (the strides of an extent that is 1 at some sizes address nothing there)
        verdict = "same" if any(all(fits(o[2][1], q) for q in outs) for o in outs) else "varies"
        op = p["op"] + (f".{p['idx_dim']}" if p["op"] == "index" else f".{p['cat_dim']}" if p["op"] == "cat" else "")
        result = outs[0][1][:outs[0][1].index("][") + 1]
        builds = ";".join(",".join(str(o[3][sympy.Symbol(f"s{k}", integer=True, positive=True)]) for k in range(len(o[3]))) + ":" +
                          ",".join(str(v) for v in o[4]) for o in outs)
        printed = ";".join(o[1] for o in outs)
        lines.append(f"{verdict}|{op}|{outs[0][0]}|{result}|{builds}|{printed}")
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} cases ({sum(l.startswith('varies') for l in lines)} vary with the sizes) in {OUT}")


if __name__ == "__main__":
    main()
