"""bench/plot_multigpu.py: bench/multigpu.sh's tables as one PNG for docs/performance.md.

    python3 bench/plot_multigpu.py CAVITY.md SFI.md OUT.png

Reads the first table that bench/multigpu.sh prints (PROBLEMS=cavity, then PROBLEMS=sfi3d) and
draws, per problem, the efficiency of each kind of run against the number of GPUs, with the
issue's goal (85% weak-scaling efficiency on 4 GPUs); needs matplotlib (the device image has it).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    """The data rows of the first markdown table in path, as lists of cells."""
    out = []
    for line in open(path):
        if not line.startswith("|"):
            if out:
                break
            continue
        if "---" not in line:
            out.append([c.strip() for c in line.strip().strip("|").split("|")])
    return out[1:]  # without the header


def main(cavity, sfi, png):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    for ax, path, title in ((axes[0], cavity, "cavity (1025^2 per GPU)"), (axes[1], sfi, "SFI (257^3 per GPU)")):
        series = {}
        for r in rows(path):
            kind, gpus, eff = r[1], int(r[2]), float(r[7].rstrip("%"))
            series.setdefault(kind, []).append((gpus, eff))
        for kind, pts in series.items():
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=kind)
        ax.axhline(85, color="grey", linestyle="--", linewidth=1)
        ax.text(2.6, 87.5, "goal: 85% weak on 4 GPUs", color="grey", fontsize=8)
        ax.set_xticks([1, 2, 4])
        ax.set_xlabel("GPUs (H200, one rank each)")
        ax.set_title(title)
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("efficiency, % (weak t1/tN, strong t1/(N tN))")
    axes[1].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python3 bench/plot_multigpu.py CAVITY.md SFI.md OUT.png")
    main(*sys.argv[1:])
