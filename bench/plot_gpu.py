"""bench/plot_gpu.py: the GPU benchmark tables as one PNG for docs/performance.md.

    python3 bench/plot_gpu.py SPMV.md CAVITY.md SFI.md OUT.png

Reads the markdown tables that bench/spmv_gpu.sh, bench/cavity_gpu.sh and
bench/sfi_gpu.sh print; needs matplotlib (the device image has it).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


def rows(path):
    """The data rows of the first markdown table in path, as lists of cells."""
    out = []
    for line in open(path):
        if line.startswith("|") and not line.startswith("|---") and "---" not in line:
            cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
            out.append(cells)
    return out[1:]  # without the header


def main(spmv, cavity, sfi, png):
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(17, 5))
    r = rows(spmv)
    names = [x[0].replace(", ", "\n") for x in r]
    sg = [float(x[4]) for x in r]
    cu = [float(x[8]) for x in r]
    xs = range(len(r))
    a.bar([i - 0.2 for i in xs], sg, 0.4, label="SG-DIA (stencilc)")
    a.bar([i + 0.2 for i in xs], cu, 0.4, label="cuSPARSE CSR")
    for i, x in enumerate(r):
        a.text(i, max(sg[i], cu[i]) * 1.02, x[-1], ha="center", fontsize=8)
    a.set_xticks(list(xs), names, fontsize=7, rotation=25)
    a.set_ylabel("achieved bandwidth, GB/s (byte model)")
    a.set_title("SpMV on the H200 (triad: %s)" % "4382 GB/s")
    a.legend(fontsize=8)
    for ax, path, title in ((b, cavity, "cavity 256^2, GMRES(30): SNESSolve"), (c, sfi, "SFI 128^3, GMRES(30)+Jacobi: SNESSolve")):
        labels, secs = [], []
        for x in rows(path):
            if "^2" in x[0] and not x[0].startswith("256^2"):
                continue  # the cavity panel shows the 256^2 rows
            try:
                s = float(x[3]) if "^2" in x[0] else float(x[1])
            except ValueError:
                continue
            labels.append(" ".join(x[1:3]) if "^2" in x[0] else x[0])
            secs.append(s)
        ax.barh(range(len(secs)), secs)
        ax.set_yticks(range(len(secs)), labels, fontsize=8)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        for i, v in enumerate(secs):
            ax.text(v, i, " %.2f s" % v, va="center", fontsize=8)
        ax.set_xlabel("seconds (log scale)")
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main(*sys.argv[1:5])
