#!/usr/bin/env python3
"""tests/solve/checkerboard.py: the reference for tests/solve/checkerboard.stn.

  checkerboard.py NX NY NB KAPPA SOLUTION.bin

Builds the same discrete problem as the .stn independently of stencilc: the
coefficient's blocks are worked out with exact fractions and integer floor and
parity (Python's % on integers), not with floating-point floor and mod; the
5-point system -div(k grad u) = 1, u = 0 on the boundary, is solved by
conjugate gradients (the matrix is symmetric positive definite) to 1e-14. It
then reads the program's solution (-snes_view_solution binary:FILE, a PETSc
binary Vec in natural ordering) and prints ||u - u_ref|| / ||u_ref||; exit
status 1 when that exceeds 1e-8 or when a face centre lies within 1e-6 of a
block edge (where floating point could fall on either side).
"""
import math
import struct
import sys
from fractions import Fraction

LO_X, HI_X = Fraction(-13, 10), Fraction(7, 10)
LO_Y, HI_Y = Fraction(-7, 10), Fraction(13, 10)


def read_vec(path):
    with open(path, 'rb') as f:
        data = f.read()
    classid, n = struct.unpack('>ii', data[:8])
    if classid != 1211214:
        sys.exit(f'{path}: not a PETSc binary Vec (class id {classid})')
    return list(struct.unpack(f'>{n}d', data[8:8 + 8 * n]))


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    nx, ny, nb = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    kappa = float(sys.argv[4])
    hx, hy = (HI_X - LO_X) / (nx - 1), (HI_Y - LO_Y) / (ny - 1)

    def floor_nb(t):  # floor(t * nb), exactly; refuses points on a block edge
        s = t * nb
        if abs(s - round(s)) < Fraction(1, 10**6):
            sys.exit(f'checkerboard.py: a face centre is on a block edge ({float(t)}): choose another grid')
        return math.floor(s)

    def k(x, y):
        return kappa if (floor_nb(x) + floor_nb(y)) % 2 == 1 else 1.0

    # Interior unknowns (i, j), 1 <= i <= nx-2, 1 <= j <= ny-2; boundary values are 0.
    mx, my = nx - 2, ny - 2
    idx = lambda i, j: (j - 1) * mx + (i - 1)
    rows = []  # per unknown: [(column, value)]
    for j in range(1, ny - 1):
        for i in range(1, nx - 1):
            x, y = LO_X + i * hx, LO_Y + j * hy
            ke, kw = k(x + hx / 2, y), k(x - hx / 2, y)
            kn, ks = k(x, y + hy / 2), k(x, y - hy / 2)
            fx, fy = 1.0 / float(hx) ** 2, 1.0 / float(hy) ** 2
            row = [(idx(i, j), (ke + kw) * fx + (kn + ks) * fy)]
            for (ii, jj, c) in ((i + 1, j, -ke * fx), (i - 1, j, -kw * fx), (i, j + 1, -kn * fy), (i, j - 1, -ks * fy)):
                if 1 <= ii <= nx - 2 and 1 <= jj <= ny - 2:
                    row.append((idx(ii, jj), c))
            rows.append(row)
    n = mx * my
    mult = lambda v: [sum(c * v[col] for col, c in row) for row in rows]
    b = [1.0] * n
    u, r = [0.0] * n, b[:]
    p, rr = r[:], sum(t * t for t in r)
    for _ in range(10 * n):
        if math.sqrt(rr) <= 1e-14 * math.sqrt(n):
            break
        ap = mult(p)
        alpha = rr / sum(s * t for s, t in zip(p, ap))
        u = [s + alpha * t for s, t in zip(u, p)]
        r = [s - alpha * t for s, t in zip(r, ap)]
        rr_new = sum(t * t for t in r)
        p = [s + rr_new / rr * t for s, t in zip(r, p)]
        rr = rr_new

    ref = [0.0] * (nx * ny)
    for j in range(1, ny - 1):
        for i in range(1, nx - 1):
            ref[j * nx + i] = u[idx(i, j)]
    got = read_vec(sys.argv[5])
    if len(got) != len(ref):
        sys.exit(f'checkerboard.py: the solution has {len(got)} values, the grid {len(ref)}')
    err = math.sqrt(sum((s - t) ** 2 for s, t in zip(got, ref))) / math.sqrt(sum(t * t for t in ref))
    odd = sum(1 for j in range(ny - 1) for i in range(nx - 1)
              if k(LO_X + (i + Fraction(1, 2)) * hx, LO_Y + (j + Fraction(1, 2)) * hy) != 1.0)
    print(f'{nx}x{ny}, nb {nb}, kappa {kappa:g}: {odd} of {(nx - 1) * (ny - 1)} cells on odd blocks, '
          f'||u - u_ref|| / ||u_ref|| = {err:.2e}')
    return 0 if err <= 1e-8 else 1


if __name__ == '__main__':
    sys.exit(main())
