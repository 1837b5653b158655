#!/usr/bin/env python3
"""bench/probes/mg_boundary_restriction.py: what multigrid's restriction does to a program's
boundary rows. The restriction P^T (PCMG's, and the runtime's stnmg_cuda.h) sums a coarse
boundary point's fine residuals with weights that add up to 2 along a 2-D grid's edge and mixes
the interior rows next to it in. A boundary row that is O(1) for a smooth error (a Dirichlet
row, or the driven cavity's wall vorticity, omega + du/dy) then gets twice its correction from
the coarse grid, and a V-cycle compounds that level by level.

From the program's first Jacobian on each grid of a hierarchy (dumped by its CPU build with
-ksp_view_mat), on the CPU, from the repository root:
  - the coarse-grid correction P A_c^-1 P^T A_f applied to a smooth error of one field, with an
    exact coarse solve: the factor it scales the error by (1 is right), for an error that is
    zero on the boundary and for a constant one;
  - the V-cycle (three Chebyshev steps around Jacobi, bounds 0.1 and 1.1 times the largest
    eigenvalue, an LU coarsest grid) as a stationary iteration, its average reduction per
    cycle, with P^T and with two restrictions that keep a boundary point's residual apart (from
    its fine points on the same edges only; an interior point's as P^T): "averaged", their
    average (weights adding to 1), right for a row that is O(1) on a smooth error; "by row",
    that average only where the coarse row's entries do not sum to about 0, P^T's weights along
    the edge where they do (a difference such as a Neumann row, O(h) on a smooth error, which
    the average would correct too much).

Needs numpy and scipy (pip install numpy scipy). Two-dimensional programs, vertex grids of
2^k + 1 points.

  python3 bench/probes/mg_boundary_restriction.py            # PROGRAM=cavity GRID=129 LEVELS=5
"""
import os, subprocess, sys
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla

PROGRAM = os.environ.get("PROGRAM", "cavity")
GRID = int(os.environ.get("GRID", "129"))
LEVELS = int(os.environ.get("LEVELS", "5"))
B = "build/probes/mg-boundary-restriction"


def read_aij(path):
    """A PETSc binary AIJ matrix (big-endian: class id, rows, columns, nonzeros, row lengths,
    column indices, values)."""
    a = open(path, "rb").read()
    _, m, n, nz = np.frombuffer(a, ">i4", 4, 0)
    lengths = np.frombuffer(a, ">i4", m, 16)
    cols = np.frombuffer(a, ">i4", nz, 16 + 4 * m)
    vals = np.frombuffer(a, ">f8", nz, 16 + 4 * m + 4 * nz)
    return sp.csr_matrix((vals.astype(float), cols.astype(int), np.concatenate([[0], np.cumsum(lengths)])), shape=(m, n))


def jacobian(n):
    """The program's first Jacobian on an n x n grid (its CPU build, AIJ)."""
    path = f"{B}/{PROGRAM}.J{n}.bin"
    if not os.path.exists(path):
        subprocess.run([f"{B}/{PROGRAM}", "-stn_device", "cpu", "-da_grid_x", str(n), "-da_grid_y", str(n), "-stn_mat_type", "aij",
                        "-snes_max_it", "1", "-ksp_max_it", "1", "-pc_type", "none", "-ksp_view_mat", f"binary:{path}"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return read_aij(path)


def interpolation(nc, dof):
    """Bilinear interpolation from nc x nc points to 2 nc - 1, dof values per point (PETSc's
    DMCreateInterpolation for these grids)."""
    p = sp.lil_matrix((2 * nc - 1, nc))
    for i in range(nc):
        p[2 * i, i] = 1
    for i in range(nc - 1):
        p[2 * i + 1, i] = p[2 * i + 1, i + 1] = 0.5
    p = p.tocsr()
    return sp.kron(sp.kron(p, p), sp.identity(dof)).tocsr()


def edge_axes(n, dof):
    """Per unknown: which edges its point lies on (bit 0: x, bit 1: y)."""
    j, i = np.divmod(np.arange(n * n), n)
    return np.repeat(((i == 0) | (i == n - 1)) * 1 + ((j == 0) | (j == n - 1)) * 2, dof)


def boundary_restriction(P, nc, dof, Ac=None):
    """P^T with a boundary point's residual kept apart: from its fine points on the same edges
    only, averaged (weights adding to 1); an interior point's as P^T. Given the coarse operator
    Ac, a boundary row whose entries sum to about 0 keeps P^T's weights along its edge."""
    R = P.T.tocoo()
    ec, ef = edge_axes(nc, dof)[R.row], edge_axes(2 * nc - 1, dof)[R.col]
    keep = ec == ef
    half = np.full(P.shape[1], 0.5)
    if Ac is not None:
        sums, diag = np.abs(np.asarray(Ac.sum(axis=1)).ravel()), np.abs(Ac.diagonal())
        half[sums < 1e-8 * diag] = 1.0
    w = np.where(ec == 3, 1.0, np.where(ec > 0, half[R.row], 1.0)) * R.data
    return sp.csr_matrix((w[keep], (R.row[keep], R.col[keep])), shape=R.shape)


def chebyshev(A, dinv, emax, steps=3, lo=0.1, hi=1.1):
    """Chebyshev around Jacobi on [lo emax, hi emax], from the guess x (PETSc's KSPCHEBYSHEV)."""
    theta, delta = (hi + lo) / 2 * emax, (hi - lo) / 2 * emax

    def smooth(b, x):
        s1 = theta / delta
        rho = 1 / s1
        d = dinv * (b - A @ x) / theta
        for k in range(steps):
            x = x + d
            if k < steps - 1:
                rn = 1 / (2 * s1 - rho)
                d = rn * rho * d + 2 * rn / delta * dinv * (b - A @ x)
                rho = rn
        return x
    return smooth


def hierarchy(dof):
    sizes = [GRID]
    for _ in range(LEVELS - 1):
        sizes.insert(0, (sizes[0] + 1) // 2)
    levels = []
    for n in sizes:
        A = jacobian(n)
        L = {"n": n, "A": A}
        if levels:
            L["P"] = interpolation(levels[-1]["n"], dof)
            dinv = 1 / A.diagonal()
            emax = sla.eigs(sp.diags(dinv) @ A, k=1, which="LR", return_eigenvectors=False, tol=1e-3, maxiter=5000)[0].real
            L["smooth"] = chebyshev(A, dinv, emax)
        else:
            L["lu"] = sla.splu(A.tocsc())
        levels.append(L)
    return levels


def vcycle(levels, k, b, x):
    L = levels[k]
    if k == 0:
        return L["lu"].solve(b)
    x = L["smooth"](b, x)
    rc = L["R"] @ (b - L["A"] @ x)
    x = x + L["P"] @ vcycle(levels, k - 1, rc, np.zeros_like(rc))
    return L["smooth"](b, x)


def rate(levels, cycles=20):
    A = levels[-1]["A"]
    b = np.random.default_rng(0).standard_normal(A.shape[0])
    x = np.zeros_like(b)
    for _ in range(cycles):
        x = vcycle(levels, len(levels) - 1, b, x)
    return (np.linalg.norm(b - A @ x) / np.linalg.norm(b)) ** (1 / cycles)


def main():
    os.makedirs(B, exist_ok=True)
    if subprocess.run(["bin/stencilc", f"examples/{PROGRAM}.stn", "-o", f"{B}/{PROGRAM}"], stdout=subprocess.DEVNULL).returncode:
        sys.exit(f"{PROGRAM}: the build failed")
    n = GRID
    A = jacobian(n)
    dof = A.shape[0] // (n * n)
    print(f"== {PROGRAM}, {n}^2, {dof} unknowns a point")
    print("coarse-grid correction of a smooth error in one field (exact coarse solve), the factor it scales it by:")
    nc = (n + 1) // 2
    Ac, P = jacobian(nc), interpolation(nc, dof)
    x = np.linspace(0, 1, n)
    X, Y = np.meshgrid(x, x)
    for f in range(dof):
        for name, g in (("zero on the boundary", np.sin(np.pi * X) * np.sin(np.pi * Y)), ("constant", np.ones_like(X))):
            e = np.zeros((n * n, dof))
            e[:, f] = g.ravel()
            factors = []
            for R in (P.T, boundary_restriction(P, nc, dof), boundary_restriction(P, nc, dof, Ac)):
                c = (P @ sla.spsolve(Ac.tocsc(), R @ (A @ e.ravel()))).reshape(n * n, dof)[:, f]
                factors.append(c @ g.ravel() / (g.ravel() @ g.ravel()))
            print(f"  field {f}, {name:20s}: P^T {factors[0]:.3f}, averaged {factors[1]:.3f}, by row {factors[2]:.3f}")
    levels = hierarchy(dof)
    for name, make in (("P^T", lambda k: levels[k]["P"].T.tocsr()),
                       ("averaged", lambda k: boundary_restriction(levels[k]["P"], levels[k - 1]["n"], dof)),
                       ("by row", lambda k: boundary_restriction(levels[k]["P"], levels[k - 1]["n"], dof, levels[k - 1]["A"]))):
        for k in range(1, len(levels)):
            levels[k]["R"] = make(k)
        print(f"V-cycle as an iteration, {len(levels)} levels, restriction {name}: {rate(levels):.3f} per cycle")


if __name__ == "__main__":
    main()
