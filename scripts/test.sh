#!/usr/bin/env bash
# Installs everything the test suite needs and runs it: the README's test command, and CI's.
# The engines are built in their checked variant (MEEPLELAB_DEBUG=1: Cython bounds checks and
# C array indexing trapped by -fsanitize=bounds), so the property tests catch any overrun.
set -euo pipefail
cd "$(dirname "$0")/.."
for setup in tests/setup_*.sh; do
    [ -e "$setup" ] && bash "$setup"
done
MEEPLELAB_DEBUG=1 python -m pip install --quiet -e ".[test]"
python -m pytest "$@"
