"""An external solver that never finishes: starts a grandchild that sleeps, then sleeps
itself (the harness must kill the whole process group at the time limit)."""
import subprocess
import sys
import time

subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
time.sleep(60)
