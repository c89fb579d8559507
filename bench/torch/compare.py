#!/usr/bin/env python3
"""ctfx against PyTorch eager and torch.compile on the host-benchmark workloads (bench/runtime).

Runs the same five workloads in PyTorch (eager, and torch.compile of the functional program whose
result is copied back into the input, as a user writes it) on the CPU (or, with --device cuda, on
the GPU), runs ctfx's benchmark binary for that backend (bench/runtime, or bench/cuda), and prints
one side-by-side markdown table (median microseconds). Not part of CI. Needs `pip install torch numpy`.

  python3 bench/torch/compare.py [--quick] [--reps N] [--device cpu|cuda] [--ctfx BINARY]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import torch


SYNC = lambda: None  # noqa: E731 - torch.cuda.synchronize on the GPU: time the work, not the launch


def median_us(f, reps):
    f()
    SYNC()
    t = []
    for _ in range(reps):
        a = time.perf_counter()
        f()
        SYNC()
        t.append((time.perf_counter() - a) * 1e6)
    return statistics.median(t)


def workloads(quick, dev):
    S = 1024 if quick else 8192
    G = 1024 if quick else 4096
    w = []

    cache = torch.rand(8, 32, S, 128).to(torch.float16).to(dev)
    k = torch.rand(8, 32, 1, 128).to(torch.float16).to(dev)
    pos = torch.tensor([S // 2], device=dev)

    def kv_eager():
        cache[:, :, pos] = k  # as a user writes it: index_put_ with None for the leading dims

    def kv_fn(c, kk, p):
        c[:, :, p] = kk

    w.append(("kv-cache update, 1 token", kv_eager, kv_fn, (cache, k, pos)))

    grid = torch.rand(G, G, device=dev)
    edges = [torch.rand(G - 2, device=dev) for _ in range(4)]

    def halo_fn(g, n, s, we, e):
        g[0, 1:-1] = n
        g[-1, 1:-1] = s
        g[1:-1, 0] = we
        g[1:-1, -1] = e

    w.append(("halo exchange, 4 edges", lambda: halo_fn(grid, *edges), halo_fn, (grid, *edges)))

    R, C = 64, 16384
    x = torch.rand(R, C, device=dev)
    src = torch.rand(R, C, device=dev)

    def chain_fn(xx, ss):
        for i in range(R):
            j = (i * 7) % R
            xx[i:i + 1] = ss[j:j + 1]

    w.append(("64 slice_scatters, 4 MiB", lambda: chain_fn(x, src), chain_fn, (x, src)))

    N, B = 1 << 20, 1024
    h = torch.zeros(B, device=dev)
    idx = ((torch.arange(N, dtype=torch.int64) * 2654435761) % B).to(dev)
    v = torch.rand(N, device=dev)

    def hist_fn(hh, ii, vv):
        hh.index_put_((ii,), vv, accumulate=True)

    w.append(("index_put accumulate, 1M -> 1024", lambda: hist_fn(h, idx, v), hist_fn, (h, idx, v)))

    E = (16 if quick else 64) << 20
    a = torch.rand(E, device=dev)
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
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--ctfx", default=None, help="the ctfx benchmark binary (default: build/bench/runtime/"
                    "ctfx_runtime_bench on the CPU, build/bench/cuda/ctfx_cuda_bench on the GPU)")
    args = ap.parse_args()
    if args.ctfx is None:
        args.ctfx = os.path.join(root, "build", "bench", "runtime", "ctfx_runtime_bench") if args.device == "cpu" else \
            os.path.join(root, "build", "bench", "cuda", "ctfx_cuda_bench")
    if args.device == "cuda":
        global SYNC
        SYNC = torch.cuda.synchronize
        where = torch.cuda.get_device_name(0)
    else:
        torch.set_num_threads(1)  # ctfx's host backend here is sequential (CPP system)
        where = f"{torch.get_num_threads()} thread, CPU"
    ctfx = ctfx_rows(args.ctfx, args.quick, args.reps)
    print(f"torch {torch.__version__}, {where}")
    print()
    print("| workload | ctfx (us) | torch eager (us) | torch.compile (us) | eager / ctfx | compile / ctfx |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, eager, fn, tensors in workloads(args.quick, args.device):
        print(f"[{name}]...", file=sys.stderr)
        te = median_us(eager, args.reps)
        try:
            compiled = torch.compile(fn)
            tc = median_us(lambda: compiled(*tensors), args.reps)
        except Exception as e:  # noqa: BLE001 - report, do not hide
            print(f"torch.compile failed on {name}: {e}", file=sys.stderr)
            tc = float("nan")
        # on the GPU, ctfx's scatter-add row is its deterministic path (the atomics one is beside it)
        c = ctfx.get(name, ctfx.get(name + " (deterministic)", float("nan")))
        print(f"| {name} | {c:.1f} | {te:.1f} | {tc:.1f} | {te / c:.2f} | {tc / c:.2f} |")


if __name__ == "__main__":
    main()
