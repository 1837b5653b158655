"""bench/plot_vec_gpu.py: bench/vec_gpu.sh's results as one PNG, effective TB/s against n for
each vector operation: ours (VECSTNCUDA through PETSc's API), PETSc's VECCUDA and cuBLAS
(where it has the operation), on a log scale, with the triad at each n (dashed) and at the largest n (dotted,
the bandwidth ceiling).

    python3 bench/plot_vec_gpu.py OUTDIR/vec_gpu.csv OUT.png

Reads the CSV that bench/vec_gpu.c writes (n, op, impl, us_median, ..., tbs, ...); needs
matplotlib (the device image has it).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

OPS = ["Dot", "MDot", "Norm2", "Norm1", "NormInf", "DotNorm2", "AXPY", "AYPX", "MAXPY",
       "WAXPY", "AXPBYPCZ", "Scale", "Set", "Copy", "PointwiseMult"]
STYLE = {  # impl: label, colour, marker, line style
    "ours": ("ours (VECSTNCUDA)", "tab:red", "o", "-"),
    "petsc": ("PETSc VECCUDA", "tab:blue", "s", "-"),
    "cublas": ("cuBLAS", "tab:green", "^", "-"),
}


def load(path):
    """{(op, impl): {n: TB/s}} and {n: triad TB/s}, and cuBLAS's routine per op."""
    data, triad, blas = {}, {}, {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if not row["tbs"]:
                continue  # a failed call
            n, v = int(row["n"]), float(row["tbs"])
            if row["op"] == "triad":
                triad[n] = v
            else:
                data.setdefault((row["op"], row["impl"]), {})[n] = v
                if row["impl"] == "cublas" and row.get("blas_routine"):
                    blas[row["op"]] = row["blas_routine"]
    return data, triad, blas


def fmt_n(n):
    e = len(str(n)) - 1
    return "1e%d" % e if n == 10 ** e else str(n)


def main(csv_path, png):
    data, triad, blas = load(csv_path)
    ops = [op for op in OPS if any((op, impl) in data for impl in STYLE)]
    cols = 5
    rows = (len(ops) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.0 * cols, 3.3 * rows), squeeze=False)
    ns = sorted(triad)
    peak = triad[max(ns)] if ns else None
    for i, op in enumerate(ops):
        ax = axes[i // cols][i % cols]
        for impl, (label, colour, marker, ls) in STYLE.items():
            pts = data.get((op, impl))
            if not pts:
                continue
            xs = sorted(pts)
            if impl == "cublas" and op in blas:
                label = "cuBLAS " + blas[op]
            ax.plot(xs, [pts[x] for x in xs], ls, color=colour, marker=marker, ms=4, label=label)
        if ns:
            ax.plot(ns, [triad[x] for x in ns], "--", color="grey", lw=1, label="triad at n")
            ax.axhline(peak, color="black", ls=":", lw=1, label="triad at %s: %.2f TB/s" % (fmt_n(max(ns)), peak))
        ax.set_xscale("log")
        ax.set_xticks(ns, [fmt_n(x) for x in ns])
        ax.minorticks_off()
        ax.set_yscale("log")  # 1e5 is launch-bound, 1e8 bandwidth-bound: decades apart
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.set_title(op, fontsize=10)
        if i % cols == 0:
            ax.set_ylabel("effective TB/s (log)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, loc="upper left")
    for j in range(len(ops), rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle("GPU vector operations: bytes of the ideal algorithm per time (bench/vec_gpu.sh)", fontsize=11)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python3 bench/plot_vec_gpu.py VEC_GPU.csv OUT.png")
    main(sys.argv[1], sys.argv[2])
