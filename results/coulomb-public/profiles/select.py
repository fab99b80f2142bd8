"""The rows of the profiles in this folder: cpbench's own Coulomb solvers (no `siconos:*` row)
on the 16 files not solved at the start point (every solver returns the zero reaction of
fc2d_granularflowonwall_00667_00000 and gfc2d_granularflowonwall_00000_00117 at iteration 0,
where a time ratio is undefined). Usage, from this folder's parent:

    python3 profiles/select.py summary.csv SUBSET/summary.csv

then link or copy the run's traces/ into SUBSET/ and run `cpbench report SUBSET --figure-size 8x7`.
"""
import csv
import sys

TRIVIAL = {
    "fc2d_granularflowonwall_00667_00000__coulomb",
    "gfc2d_granularflowonwall_00000_00117__coulomb",
}

src, dst = sys.argv[1], sys.argv[2]
reader = csv.reader(open(src, newline=""))
header = next(reader)
inst, solver = header.index("instance"), header.index("solver")
with open(dst, "w", newline="") as f:
    out = csv.writer(f)
    out.writerow(header)
    for row in reader:
        if not row[solver].startswith("siconos:") and row[inst] not in TRIVIAL:
            out.writerow(row)
