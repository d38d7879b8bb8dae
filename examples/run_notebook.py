#!/usr/bin/env python3
"""Runs the code cells of a notebook in order as one script (the test's way of executing
examples/notebook.ipynb without a Jupyter kernel), from the notebook's folder."""
import json
import os
import sys
from pathlib import Path

nb_path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("notebook.ipynb")).resolve()
cells = json.loads(nb_path.read_text())["cells"]
os.chdir(nb_path.parent)
env = {"__name__": "__main__"}
for i, c in enumerate(cells):
    if c["cell_type"] != "code":
        continue
    src = "".join(c["source"])
    print(f"--- cell {i}", flush=True)
    exec(compile(src, f"{nb_path.name}[{i}]", "exec"), env)
print("notebook ran: every cell", flush=True)
