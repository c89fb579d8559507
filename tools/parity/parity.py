#!/usr/bin/env python3
"""Parity of ctfx's reinplacing with Inductor's, program by program (not part of CI; needs torch).

For each PyTorch program below this script
  1. compiles it with torch.compile (CPU), capturing, as tools/fx_capture/capture.py does, the
     post-grad FX graph that Inductor's reinplacing pass receives (post_grad_custom_pre_pass) with
     the inputs and PyTorch eager's outputs and mutated inputs as .npy;
  2. records what Inductor's reinplacing decided, by wrapping
     torch._inductor.fx_passes.reinplace.reinplace_inplaceable_ops_core: every candidate node
     (inplaceable aten/foreach ops, _generalized_scatter, auto_functionalized mutable arguments) is
     looked at before and after the pass: a node whose target became the in-place op, or an
     auto_functionalized argument missing from meta["only_clone_these_tensors"], was reinplaced;
     any other candidate still copies the bytes of its mutated tensor(s);
  3. runs the graph text through ctfx_opt: --report (with Inductor's table and with the executors'
     table) and --run on the saved inputs, and compares ctfx's outputs and mutated inputs with
     PyTorch eager's, bit for bit (and in ulp, when not);
  4. prints one row per program: candidates and how many each reinplaced, the bytes each still
     copies, and whether ctfx's results, and Inductor's compiled program's, equal eager's (outputs
     and inputs after the call, on the same inputs: torch.manual_seed(0) before each program).

Usage: parity.py [--ctfx-opt PATH] [--save DIR] [--markdown] [NAME ...]
  --ctfx-opt PATH  the ctfx_opt binary (default: build/tools/ctfx_opt/ctfx_opt)
  --save DIR       also keep each newly captured graph with its .npy files in DIR (e.g. test/data/fx),
                   when ctfx's results equal eager's bit for bit; graphs already in DIR are kept
  --markdown       print the table as Markdown (for tools/parity/RESULTS.md)
  NAME ...         only these programs
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
from torch._inductor import config
from torch._inductor.fx_passes import reinplace as inductor_reinplace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "fx_capture"))
import capture  # noqa: E402  (the capture approach, its programs and its user ops)

config.fx_graph_cache = False  # a cache hit would skip the post-grad passes
aten = torch.ops.aten


# ----- programs beyond tools/fx_capture's -----
# From PyTorch's test/inductor/test_inplacing_pass.py (shared/reference/inductor.md, B.1), CPU forms.
def dont_modify_live(x, y):
    c = x.cos()
    x2 = c.index_put((y,), torch.zeros(()))
    return x2, c


def dont_modify_view_of_live(x, y):
    c = x.cos()
    a = c.view(-1)
    p = a.index_put((y,), torch.zeros(()))
    return p + c.cos()


def dont_modify_input(x, y):
    return x.index_put((y,), torch.zeros(()))


def should_modify_inner(x, y):
    c = x.cos()
    return c.index_put((y,), torch.zeros(()))


def should_modify_input(x, y):
    x.index_put_((y,), torch.zeros(()))
    return x


def multi_output_intermediate(x):
    a = torch.empty_like(x)
    b = torch.empty_like(x)
    capture.sin_cos_(x, a, b)
    return a, b, x.pow(2)


def multiple_mutations(x, out):
    capture.sin_(x, out)
    y = out.clone()
    capture.sin_(y, out)
    return out


def generalized_scatter(x):
    a = torch.ones(2, 3) * x
    c = torch.ones(2)
    a[:, 0].copy_(c)
    d = a.clone()
    e = d.as_strided([2], [3], 0)
    f = e.clone()
    e.copy_(torch.zeros(2))
    h = torch.zeros(2, 3)
    h[:, 0].copy_(f)
    return d + h


# The anchor bugs of the reinplacing issue (PyTorch issues named in shared/DESIGN.md).
def bug_198094(x, src):  # scatter reinplaced into an input that a later mutation overwrites
    y = torch.slice_scatter(x, src, 0, 0, 1)
    x.zero_()
    return y


def bug_195451(x, src):  # scatter result escaping as an alias of the input
    updated = torch.slice_scatter(x, src, 0, 0, 1)
    x.copy_(updated)
    return updated


def bug_198031(x):  # y = x.clone(); op(y, x) must not become op(x, x)
    y = x.clone()
    capture.sin_(y, x)  # x = sin(y): removing the clone would make it sin_(x, x) and return sin(x)
    return y


def bug_198131(dst, src):  # no-op copy of an input that is mutated later
    dst[0:, :] = src[0:, :]
    src.add_(1)


def bug_197489(x):  # a clone whose storage offset differs from its source
    y = x[1:].clone()
    x.mul_(2)
    return y


def bug_197893(x):  # x + 0 returned: must not be the input itself
    return x + 0


# A KV-cache decode step (keys and values), a halo exchange with a stencil, index_put chains.
def kv_cache_step(kc, vc, k, v, pos):
    kc[:, :, pos] = k
    vc[:, :, pos] = v


def halo_then_stencil(u):
    u[0, 1:-1] = u[-2, 1:-1]
    u[-1, 1:-1] = u[1, 1:-1]
    return u[1:-1, 1:-1] * 0.5 + u[:-2, 1:-1] * 0.25 + u[2:, 1:-1] * 0.25


def index_put_chain_live(x, i1, v1, i2, v2):
    y = x.index_put((i1,), v1)
    z = y.index_put((i2,), v2)
    return z, y.sum(0)


def index_put_accumulate_chain(x, i1, v1, i2, v2):
    x.index_put_((i1,), v1, accumulate=True)
    x.index_put_((i2,), v2, accumulate=True)


# Views of a written-back scatter returned after the copy_: the post-grad graph of epilogue_views
# (`x[0] = 7; return x[:, 1], x.t()`, whose outputs alias x in eager) is this program's graph too,
# whose outputs must not alias x (the clone is removed by no-op removal, its source not being an
# input storage). Inductor reinplaces both; here its outputs alias x.
def epilogue_clone_views(x):
    x[0] = 7
    y = x.clone()
    return y[:, 1], y.t()


def epilogue_clone_view_and_value(x, v):
    x[1:3] = v
    y = x.clone()
    return y[2], y.sum()


PROGRAMS = list(capture.PROGRAMS) + [
    ("epilogue_clone_views", epilogue_clone_views, lambda: (torch.randn(3, 4),), {}),
    ("epilogue_clone_view_and_value", epilogue_clone_view_and_value,
     lambda: (torch.randint(-64, 64, (5, 4)).float() / 8, torch.randn(2, 4).round()), {}),
    ("dont_modify_live", dont_modify_live, lambda: (torch.randn(4), torch.ones(2, dtype=torch.int64)), {}),
    ("dont_modify_view_of_live", dont_modify_view_of_live, lambda: (torch.randn(4), torch.ones(2, dtype=torch.int64)), {}),
    ("dont_modify_input", dont_modify_input, lambda: (torch.randn(4), torch.ones(2, dtype=torch.int64)), {}),
    ("should_modify_inner", should_modify_inner, lambda: (torch.randn(4), torch.ones(2, dtype=torch.int64)), {}),
    ("should_modify_input", should_modify_input, lambda: (torch.randn(4), torch.ones(2, dtype=torch.int64)), {}),
    ("multi_output_intermediate", multi_output_intermediate, lambda: (torch.randn(3, 3),), {}),
    ("multiple_mutations", multiple_mutations, lambda: (torch.randn(3), torch.randn(3)), {}),
    ("generalized_scatter", generalized_scatter, lambda: (torch.randn(2, 3),), {}),
    ("bug_198094", bug_198094, lambda: (torch.randn(4, 3), torch.randn(1, 3)), {}),
    ("bug_195451", bug_195451, lambda: (torch.randn(4, 3), torch.randn(1, 3)), {}),
    ("bug_198031", bug_198031, lambda: (torch.randn(5),), {}),
    ("bug_198131", bug_198131, lambda: (torch.randn(3, 4), torch.randn(3, 4)), {}),
    ("bug_197489", bug_197489, lambda: (torch.randn(6, 2),), {}),
    ("bug_197893", bug_197893, lambda: (torch.randn(5),), {}),
    ("kv_cache_step", kv_cache_step,
     lambda: (torch.randn(2, 4, 64, 16), torch.randn(2, 4, 64, 16), torch.randn(2, 4, 1, 16), torch.randn(2, 4, 1, 16),
              torch.tensor([17])), {}),
    ("halo_then_stencil", halo_then_stencil, lambda: (torch.randn(10, 12),), {}),
    ("index_put_chain_live", index_put_chain_live,
     lambda: (torch.randn(8, 4), torch.tensor([0, 2]), torch.randn(2, 4), torch.tensor([2, 7]), torch.randn(2, 4)), {}),
    ("index_put_accumulate_chain", index_put_accumulate_chain,
     lambda: (torch.randn(8, 4), torch.tensor([0, 2, 2]), torch.randn(3, 4), torch.tensor([7, 0]), torch.randn(2, 4)), {}),
]


# ----- Inductor's decisions -----
def _bytes(v):
    if isinstance(v, (list, tuple)):
        return sum(_bytes(x) for x in v)
    val = v.meta.get("val") if isinstance(v, torch.fx.Node) else None
    if isinstance(val, torch.Tensor):
        try:
            return int(val.numel()) * val.element_size()
        except Exception:  # symbolic sizes: not static, as Inductor's counters
            return 0
    return 0


DECISIONS = []  # per call of the pass: list of (node name, reinplaced, bytes still copied)


def _wrapped_core(graph):
    ops = inductor_reinplace.inplaceable_ops
    foreach = inductor_reinplace.inplaceable_foreach_ops
    before = []
    for n in graph.nodes:
        if n.target in ops:
            before.append((n, "op", [n.args[i] for i in ops[n.target].mutated_args] if hasattr(ops[n.target], "mutated_args")
                           else [n.args[ops[n.target].mutated_arg]]))
        elif n.target in foreach:
            before.append((n, "foreach", [n.args[foreach[n.target].mutated_arg]]))
        elif n.target is torch.ops.higher_order.auto_functionalized:
            from torch._higher_order_ops.auto_functionalize import get_mutable_args
            names, _ = get_mutable_args(n.args[0])
            before.append((n, "af", [(a, n.kwargs[a]) for a in names if n.kwargs.get(a) is not None]))
    targets = {n: n.target for n, _, _ in before}
    _original_core(graph)
    rows = []
    for n, kind, muts in before:
        if kind == "af":
            cloned = set(n.meta.get("only_clone_these_tensors", []))
            for a, t in muts:
                rows.append((f"{n.name}.{a}", a not in cloned, _bytes(t) if a in cloned else 0))
        else:
            done = n.target is not targets[n]
            rows.append((n.name, done, 0 if done else _bytes(muts)))
    DECISIONS.append(rows)


_original_core = inductor_reinplace.reinplace_inplaceable_ops_core
inductor_reinplace.reinplace_inplaceable_ops_core = _wrapped_core


# ----- ctfx -----
SUMMARY = re.compile(r"reinplace report \(table (\w+)\): (\d+) of (\d+) candidates reinplaced, (\d+) clones, (\d+) bytes still copied")


def ctfx_report(opt, txt, table):
    p = subprocess.run([opt, txt, "--report", "--table", table], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[0] if p.stderr.strip() else f"exit {p.returncode}"
    m = SUMMARY.search(p.stdout)
    return (int(m.group(2)), int(m.group(3)), int(m.group(5))), p.stdout


def ulp_distance(a, b):
    """Largest distance in units in the last place between a and b at positions where neither is
    NaN (+0 and -0 are one apart); None for non-float dtypes or when NaNs sit at other positions.
    NaNs at the same positions count as equal here, whatever their sign and payload (PyTorch's
    vector lanes make all-ones NaNs, its scalar tails the operand's): nan_bits_differ says so."""
    if a.dtype.kind != "f":
        return None
    na, nb = np.isnan(a), np.isnan(b)
    if (na != nb).any():
        return None
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia, ib = a[~na].view(it).astype(np.int64), b[~nb].view(it).astype(np.int64)
    sign = np.int64(1) << (8 * a.dtype.itemsize - 1)
    ia = np.where(ia < 0, -(ia & (sign - 1)) - 1, ia)
    ib = np.where(ib < 0, -(ib & (sign - 1)) - 1, ib)
    return int(np.max(np.abs(ia - ib))) if ia.size else 0


def nan_bits_differ(a, b):
    """Whether a and b hold NaNs at the same positions with other bits (sign or payload)."""
    if a.dtype.kind != "f":
        return False
    na = np.isnan(a)
    return bool(na.any()) and a[na].tobytes() != b[na].tobytes()


def ctfx_run(opt, work, name, table):
    inputs = []
    while os.path.exists(os.path.join(work, f"{name}.input{len(inputs)}.npy")):
        inputs.append(os.path.join(work, f"{name}.input{len(inputs)}.npy"))
    out = os.path.join(work, f"{name}.ctfx.{table}")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    p = subprocess.run([opt, os.path.join(work, name + ".txt"), "--run", "--inputs", ",".join(inputs), "--outputs", out,
                        "--table", table], capture_output=True, text=True)
    if p.returncode != 0:
        return "run failed: " + p.stderr.strip()
    worst, nan_bits = 0, False
    expected = sorted(f for f in os.listdir(work) if f.startswith(name + ".output") or f.startswith(name + ".mutated"))
    written = sorted(os.listdir(out))
    for e in expected:
        if e[len(name) + 1:] not in written:
            return f"missing {e[len(name) + 1:]}"
    for f in written:
        ref = os.path.join(work, f"{name}.{f}")
        if not os.path.exists(ref) and f.startswith("mutated"):
            ref = os.path.join(work, f"{name}.input{f[len('mutated'):-4]}.npy")
        a, b = np.load(ref), np.load(os.path.join(out, f))
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{f}: {b.dtype}{list(b.shape)} vs eager {a.dtype}{list(a.shape)}"
        if a.tobytes() != b.tobytes():
            d = ulp_distance(a, b)
            if d is None:
                return f"{f} differs"
            worst = max(worst, d)
            nan_bits = nan_bits or nan_bits_differ(a, b)
    verdict = "equal" if worst == 0 else f"within {worst} ulp"
    return verdict + ("; NaNs with other sign or payload bits" if nan_bits else "")


def inductor_matches_eager(fn, make_args, opts):
    """Inductor's compiled program against eager on the same (seeded) inputs: outputs and inputs after."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    args = make_args()
    eager_args = [a.clone() for a in args]
    compile_opts = {k: v for k, v in opts.items() if k != "sizes"}  # "sizes": capture.py's extra sizes
    got = torch.compile(fn, fullgraph=True, **compile_opts)(*args)
    want = fn(*eager_args)

    def flat(o):
        return [] if o is None else list(o) if isinstance(o, (tuple, list)) else [o]

    pairs = list(zip(flat(got), flat(want))) + list(zip(args, eager_args))
    def same(g, w):  # NaN equals NaN in the same place
        return g.shape == w.shape and g.dtype == w.dtype and (
            torch.equal(g, w) or (g.is_floating_point() and torch.allclose(g, w, rtol=0, atol=0, equal_nan=True)))

    for g, w in pairs:
        if not same(g, w):
            return "differs" if torch.allclose(g, w) is False else "within rounding"
    def shares(t, ins):  # same storage: a view at an offset (y[2]) aliases its base too
        return isinstance(t, torch.Tensor) and any(t.untyped_storage().data_ptr() == a.untyped_storage().data_ptr() for a in ins)

    aliased = any(shares(g, args) for g in flat(got))
    aliased_eager = any(shares(w, eager_args) for w in flat(want))
    return "equal" + (" (output aliases an input; eager's does not)" if aliased and not aliased_eager else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctfx-opt", default=os.path.join(ROOT, "build", "tools", "ctfx_opt", "ctfx_opt"))
    ap.add_argument("--save")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    if not os.access(args.ctfx_opt, os.X_OK):
        sys.exit(f"parity.py: no ctfx_opt at {args.ctfx_opt} (build it: cmake --build build --target ctfx_opt)")
    work = tempfile.mkdtemp(prefix="ctfx_parity_")
    capture.OUT = work
    rows = []
    for name, fn, make_args, opts in PROGRAMS:
        if args.names and name not in args.names:
            continue
        DECISIONS.clear()
        try:
            inductor_result = inductor_matches_eager(fn, make_args, opts)
        except Exception as e:
            inductor_result = f"failed: {type(e).__name__}"
        DECISIONS.clear()
        torch.manual_seed(0)  # the same inputs on every run
        try:
            capture.capture(name, fn, make_args, opts)
        except Exception as e:  # keep going: the row says what could not be captured
            rows.append((name, None, None, None, f"capture failed: {type(e).__name__}: {str(e).splitlines()[0][:80]}", inductor_result))
            continue
        ind = [r for call in DECISIONS for r in call]
        inductor = (sum(1 for r in ind if r[1]), len(ind), sum(r[2] for r in ind))
        txt = os.path.join(work, name + ".txt")
        rep_i, text_i = ctfx_report(args.ctfx_opt, txt, "inductor")
        rep_e, _ = ctfx_report(args.ctfx_opt, txt, "executor")
        if rep_i is None:
            rows.append((name, inductor, None, None, "ctfx_opt: " + text_i, inductor_result))
            continue
        result = ctfx_run(args.ctfx_opt, work, name, "inductor")
        result_e = ctfx_run(args.ctfx_opt, work, name, "executor")
        if result_e != result:
            result += f" (executor table: {result_e})"
        rows.append((name, inductor, rep_i, rep_e, result, inductor_result))
        # New graphs only (a saved graph keeps its data), and only those ctfx runs bit for bit.
        if args.save and result == "equal" and result_e == "equal" and not os.path.exists(os.path.join(args.save, name + ".txt")):
            for f in os.listdir(work):
                if f.startswith(name + ".") and (f.endswith(".npy") or f.endswith(".txt")):
                    shutil.copy(os.path.join(work, f), args.save)

    def cell(t):
        return "—" if t is None else f"{t[0]}/{t[1]}"

    def b(t):
        return "—" if t is None else str(t[2])

    head = ["program", "Inductor reinplaced", "ctfx reinplaced (Inductor table)", "ctfx reinplaced (executor table)",
            "Inductor bytes copied", "ctfx bytes copied (Inductor table)", "ctfx bytes copied (executor table)",
            "ctfx outputs vs eager", "Inductor outputs vs eager"]
    table = [[n, cell(i), cell(c), cell(e), b(i), b(c), b(e), r, ir] for n, i, c, e, r, ir in rows]
    # Totals, and the programs where ctfx (either table) reinplaces fewer candidates than Inductor.
    done = [(n, i, c, e) for n, i, c, e, _, _ in rows if i is not None and c is not None]
    tot = [sum(t[k][0] for t in [(i, c, e) for _, i, c, e in done]) for k in range(3)]
    cands = sum(i[1] for _, i, _, _ in done)
    fewer = [n for n, i, c, e in done if c[0] < i[0] or e[0] < i[0]]
    summary = (f"{len(done)} programs, {cands} candidates: Inductor reinplaced {tot[0]}, ctfx {tot[1]} with Inductor's table, "
               f"{tot[2]} with the executor table; ctfx below Inductor on: {', '.join(fewer) if fewer else 'none'}")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in table:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(h), *(len(r[k]) for r in table)) if table else len(h) for k, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for r in table:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    print()
    print(summary)
    print(f"(graphs and .npy files in {work})", file=sys.stderr)


if __name__ == "__main__":
    main()
