#!/usr/bin/env python3
"""tests/solve/vtkseries.py: checks a VTK series written by -stn_output_series.

    vtkseries.py DIR/PROGRAM.pvd POINTS TIMES [FINAL.bin]

The .pvd must be a VTK Collection listing, with strictly increasing times,
one file per time of TIMES (space-separated, matched to 1e-12 relative);
each listed .vts must exist beside it and parse: its XML header (the part
before PETSc's raw appended data) with a WholeExtent of POINTS points,
covered once by its Pieces (one per rank), and every DataArray's appended
block holding exactly its piece's points x components doubles, all finite,
the file ending as a VTK file ends. With
FINAL.bin (a PETSc binary vector, -ts_view_solution binary:FILE, natural
ordering, the fields interleaved), the fields of the last .vts must equal it
exactly: the series ends with the final state.

Prints one line saying what it found; exit status 0 when all holds, 1 with
the reason otherwise.
"""
import math
import os
import struct
import sys
import xml.etree.ElementTree as ET


def fail(why):
    print(why)
    sys.exit(1)


def read_vts(path, points):
    """The .vts's point data: {name: list of doubles}, after checking its layout."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    cut = data.find(b"<AppendedData")
    if cut < 0:
        fail(f"{path}: no <AppendedData>")
    if not data.endswith(b"</AppendedData>\n</VTKFile>\n"):
        fail(f"{path}: does not end as a VTK file ends (cut short?)")
    try:
        head = ET.fromstring(data[:cut] + b"</VTKFile>")
    except ET.ParseError as e:
        fail(f"{path}: its XML header does not parse: {e}")
    if head.get("type") != "StructuredGrid":
        fail(f"{path}: not a StructuredGrid")
    whole = [int(v) for v in head.find("./StructuredGrid").get("WholeExtent", "").split()]
    shape = [hi - lo + 1 for lo, hi in zip(whole[0::2], whole[1::2])]
    if len(shape) != 3 or shape[0] * shape[1] * shape[2] != points:
        fail(f"{path}: WholeExtent {whole} does not hold {points} points")
    start = data.index(b"_", cut) + 1  # the raw data follows the underscore
    fields, covered = {}, 0
    for piece in head.iter("Piece"):  # one per rank, each its block of the grid
        ext = [int(v) for v in piece.get("Extent", "").split()]
        box = [range(lo, hi + 1) for lo, hi in zip(ext[0::2], ext[1::2])]
        count = len(box[0]) * len(box[1]) * len(box[2])
        covered += count
        for arr in piece.iter("DataArray"):
            comps = int(arr.get("NumberOfComponents", "1"))
            off = start + int(arr.get("offset"))
            (nbytes,) = struct.unpack_from("<i", data, off)
            if nbytes != count * comps * 8:
                fail(f"{path}: {arr.get('Name')} of the piece {ext} holds {nbytes} bytes, not {count * comps * 8}")
            vals = struct.unpack_from(f"<{count * comps}d", data, off + 4)
            if not all(math.isfinite(v) for v in vals):
                fail(f"{path}: {arr.get('Name')} has values that are not finite")
            if arr.get("Name") == "Position":
                continue
            whole_field = fields.setdefault(arr.get("Name"), [None] * points)
            at = 0  # the piece's points, x fastest, into the whole grid's natural order
            for k in box[2]:
                for j in box[1]:
                    for i in box[0]:
                        whole_field[(k * shape[1] + j) * shape[0] + i] = vals[at]
                        at += comps
    if covered != points or any(None in f for f in fields.values()):
        fail(f"{path}: the pieces hold {covered} points, not the {points} of the grid once each")
    if not fields:
        fail(f"{path}: no point data")
    return fields


def main():
    if len(sys.argv) not in (4, 5):
        fail(__doc__.strip().splitlines()[2].strip())
    pvd, points, want = sys.argv[1], int(sys.argv[2]), [float(t) for t in sys.argv[3].split()]
    try:
        root = ET.parse(pvd).getroot()
    except (OSError, ET.ParseError) as e:
        fail(f"{pvd}: {e}")
    if root.get("type") != "Collection":
        fail(f"{pvd}: not a VTK Collection")
    sets = root.findall("./Collection/DataSet")
    times = [float(d.get("timestep")) for d in sets]
    if any(b <= a for a, b in zip(times, times[1:])):
        fail(f"{pvd}: times not increasing: {times}")
    if len(times) != len(want) or any(abs(a - b) > 1e-12 * max(1.0, abs(b)) for a, b in zip(times, want)):
        fail(f"{pvd}: times {times}, expected {want}")
    last = None
    for d in sets:
        last = read_vts(os.path.join(os.path.dirname(pvd), d.get("file")), points)
    if len(sys.argv) == 5:
        with open(sys.argv[4], "rb") as f:
            classid, n = struct.unpack(">ii", f.read(8))
            x = struct.unpack(f">{n}d", f.read(8 * n))
        dof = len(last)
        if classid != 1211214 or n != points * dof:
            fail(f"{sys.argv[4]}: not a vector of {points} x {dof} values")
        order = list(last)  # the .vts lists the fields in their order
        for c, name in enumerate(order):
            if any(a != b for a, b in zip(last[name], x[c::dof])):
                fail(f"{pvd}: the last state's {name} differs from {sys.argv[4]}")
    print(f"{len(sets)} files at t = {' '.join(f'{t:g}' for t in times)}, {points} points each"
          + (", the last equal to the final state" if len(sys.argv) == 5 else ""))


if __name__ == "__main__":
    main()
