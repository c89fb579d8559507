#!/usr/bin/env python3
"""Random operand layouts and the result strides PyTorch's fake tensors give them, for ctfx's
result-layout rules (include/ctfx/ops/result_layout.hpp; test/unit/ir_layout_rules_test.cpp).

Each line: op, operand count, per operand its rank, extents and strides, then the result's rank and
strides. Ops: add (two operands, broadcast), where (bool condition and two operands), neg, clone,
empty_like, convert (to float64); then, from a second random stream (so the lines before stay as
they were), cat.<dim> (one to three operands of ranks 3 to 5, channels-last, channels-last-3d and
extent-1 dimensions among them: torch.cat's cat_compute_output_memory_format) and foreach_add /
foreach_mul_scalar (one element of torch._foreach_add([a], [b]) / torch._foreach_mul([a], 2.0)).
Not run in CI (needs torch). Usage: make_cases.py [OUT] [COUNT] [CAT_COUNT]
"""
import os
import random
import sys

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "test", "data", "layout_cases.txt")
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 400
CAT_COUNT = int(sys.argv[3]) if len(sys.argv) > 3 else 240
INDEX_COUNT = int(sys.argv[4]) if len(sys.argv) > 4 else 240


def layout(shape, rng, dtype=torch.float32):
    """A tensor of `shape` with a random layout: permuted, sliced (non-dense), expanded or channels-last."""
    kind = rng.choice(["perm", "perm", "slice", "step", "expand", "cl"])
    if kind == "cl" and len(shape) == 4:
        return torch.empty(shape, dtype=dtype).to(memory_format=torch.channels_last)
    if kind == "cl" and len(shape) == 5:
        return torch.empty(shape, dtype=dtype).to(memory_format=torch.channels_last_3d)
    perm = list(range(len(shape)))
    rng.shuffle(perm)
    inv = [perm.index(i) for i in range(len(shape))]
    if kind in ("slice", "step"):
        big = [s + rng.randint(0, 2) if kind == "slice" else s * 2 for s in shape]
        t = torch.empty([big[p] for p in perm], dtype=dtype).permute(inv)
        idx = tuple(slice(0, s) if kind == "slice" else slice(0, 2 * s, 2) for s in shape)
        return t[idx]
    if kind == "expand":
        base = [s if rng.random() < 0.6 else 1 for s in shape]
        t = torch.empty([base[p] for p in perm], dtype=dtype).permute(inv)
        return t.expand(shape)
    return torch.empty([shape[p] for p in perm], dtype=dtype).permute(inv)


def put(t):
    return f"{t.dim()} " + " ".join(str(s) for s in t.shape) + " " + " ".join(str(s) for s in t.stride())


def cat_and_foreach_cases(rng):
    """cat along a random dimension of inputs in random layouts (mostly ranks 4 and 5, extents 1 to 3,
    so that channels-last and the ambiguous extent-1 cases come up), and foreach elements."""
    lines = []
    while len(lines) < CAT_COUNT:
        rank = rng.choice([3, 4, 4, 4, 5, 5])
        shape = [rng.choice([1, 1, 2, 3]) for _ in range(rank)]
        if rng.random() < 0.2:
            op = rng.choice(["foreach_add", "foreach_mul_scalar"])
            a = layout(shape, rng)
            if op == "foreach_add":
                b = layout(shape, rng)
                ops, r = (a, b), torch._foreach_add([a], [b])[0]
            else:
                ops, r = (a,), torch._foreach_mul([a], 2.0)[0]
        else:
            d = rng.randrange(rank)
            ops = []
            for _ in range(rng.choice([1, 2, 2, 2, 3])):
                s = list(shape)
                s[d] = rng.choice([1, 2, 3])
                # mostly channels-last inputs, so that all of them agree now and then
                ops.append(torch.empty(s).to(memory_format=torch.channels_last if rank == 4 else torch.channels_last_3d)
                           if rank > 3 and rng.random() < 0.5 else layout(s, rng))
            op, r = f"cat.{d}", torch.cat(ops, d)
        lines.append(f"{op} {len(ops)} " + " ".join(put(o) for o in ops) + f" {r.dim()} " + " ".join(str(s) for s in r.stride()))
    return lines


def index_cases(rng):
    """x[indices] on x in random layouts (ranks 1 to 5, channels-last among them): one to three int64
    indices (broadcast against each other, adjacent or not) among None positions."""
    lines = []
    while len(lines) < INDEX_COUNT:
        rank = rng.randint(1, 5)
        shape = [rng.choice([1, 2, 3, 4]) for _ in range(rank)]
        x = layout(shape, rng)
        npos = rng.randint(1, rank)
        pattern = [rng.random() < 0.5 for _ in range(npos)]
        if not any(pattern):
            pattern[rng.randrange(npos)] = True
        bshape = [rng.choice([1, 2, 3]) for _ in range(rng.randint(0, 2))]
        idx, ops = [], [x]
        for d, on in enumerate(pattern):
            if not on:
                idx.append(None)
                continue
            s = [b if rng.random() < 0.7 else 1 for b in bshape]
            t = torch.zeros(s, dtype=torch.int64)  # index 0: in range of any extent but 0
            idx.append(t)
            ops.append(t)
        if any(shape[d] == 0 for d, on in enumerate(pattern) if on):
            continue
        r = torch.ops.aten.index.Tensor(x, idx)
        op = "index." + "".join("i" if on else "n" for on in pattern)
        lines.append(f"{op} {len(ops)} " + " ".join(put(o) for o in ops) + f" {r.dim()} " + " ".join(str(s) for s in r.stride()))
    return lines


def main():
    rng = random.Random(7)
    lines = []
    with FakeTensorMode():
        while len(lines) < COUNT:
            rank = rng.randint(1, 4)
            shape = [rng.choice([1, 2, 3, 4]) for _ in range(rank)]
            a = layout(shape, rng)
            op = rng.choice(["add", "add", "add", "where", "neg", "clone", "empty_like", "convert"])
            if op in ("add", "where"):
                bshape = shape[rng.randint(0, rank - 1):] if rng.random() < 0.3 else shape
                bshape = [s if rng.random() < 0.7 else 1 for s in bshape]
                b = layout(bshape, rng) if bshape else torch.empty(())
                if rng.random() < 0.5:
                    a, b = b, a
                if op == "add":
                    ops, r = (a, b), a + b
                else:
                    c = layout(shape, rng, torch.bool)
                    ops, r = (c, a, b), torch.where(c, a, b)
            else:
                ops = (a,)
                r = {"neg": lambda: -a, "clone": lambda: a.clone(), "empty_like": lambda: torch.empty_like(a),
                     "convert": lambda: a.to(torch.float64)}[op]()
            lines.append(f"{op} {len(ops)} " + " ".join(put(o) for o in ops) + f" {r.dim()} " + " ".join(str(s) for s in r.stride()))
        lines += cat_and_foreach_cases(random.Random(11))
        lines += index_cases(random.Random(13))
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} cases in {OUT}")


if __name__ == "__main__":
    main()
