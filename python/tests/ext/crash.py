"""An external solver that crashes: prints to stderr and exits with code 3."""
import sys

print("pg: something went badly wrong", file=sys.stderr)
sys.exit(3)
