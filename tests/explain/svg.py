#!/usr/bin/env python3
"""tests/explain/svg.py FILE.svg: checks the picture of `stencilc --explain-svg` for
examples/bratu2d.stn (its own 4 x 4 grid, 1 dof, 5-point star): the file parses as XML, and the
nonzero squares of the sparsity pattern (<rect class="nz">) and of the SG-DIA columns
(<rect class="sg">) are exactly the entries worked out here from the stencil, one colour per
block diagonal. Exit status 0 when it is so; otherwise a message and 1."""
import sys
import xml.etree.ElementTree as ET

NX = NY = 4
STAR = [(0, -1), (-1, 0), (0, 0), (1, 0), (0, 1)]  # the block diagonals, in storage order

def expected():
    """(row, column, block diagonal) of every entry: bratu2d's interior rows read the 5-point star,
    its boundary rows only the point itself (u = 0 there, scaled)."""
    out = set()
    for j in range(NY):
        for i in range(NX):
            p = i + NX * j
            inside = 0 < i < NX - 1 and 0 < j < NY - 1
            for s, (dx, dy) in enumerate(STAR):
                if inside or (dx, dy) == (0, 0):
                    out.add((p, (i + dx) + NX * (j + dy), s))
    return out

def cells(root, cls):
    """(row, column, fill) of each <rect class=cls>, from its place in its panel."""
    ns = "{http://www.w3.org/2000/svg}"
    rects = [r for r in root.iter(ns + "rect") if r.get("class") == cls]
    if not rects:
        return []
    xs = [float(r.get("x")) for r in rects]
    ys = [float(r.get("y")) for r in rects]
    w, h = float(rects[0].get("width")), float(rects[0].get("height"))
    x0, y0 = min(xs), min(ys)  # row 0 and column 0 (point 0 is a boundary point) are both used
    return [(round((y - y0) / h), round((x - x0) / w), r.get("fill")) for r, x, y in zip(rects, xs, ys)]

def main():
    root = ET.parse(sys.argv[1]).getroot()  # raises on malformed XML
    want = expected()
    problems = []
    nz = cells(root, "nz")
    got = {(r, c) for r, c, _ in nz}
    if len(nz) != len(want) or got != {(r, c) for r, c, _ in want}:
        problems.append("sparsity pattern: %d squares, expected %d; missing %s, extra %s" % (
            len(nz), len(want), sorted({(r, c) for r, c, _ in want} - got)[:5],
            sorted(got - {(r, c) for r, c, _ in want})[:5]))
    # One colour per block diagonal, different diagonals different colours.
    colour = {}
    block = {(r, c): s for r, c, s in want}
    for r, c, fill in nz:
        colour.setdefault(block.get((r, c)), set()).add(fill)
    if any(len(f) != 1 for f in colour.values()) or len({min(f) for f in colour.values()}) != len(colour):
        problems.append("colours do not follow the block diagonals: %s" % colour)
    # SG-DIA: row p, column s (1 dof): the same entries in their block columns.
    sg = cells(root, "sg")
    got_sg = {(r, c) for r, c, _ in sg}
    # The leftmost sg square may not be column 0 of the panel: shift by the smallest s used.
    smin = min(s for _, _, s in want)
    want_sg = {(r, s - smin) for r, _, s in want}
    if len(sg) != len(want) or got_sg != want_sg:
        problems.append("SG-DIA columns: %d squares, expected %d" % (len(sg), len(want)))
    for p in problems:
        print("svg.py: " + p)
    return 1 if problems else 0

if __name__ == "__main__":
    sys.exit(main())
