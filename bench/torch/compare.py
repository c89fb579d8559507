#!/usr/bin/env python3
"""ctfx against PyTorch eager and torch.compile on the host-benchmark workloads (bench/runtime).

Runs the same five workloads in PyTorch (eager, and torch.compile of the functional program whose
result is copied back into the input, as a user writes it) on the CPU, runs ctfx's
bench/runtime binary, and prints one side-by-side markdown table (median microseconds).
Not part of CI. Needs `pip install torch numpy`.

  python3 bench/torch/compare.py [--quick] [--reps N] [--ctfx build/bench/runtime/ctfx_runtime_bench]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import torch


def median_us(f, reps):
    f()
    t = []
    for _ in range(reps):
        a = time.perf_counter()
        f()
        t.append((time.perf_counter() - a) * 1e6)
    return statistics.median(t)


def workloads(quick):
    S = 1024 if quick else 8192
    G = 1024 if quick else 4096
    w = []

    cache = torch.rand(8, 32, S, 128).to(torch.float16)
    k = torch.rand(8, 32, 1, 128).to(torch.float16)
    pos = torch.tensor([S // 2])

    def kv_eager():
        cache[:, :, pos] = k  # as a user writes it: index_put_ with None for the leading dims

    def kv_fn(c, kk, p):
        c[:, :, p] = kk

    w.append(("kv-cache update, 1 token", kv_eager, kv_fn, (cache, k, pos)))

    grid = torch.rand(G, G)
    edges = [torch.rand(G - 2) for _ in range(4)]

    def halo_fn(g, n, s, we, e):
        g[0, 1:-1] = n
        g[-1, 1:-1] = s
        g[1:-1, 0] = we
        g[1:-1, -1] = e

    w.append(("halo exchange, 4 edges", lambda: halo_fn(grid, *edges), halo_fn, (grid, *edges)))

    R, C = 64, 16384
    x = torch.rand(R, C)
    src = torch.rand(R, C)

    def chain_fn(xx, ss):
        for i in range(R):
            j = (i * 7) % R
            xx[i:i + 1] = ss[j:j + 1]

    w.append(("64 slice_scatters, 4 MiB", lambda: chain_fn(x, src), chain_fn, (x, src)))

    N, B = 1 << 20, 1024
    h = torch.zeros(B)
    idx = (torch.arange(N, dtype=torch.int64) * 2654435761) % B
    v = torch.rand(N)

    def hist_fn(hh, ii, vv):
        hh.index_put_((ii,), vv, accumulate=True)

    w.append(("index_put accumulate, 1M -> 1024", lambda: hist_fn(h, idx, v), hist_fn, (h, idx, v)))

    E = (16 if quick else 64) << 20
    a = torch.rand(E)
    w.append((f"clone, {E * 4 >> 20} MiB", lambda: a.clone(), lambda t: t.clone(), (a,)))
    return w


def ctfx_rows(binary, quick, reps):
    cmd = [binary, "--reps", str(reps)] + (["--quick"] if quick else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\| (.+?) \| (\d+) \| ([\d.]+) \|", line)
        if m:
            rows[m.group(1)] = float(m.group(3))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=21)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--ctfx", default=os.path.join(root, "build", "bench", "runtime", "ctfx_runtime_bench"))
    args = ap.parse_args()
    torch.set_num_threads(1)  # ctfx's host backend here is sequential (CPP system)
    ctfx = ctfx_rows(args.ctfx, args.quick, args.reps)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread, CPU")
    print()
    print("| workload | ctfx (us) | torch eager (us) | torch.compile (us) | eager / ctfx | compile / ctfx |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, eager, fn, tensors in workloads(args.quick):
        print(f"[{name}]...", file=sys.stderr)
        te = median_us(eager, args.reps)
        try:
            compiled = torch.compile(fn)
            tc = median_us(lambda: compiled(*tensors), args.reps)
        except Exception as e:  # noqa: BLE001 - report, do not hide
            print(f"torch.compile failed on {name}: {e}", file=sys.stderr)
            tc = float("nan")
        c = ctfx.get(name, float("nan"))
        print(f"| {name} | {c:.1f} | {te:.1f} | {tc:.1f} | {te / c:.2f} | {tc / c:.2f} |")


if __name__ == "__main__":
    main()
