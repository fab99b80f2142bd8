#!/bin/sh
# Projected Gauss-Seidel for a small LCP (gamma >= 0, g = N gamma + r >= 0, gamma^T g = 0) in
# plain shell + awk, through cpbench's external-solver protocol (docs/external.md):
#
#     sh pgs.sh N.mtx GAMMA.mtx INFO.json TOL MAX_ITER
#
# reads the bundle's N.mtx (MatrixMarket coordinate, symmetric or general) and r.mtx beside it,
# sweeps gamma_i = max(0, gamma_i - g_i / N_ii) until ||gamma - max(0, gamma - g)|| / ||r|| <= TOL,
# writes gamma as a MatrixMarket array and the iterations and status as JSON. Dense: tiny
# problems only.
set -e
dir=$(dirname "$1")
awk -v out="$2" -v info="$3" -v tol="$4" -v maxit="$5" '
FNR == 1 { file++; sym = ($0 ~ /symmetric/); sized = 0; next }
/^%/ { next }
!sized { sized = 1; if (file == 1) n = $1; next }
file == 1 { N[$1, $2] += $3; if (sym && $1 != $2) N[$2, $1] += $3; next }
file == 2 { r[++m] = $1; rr += $1 * $1 }
function g(i,   s, j) { s = r[i]; for (j = 1; j <= n; j++) if ((i, j) in N) s += N[i, j] * x[j]; return s }
END {
    for (i = 1; i <= n; i++) x[i] = 0
    status = "max_iterations"
    for (it = 1; it <= maxit; it++) {
        for (i = 1; i <= n; i++) { x[i] -= g(i) / N[i, i]; if (x[i] < 0) x[i] = 0 }
        res = 0
        for (i = 1; i <= n; i++) { d = x[i] - g(i); if (d < 0) d = 0; res += (x[i] - d) ^ 2 }
        if (sqrt(res) <= tol * sqrt(rr)) { status = "converged"; break }
    }
    if (it > maxit) it = maxit
    print "%%MatrixMarket matrix array real general" > out
    print n, 1 > out
    for (i = 1; i <= n; i++) printf "%.17g\n", x[i] > out
    printf "{\"iterations\": %d, \"status\": \"%s\"}\n", it, status > info
}' "$1" "$dir/r.mtx"
