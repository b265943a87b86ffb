#!/usr/bin/env bash
# Installs what the dashboard's browser test needs: Debian's Chromium and its WebDriver, and
# the Python selenium client.  Idempotent; .ci/run calls it before pytest.
set -euo pipefail
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        chromium chromium-driver
fi
python -c "import selenium" 2>/dev/null || python -m pip install -q "selenium>=4.20"
chromium --version
chromedriver --version
