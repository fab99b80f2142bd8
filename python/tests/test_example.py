"""examples/compare.py runs as a script and draws its figure."""

import subprocess
import sys
from pathlib import Path


def test_compare_example_runs(tmp_path):
    script = Path(__file__).resolve().parents[1] / "examples" / "compare.py"
    out = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    png = tmp_path / "compare.png"
    assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"
    assert "py:projected_gradient" in out.stdout
    assert (tmp_path / "run" / "summary.csv").exists()
