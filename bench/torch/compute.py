"""PyTorch eager and torch.compile on bench/runtime/compute_bench's programs (same shapes, same
ops), on the CPU, with one thread and with all threads, or on the GPU (--device cuda, the
programs bench/cuda's ctfx_cuda_bench runs). Prints a markdown table (medians, us).

    python3 bench/torch/compute.py [--reps N] [--device cpu|cuda] [--only LETTERS]
"""
import argparse
import time

import torch

G = 1026
E = 16 << 20


def stencil(x):
    x[0, :] = x[G - 2, :]
    x[G - 1, :] = x[1, :]
    x[:, 0] = x[:, G - 2]
    x[:, G - 1] = x[:, 1]
    c = x[1:-1, 1:-1]
    nw = c + ((x[:-2, 1:-1] + x[2:, 1:-1]) + (x[1:-1, :-2] + x[1:-1, 2:]) - c * 4.0) * 0.2
    x[1:-1, 1:-1] = nw
    return x


def chain8(x, out):
    t = x * 1.001
    t = t + 0.5
    t = t * x
    t = t - 0.25
    t = torch.relu(t)
    t = t * 0.75
    t = t + x
    torch.div(t, 1.5, out=out)
    return out


R, W = 64, 4096


def ring(buf, row, pos):
    buf[pos] = row
    return buf.sum(0)


RB, RH, RS, RD = 8, 32, 1024, 128


def rope(cache, k, cs, sn, pos):
    k1, k2 = k[..., : RD // 2], k[..., RD // 2 :]
    cache[:, :, pos] = torch.cat([k1 * cs - k2 * sn, k2 * cs + k1 * sn], -1)
    return cache


SN, SD = 2048, 1024


def softmax(x, out):
    e = torch.exp(x - x.amax(1, keepdim=True))
    torch.div(e, e.sum(1, keepdim=True), out=out)
    return out


NN, ND = 2048, 1024


def rmsnorm(x, w, out):
    inv = torch.rsqrt((x * x).mean(1, keepdim=True) + 1e-6)
    torch.mul(x * inv, w, out=out)
    return out


MN, MD = 2048, 1024


def masked(x, m, v):
    x.masked_fill_(m > 0.5, v)
    return x


# The in-place updates (bench/runtime/inplace_workloads.hpp), as a PyTorch user writes them.
KS = 8192


def kv_cache(cache, k, pos):
    cache[:, :, pos] = k
    return cache


HG = 4096


def halo(g, n, s, we, e):
    g[0, 1:-1] = n
    g[-1, 1:-1] = s
    g[1:-1, 0] = we
    g[1:-1, -1] = e
    return g


CR, CC = 64, 16384


def scatter_chain(x, src):
    for i in range(CR):
        j = (i * 7) % CR
        x[i:i + 1] = src[j:j + 1]
    return x


AN, AB = 1 << 20, 1024


def scatter_add(h, i, v):
    h.index_put_((i,), v, accumulate=True)
    return h


CE = 64 << 20


def clone(x):
    return x.clone()


P = 1024


def sgd(ps, gs, ms):
    # torch.optim.SGD(momentum=0.9, weight_decay=1e-4, lr=0.01)'s step, written out (foreach form)
    for p, g, m in zip(ps, gs, ms):
        m.mul_(0.9).add_(g + p * 1e-4)
        p.sub_(m * 0.01)


def _median_us(f, reps, cuda=False):
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    f()
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        sync()
        ts.append((time.perf_counter() - t0) * 1e6)
    ts.sort()
    return ts[len(ts) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--only", default="", help="the workloads to run, by letter (e.g. dg); all by default")
    a = ap.parse_args()
    cuda = a.device == "cuda"
    dev = torch.device(a.device)

    def median_us(f, reps):
        return _median_us(f, reps, cuda)

    def want(letter):
        return not a.only or letter in a.only

    print("| workload | threads | eager | torch.compile |")
    print("|---|---:|---:|---:|")
    for threads in ("GPU",) if cuda else (1, torch.get_num_threads()):
        if not cuda:
            torch.set_num_threads(threads)
        if want("a"):
            x = (torch.arange(G * G, dtype=torch.float32) * 37 % 101 * 0.01).reshape(G, G).to(dev)
            cs = torch.compile(stencil)
            e = median_us(lambda: stencil(x), a.reps)
            c = median_us(lambda: cs(x), a.reps)
            print(f"| (a) 5-point stencil 1026^2 f32 | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
        if want("e"):
            x = (torch.arange(E, dtype=torch.float32) * 37 % 101 * 0.01 - 0.3).to(dev)
            out = torch.empty_like(x)
            cc = torch.compile(chain8)
            e = median_us(lambda: chain8(x, out), a.reps)
            c = median_us(lambda: cc(x, out), a.reps)
            print(f"| (e) 8 elementwise ops, 16 M f32 | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
        if want("b"):
            buf = (torch.arange(R * W, dtype=torch.float32).reshape(R, W) * 37 % 101 * 0.01).to(dev)
            row = (torch.arange(W, dtype=torch.float32) % 7).to(dev)
            pos = torch.tensor([17], device=dev)
            cr = torch.compile(ring)
            e = median_us(lambda: ring(buf, row, pos), a.reps)
            c = median_us(lambda: cr(buf, row, pos), a.reps)
            print(f"| (b) ring buffer [64, 4096] f32, window sum | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
        if want("c"):
            cache = torch.zeros(RB, RH, RS, RD, device=dev)
            k = (torch.arange(RB * RH * RD, dtype=torch.float32).reshape(RB, RH, 1, RD) * 37 % 101 * 0.01).to(dev)
            cs, sn = torch.cos(torch.arange(RD // 2) * 0.01).to(dev), torch.sin(torch.arange(RD // 2) * 0.01).to(dev)
            pos = torch.tensor([RS // 2], device=dev)
            cp = torch.compile(rope)
            e = median_us(lambda: rope(cache, k, cs, sn, pos), a.reps)
            c = median_us(lambda: cp(cache, k, cs, sn, pos), a.reps)
            print(f"| (c) RoPE into a KV cache | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
        if want("d"):
            x = (torch.arange(SN * SD, dtype=torch.float32).reshape(SN, SD) * 37 % 101 * 0.05).to(dev)
            out = torch.empty_like(x)
            csm = torch.compile(softmax)
            e = median_us(lambda: softmax(x, out), a.reps)
            c = median_us(lambda: csm(x, out), a.reps)
            print(f"| (d) softmax [2048, 1024] f32 | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
        if want("f"):
            x = ((torch.arange(NN * ND, dtype=torch.float32).reshape(NN, ND) * 37 % 101) * 0.02 - 1.0).to(dev)
            w = (1.0 + (torch.arange(ND, dtype=torch.float32) % 5) * 0.1).to(dev)
            out = torch.empty_like(x)
            crn = torch.compile(rmsnorm)
            e = median_us(lambda: rmsnorm(x, w, out), a.reps)
            c = median_us(lambda: crn(x, w, out), a.reps)
            print(f"| (f) RMSNorm [2048, 1024] f32 | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
        if want("g"):
            x = (torch.arange(MN * MD, dtype=torch.float32).reshape(MN, MD) * 37 % 101 * 0.01).to(dev)
            m = torch.rand(MN, MD, generator=torch.Generator().manual_seed(1)).to(dev)
            v = torch.tensor(-1e4, device=dev)
            cm = torch.compile(masked)
            e = median_us(lambda: masked(x, m, v), a.reps)
            c = median_us(lambda: cm(x, m, v), a.reps)
            print(f"| (g) masked fill [2048, 1024] f32 | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
        if want("h"):
            cache = (torch.arange(8 * 32 * KS * 128) % 101 * 0.01).to(torch.float16).reshape(8, 32, KS, 128).to(dev)
            k = (torch.arange(8 * 32 * 128) % 97 * 0.01).to(torch.float16).reshape(8, 32, 1, 128).to(dev)
            pos = torch.tensor([KS // 2], device=dev)
            ck = torch.compile(kv_cache)
            e = median_us(lambda: kv_cache(cache, k, pos), a.reps)
            c = median_us(lambda: ck(cache, k, pos), a.reps)
            print(f"| (h) kv-cache update, 1 f16 token | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
            del cache
        if want("i"):
            grid = (torch.arange(HG * HG, dtype=torch.float32).reshape(HG, HG) * 37 % 101 * 0.01).to(dev)
            edges = [(torch.arange(HG - 2, dtype=torch.float32) % 7).to(dev) for _ in range(4)]
            ch = torch.compile(halo)
            e = median_us(lambda: halo(grid, *edges), a.reps)
            c = median_us(lambda: ch(grid, *edges), a.reps)
            print(f"| (i) halo exchange, 4 edges of 4096^2 f32 | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
        if want("j"):
            x = (torch.arange(CR * CC, dtype=torch.float32).reshape(CR, CC) % 13).to(dev)
            src = (torch.arange(CR * CC, dtype=torch.float32).reshape(CR, CC) * 37 % 101 * 0.01).to(dev)
            cs = torch.compile(scatter_chain)
            e = median_us(lambda: scatter_chain(x, src), a.reps)
            c = median_us(lambda: cs(x, src), a.reps)
            print(f"| (j) 64 slice_scatters, 4 MiB | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
        if want("k"):
            h = torch.zeros(AB, device=dev)
            idx = ((torch.arange(AN, dtype=torch.int64) * 2654435761) % AB).to(dev)
            v = (torch.arange(AN, dtype=torch.float32) % 7 * 0.25).to(dev)
            ca = torch.compile(scatter_add)
            e = median_us(lambda: scatter_add(h, idx, v), a.reps)
            c = median_us(lambda: ca(h, idx, v), a.reps)
            print(f"| (k) index_put accumulate, 1M -> 1024 | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
        if want("l"):
            x = (torch.arange(CE, dtype=torch.float32) % 1021).to(dev)
            cc = torch.compile(clone)
            e = median_us(lambda: clone(x), a.reps)
            c = median_us(lambda: cc(x), a.reps)
            print(f"| (l) clone of 256 MiB f32 | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)
        if want("m"):
            t = [((torch.arange(P * P, dtype=torch.float32) * 37 + k) % 101 * 0.001).reshape(P, P).to(dev) for k in range(9)]
            ps, gs, ms = t[0::3], t[1::3], t[2::3]
            csg = torch.compile(sgd)
            e = median_us(lambda: sgd(ps, gs, ms), a.reps)
            c = median_us(lambda: csg(ps, gs, ms), a.reps)
            print(f"| (m) SGD with momentum, 3 x [1024, 1024] f32 | {threads} | {e:.1f} us | {c:.1f} us |", flush=True)


if __name__ == "__main__":
    main()
