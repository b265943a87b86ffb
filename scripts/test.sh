#!/usr/bin/env bash
# The README's test command, and CI's: builds the product, then runs the test suite.
#
# - build/wheel/: the release wheel, exactly what `pip install .` builds; it is installed into
#   this environment with the test extras (so `meeplelab` afterwards is the release build) and
#   the install test (tests/deploy/test_install.py) installs it into a fresh virtualenv.
# - build/checked/: the checked build (MEEPLELAB_DEBUG=1: Cython bounds checks on, C array
#   indexing trapped by -fsanitize=bounds), unpacked from its own wheel.  Only the suite puts
#   it on its path (PYTHONPATH below), so the property tests catch any overrun while nothing
#   else in the environment ever loads it; tests/conftest.py refuses to run on another build.
# Arguments go to pytest (e.g. `bash scripts/test.sh -m "not browser" tests/games`).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
for setup in tests/setup_*.sh; do
    [ -e "$setup" ] && bash "$setup"
done
rm -rf build/wheel build/checked build/checked-wheel
python -m pip wheel --quiet --no-deps --wheel-dir build/wheel .
WHEEL="$(ls build/wheel/meeplelab-*.whl)"
python -m pip install --quiet --force-reinstall --no-deps "$WHEEL"
python -m pip install --quiet "$WHEEL[test]"
MEEPLELAB_DEBUG=1 python -m pip wheel --quiet --no-deps --wheel-dir build/checked-wheel .
python -m zipfile -e build/checked-wheel/meeplelab-*.whl build/checked
# PYTHONSAFEPATH: the checkout's own (unbuilt) packages must not shadow the checked build.
export PYTHONPATH="$ROOT/build/checked" PYTHONSAFEPATH=1 MEEPLELAB_SUITE_BUILD=checked
export MEEPLELAB_WHEEL="$ROOT/$WHEEL"
python -m pytest "$@"
