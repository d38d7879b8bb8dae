#!/usr/bin/env bash
# The Python package (crates/sifter-py): builds and installs it the way a user does
# (`pip install ./crates/sifter-py`, a maturin build of an abi3 wheel) into a virtualenv under
# target/, then runs its pytest suite against the CLI, the example notebook (as a script, its
# figure written under target/) and the Dask example with two local worker processes.
# Installs numpy, pandas, tqdm, matplotlib, dask[distributed] and pytest into that venv.
# Called by scripts/test.sh. Usage: scripts/python-tests.sh [path/to/sifter]
set -euo pipefail
cd "$(dirname "$0")/.."
SIFTER="${1:-target/release/sifter}"
[ -x "$SIFTER" ] || cargo build --release --locked -p sifter-cli
VENV=target/sifter-py-venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --upgrade pip
"$VENV/bin/pip" install -q pytest numpy pandas tqdm matplotlib "dask[distributed]"
echo "pip install ./crates/sifter-py (maturin builds the wheel)"
"$VENV/bin/pip" install -q --force-reinstall --no-deps ./crates/sifter-py
"$VENV/bin/pip" install -q ./crates/sifter-py  # its dependencies (numpy), already there
echo "pytest crates/sifter-py/tests"
SIFTER_BIN="$PWD/$SIFTER" "$VENV/bin/python" -m pytest -q crates/sifter-py/tests
echo "doctests of the Python package"
"$VENV/bin/python" -m pytest -q --doctest-modules "$("$VENV/bin/python" -c 'import sifter, os; print(os.path.dirname(sifter.__file__))')" -p no:cacheprovider
echo "examples/notebook.ipynb (code cells as a script)"
SIFTER_NOTEBOOK_OUT="$PWD/target/sieve-fig5.png" "$VENV/bin/python" examples/run_notebook.py examples/notebook.ipynb
echo "examples/cluster_sweep.py on a local Dask cluster of 2 workers"
"$VENV/bin/python" examples/cluster_sweep.py --workers 2 --check
