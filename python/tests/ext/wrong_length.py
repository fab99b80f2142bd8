"""An external solver whose answer has the wrong length (n + 1 entries)."""
import sys

import numpy as np

n = int(sys.argv[2])
np.save(sys.argv[1], np.zeros(n + 1))
