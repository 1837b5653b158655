"""bench/plot_series.py: one field of a -stn_output_series as a strip of frames, with gnuplot.

    python3 bench/plot_series.py [--keep DIR] DIR/PROGRAM.pvd FIELD OUT.png [MIN MAX]

For a series written where gnuplot is absent (the GPU machines): each .vts the .pvd lists (one
rank's, a 2D grid), its point data solution.FIELD drawn as a heat map titled with its time, side
by side, all on one colour range (MIN MAX, default the series' range). Reads PETSc's VTK files
(raw appended data, UInt64 headers) without any library. With --keep DIR (no gnuplot there) it
writes the frames' data and the gnuplot script into DIR instead: `cd DIR && gnuplot frames.gp`
draws OUT.png elsewhere, from files a tenth of the series' size.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def field(path, name):
    """The grid's size in x and y and the values of solution.NAME, x fastest."""
    data = open(path, "rb").read()
    start = data.find(b"<AppendedData")
    head = data[:start].decode()
    ext = [int(v) for v in re.search(r'WholeExtent="([^"]*)"', head).group(1).split()]
    nx, ny = ext[1] - ext[0] + 1, ext[3] - ext[2] + 1
    found = re.search(r'Name="solution\.%s"[^>]*offset="(\d+)"' % re.escape(name), head)
    if not found:
        sys.exit(f"{path}: no field solution.{name}")
    base = data.find(b"_", start) + 1 + int(found.group(1))
    size, = struct.unpack("<Q", data[base:base + 8])
    return nx, ny, struct.unpack("<%dd" % (size // 8), data[base + 8:base + 8 + size])


def main():
    args = sys.argv[1:]
    keep = None
    if args[:1] == ["--keep"] and len(args) > 1:
        keep = args[1]
        args = args[2:]
    if len(args) not in (3, 5):
        sys.exit(__doc__)
    pvd, name, png = args[:3]
    sets = [(float(e.get("timestep")), e.get("file")) for e in ET.parse(pvd).getroot().iter("DataSet")]
    tmp = keep or tempfile.mkdtemp()
    os.makedirs(tmp, exist_ok=True)
    frames, lo, hi = [], float("inf"), -float("inf")
    for k, (t, f) in enumerate(sets):
        nx, ny, v = field(os.path.join(os.path.dirname(pvd), f), name)
        lo, hi = min(lo, min(v)), max(hi, max(v))
        m = "%d.dat" % k if keep else os.path.join(tmp, "%d.dat" % k)
        with open(os.path.join(tmp, os.path.basename(m)), "w") as out:
            for j in range(ny):
                out.write(" ".join("%.3g" % v[j * nx + i] for i in range(nx)) + "\n")
        frames.append((t, m))
    if len(args) == 5:
        lo, hi = float(args[3]), float(args[4])
    g = [f"set terminal pngcairo size {300 * len(frames)},330 font ',11'", f"set output '{png}'",
         f"set multiplot layout 1,{len(frames)}", "unset key; unset xtics; unset ytics; set size ratio -1",
         "set palette defined (0 '#081d58', 0.3 '#41b6c4', 0.6 '#ffffcc', 1 '#e31a1c')",
         f"set cbrange [{lo}:{hi}]; unset colorbox; set lmargin 1; set rmargin 1; set tmargin 2; set bmargin 1"]
    for t, m in frames:
        g.append(f"set title '{name} at t = {t:g}'; plot '{m}' matrix with image")
    g.append("unset multiplot")
    if keep:
        with open(os.path.join(keep, "frames.gp"), "w") as out:
            out.write("\n".join(g) + "\n")
        return
    subprocess.run(["gnuplot"], input="\n".join(g), text=True, check=True)


if __name__ == "__main__":
    main()
