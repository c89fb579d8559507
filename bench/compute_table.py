"""The compute workloads' table: ctfx (compiled<G>, runtime_plan), the hand loops, memcpy, PyTorch
eager and torch.compile, measured in rounds that interleave them, so that every column of a row
comes from the same minutes of the machine (a VM's speed drifts by tens of percent between runs
minutes apart; two programs run at different times compare that drift, not the code).

    python3 bench/compute_table.py [--build build] [--rounds 3] [--reps 21] [--torch-reps 11] [--only LETTERS]

Each round runs ctfx_compute_bench (the default target: SSE2), ctfx_compute_bench_native
(-march=native) and ctfx_compute_bench_omp --omp (all threads) when they are built, then
bench/torch/compute.py. A cell is the median over rounds of the per-run medians; a ratio is the
median over rounds of that round's own ratio. Without torch, its columns say so.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROW = re.compile(r"^\| \(([a-l])\) ")


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def number(cell):
    return float(cell.split()[0].rstrip("x"))


def run(cmd):
    print("  $ " + " ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed with status {p.returncode}")
    return p.stdout


def ctfx_rows(text):
    """(letter) -> (name, compiled, runtime, hand, bound) from compute_bench's table."""
    rows = {}
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            c = cells(line)
            rows[m.group(1)] = (c[0], number(c[1]), number(c[2]), number(c[3]), number(c[4]))
    return rows


def torch_rows(text):
    """(letter, threads) -> (eager, compiled) from compute.py's table."""
    rows = {}
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            c = cells(line)
            rows[(m.group(1), int(c[1]))] = (number(c[2]), number(c[3]))
    return rows


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def us(x):
    return "—" if x is None else (f"{x:.1f} us" if x < 100 else f"{x:.0f} us")


def ratio(x):
    return "—" if x is None else f"{x:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--torch-reps", type=int, default=11)
    ap.add_argument("--only", default="", help="the workloads to run, by letter (e.g. dg); all by default")
    a = ap.parse_args()
    exe = os.path.join(a.build, "bench", "runtime")
    configs = [(k, os.path.join(exe, f), extra) for k, f, extra in
               [("sse2", "ctfx_compute_bench", []), ("native", "ctfx_compute_bench_native", []),
                ("omp", "ctfx_compute_bench_omp", ["--omp"])] if os.access(os.path.join(exe, f), os.X_OK)]
    if not configs or configs[0][0] != "sse2":
        raise SystemExit(f"no ctfx_compute_bench in {exe}: build it first (bash bench/run_host.sh builds it)")
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
        print("torch is not installed: its columns stay empty (pip install torch)", file=sys.stderr)
    ours = {k: [] for k, _, _ in configs}  # config -> per round: letter -> row
    theirs = []                            # per round: (letter, threads) -> (eager, compile)
    for r in range(a.rounds):
        print(f"round {r + 1} of {a.rounds}", file=sys.stderr, flush=True)
        for k, path, extra in configs:
            ours[k].append(ctfx_rows(run([path, "--reps", str(a.reps)] + extra + (["--only", a.only] if a.only else []))))
        theirs.append(torch_rows(run([sys.executable, os.path.join(HERE, "torch", "compute.py"),
                                      "--reps", str(a.torch_reps)] + (["--only", a.only] if a.only else []))) if have_torch else {})
    threads = max([t for rd in theirs for (_, t) in rd] or [1])

    def table(k, torch_threads, title):
        rounds = ours[k]
        print(f"\n{title}\n")
        print("| workload | compiled<G> | runtime_plan | hand loop -O3 | copy bound | compiled / hand | runtime / hand "
              "| torch eager | torch.compile | compiled / torch.compile |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for w in sorted(rounds[0]):
            got = [rd[w] for rd in rounds if w in rd]
            tor = [theirs[i].get((w, torch_threads)) if i < len(theirs) else None for i in range(len(rounds))]
            c_over_t = [rd[w][1] / t[1] if t and w in rd else None for rd, t in zip(rounds, tor)]
            print(f"| ({w}) {got[0][0][4:]} | {us(med(g[1] for g in got))} | {us(med(g[2] for g in got))} "
                  f"| {us(med(g[3] for g in got))} | {us(med(g[4] for g in got))} "
                  f"| {ratio(med(g[1] / g[3] for g in got))} | {ratio(med(g[2] / g[3] for g in got))} "
                  f"| {us(med(t[0] if t else None for t in tor))} | {us(med(t[1] if t else None for t in tor))} "
                  f"| {ratio(med(c_over_t))} |")

    print(f"{a.rounds} rounds; ctfx: medians of {a.reps} runs per round, torch: of {a.torch_reps}.")
    table("sse2", 1, "One thread, default target (SSE2); torch on one thread:")
    if "native" in ours:
        table("native", 1, "One thread, -march=native; torch on one thread:")
    if "omp" in ours:
        table("omp", threads, f"ctfx on backend::omp (all threads; the hand loop stays sequential); torch on {threads} threads:")


if __name__ == "__main__":
    main()
