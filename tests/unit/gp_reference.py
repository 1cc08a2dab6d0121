#!/usr/bin/python3
"""Reference values for tests/unit/test_gp.c, computed with numpy alone.

Writes tests/unit/gp_reference.h: for fixed hyperparameters on 8 runs in 3
dimensions with seeds (two runs without one), the covariance matrix, the log
marginal likelihood of the standardised scores, the posterior mean and
variance of f (no seed offset) at a few points and of f(a) - f(b).
Run: /usr/bin/python3 tests/unit/gp_reference.py > tests/unit/gp_reference.h
"""
import numpy as np

D = 3
X = np.array([[0.0, 0.5, 1.0], [0.25, 0.5, 0.75], [0.5, 0.5, 0.5], [0.5, 0.0, 0.5],
              [0.75, 1.0, 0.25], [1.0, 0.25, 0.0], [0.25, 0.75, 0.5], [0.5, 0.5, 0.5]])
SEED = np.array([1, 2, 1, 2, 3, -1, 1, -1])
Y = np.array([0.91, 0.935, 0.952, 0.94, 0.905, 0.88, 0.947, 0.957])
LEN = np.array([0.3, 0.6, 1.2])
SIG, SEEDSD, NOISE = 1.1, 0.35, 0.2
Q = np.array([[0.5, 0.5, 0.5], [0.0, 1.0, 0.0], [0.375, 0.625, 0.5]])


def matern52(a, b):
    r = np.sqrt((((a[:, None, :] - b[None, :, :]) / LEN) ** 2).sum(-1))
    return SIG ** 2 * (1 + np.sqrt(5) * r + 5 * r ** 2 / 3) * np.exp(-np.sqrt(5) * r)


def main():
    n = len(Y)
    same_seed = (SEED[:, None] == SEED[None, :]) & (SEED[:, None] >= 0)
    K = matern52(X, X) + SEEDSD ** 2 * same_seed + NOISE ** 2 * np.eye(n)
    mean, scale = Y.mean(), Y.std()
    ys = (Y - mean) / scale
    alpha = np.linalg.solve(K, ys)
    sign, logdet = np.linalg.slogdet(K)
    assert sign > 0
    lml = -0.5 * ys @ alpha - 0.5 * logdet - 0.5 * n * np.log(2 * np.pi)
    ks = matern52(Q, X)
    pm = mean + scale * ks @ alpha
    pv = scale ** 2 * (np.diag(matern52(Q, Q)) - np.einsum("ij,ji->i", ks, np.linalg.solve(K, ks.T)))
    # f(Q0) - f(Q1), f(Q2) - f(Q0)
    pairs = [(0, 1), (2, 0)]
    cov = scale ** 2 * (matern52(Q, Q) - ks @ np.linalg.solve(K, ks.T))
    dm = [pm[a] - pm[b] for a, b in pairs]
    dv = [cov[a, a] + cov[b, b] - 2 * cov[a, b] for a, b in pairs]

    def arr(v):
        return "{ " + ", ".join("%.17g" % x for x in np.ravel(v)) + " }"

    print("/* Written by tests/unit/gp_reference.py (numpy); do not edit. */")
    print("#define REF_N %d" % n)
    print("#define REF_D %d" % D)
    print("#define REF_Q %d" % len(Q))
    print("static const double ref_x[] = %s;" % arr(X))
    print("static const long ref_seed[] = { %s };" % ", ".join(str(s) for s in SEED))
    print("static const double ref_y[] = %s;" % arr(Y))
    theta = list(np.log(LEN)) + [np.log(SIG), np.log(SEEDSD), np.log(NOISE)]
    print("static const double ref_theta[] = %s;" % arr(theta))
    print("static const double ref_k[] = %s;" % arr(K))
    print("static const double ref_lml = %.17g;" % lml)
    print("static const double ref_q[] = %s;" % arr(Q))
    print("static const double ref_mean[] = %s;" % arr(pm))
    print("static const double ref_var[] = %s;" % arr(pv))
    print("static const int ref_pairs[][2] = { %s };" % ", ".join("{ %d, %d }" % p for p in pairs))
    print("static const double ref_dmean[] = %s;" % arr(dm))
    print("static const double ref_dvar[] = %s;" % arr(dv))


main()
