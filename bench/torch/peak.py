#!/usr/bin/env python3
"""PyTorch's peak memory for the example graphs of bench/memory, next to ctfx's planned arena.

Each program is the one bench/memory/peak_bench.cpp builds, written as a PyTorch user writes it.
The peak is measured from the CPU allocator's own events (torch.profiler with profile_memory): the
running sum of the bytes allocated and freed during one call (after a warm-up call; inputs are
allocated before and not counted, outputs are counted while the call runs) — the same accounting
as ctfx's figures (intermediate and output buffers). Runs eager and torch.compile (Inductor, CPU).
Not part of CI. Needs `pip install torch numpy`.

  python3 bench/torch/peak.py [--ctfx build/bench/memory/ctfx_peak_bench]
"""
import argparse
import subprocess

import torch
from torch.profiler import ProfilerActivity, profile


def peak_bytes(f, args):
    f(*args)  # warm-up (compilation for torch.compile)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        out = f(*args)
    del out
    ev = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    live = peak = 0
    for e in sorted(ev, key=lambda e: e.start_ns()):
        live += e.nbytes()
        peak = max(peak, live)
    return peak


def programs():
    p = []

    def kv(cache, k, pos):
        cache[:, :, pos] = k

    p.append(("kv-cache update", kv, lambda: (torch.zeros(8, 32, 4096, 128, dtype=torch.float16),
                                              torch.rand(8, 32, 1, 128).half(), torch.tensor([7]))))
    N = 258

    def halo(grid, e):
        grid[0, 1:N - 1] = e
        grid[N - 1, 1:N - 1] = e
        up, down = grid[0:N - 2, 1:N - 1], grid[2:N, 1:N - 1]
        left, right = grid[1:N - 1, 0:N - 2], grid[1:N - 1, 2:N]
        return ((up + down) + (left + right)) * 0.25

    p.append(("halo + Jacobi step (258^2)", halo, lambda: (torch.rand(N, N), torch.rand(N - 2))))

    def hist(counts, bin, w):
        counts.index_put_((bin,), w, accumulate=True)
        return w.sum(0)

    p.append(("scatter-add histogram", hist, lambda: (torch.zeros(64), torch.randint(0, 64, (100000,)),
                                                      torch.rand(100000))))

    def mlp(x, bias):
        h = skip = x
        for i in range(16):
            h = torch.relu(h * 0.5 + bias)
            if i % 4 == 3:
                h = h + skip
                skip = h
        return h.sum(1)

    p.append(("MLP-like chain, 16 layers of [256, 1024]", mlp, lambda: (torch.rand(256, 1024), torch.rand(1024))))

    def diamond(x):
        a = torch.exp(x)
        c = torch.cat([a, x * 2.0], 1)
        d = c.sum(1, keepdim=True)
        e = torch.sin(c) + d
        return e.amax(0), a.sum(0)

    p.append(("diamond of reductions and cats", diamond, lambda: (torch.rand(128, 512),)))
    return p


def ctfx_rows(exe):
    rows = {}
    if not exe:
        return rows
    for line in subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[1].isdigit():
            rows[cells[0]] = (int(cells[4]), int(cells[5]))  # ctfx arena, lower bound
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctfx", default="build/bench/memory/ctfx_peak_bench")
    a = ap.parse_args()
    torch.set_num_threads(1)
    ref = ctfx_rows(a.ctfx)
    print(f"torch {torch.__version__}, CPU; bytes")
    print()
    print("| graph | ctfx arena | lower bound | torch eager peak | torch.compile peak | eager / ctfx | compile / ctfx |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, f, make in programs():
        eager = peak_bytes(f, make())
        comp = peak_bytes(torch.compile(f), make())
        c, lb = ref.get(name, (None, None))
        ratio = lambda t: "-" if not c else f"{t / c:.2f}"
        print(f"| {name} | {c if c is not None else '-'} | {lb if lb is not None else '-'} | {eager} | {comp} | "
              f"{ratio(eager)} | {ratio(comp)} |", flush=True)


if __name__ == "__main__":
    main()
