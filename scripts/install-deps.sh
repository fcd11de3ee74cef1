#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages roofline-advise builds and tests with (python3: the include-graph
# and chart checks; python3-dev and pybind11-dev: the Python bindings; pkg-config: the consumer
# test that builds with roofline.pc and no CMake; ccache: the compiler cache in front of every
# build of scripts/setup.sh and scripts/test.sh), where they are missing. With --test, also
# PyTorch (the capture tests) and Chromium, which renders the HTML report in a test: best effort,
# since those tests report themselves skipped, with the reason, without them.
set -euo pipefail
packages=(cmake g++ make libyaml-dev libcli11-dev doctest-dev nlohmann-json3-dev libfmt-dev
          libnlopt-dev python3 python3-dev pybind11-dev pkg-config ccache)
missing_of() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
install() {
  echo "installing: $*"
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "$@"
}
mapfile -t missing < <(missing_of "${packages[@]}")
[ ${#missing[@]} -eq 0 ] || install "${missing[@]}"
# PyTorch (Debian's 1.13) for the capture tests: best effort too, they say skipped without it.
if [ "${1:-}" = --test ] && [ -n "$(missing_of python3-torch)" ]; then
  install python3-torch || echo "python3-torch could not be installed: the capture tests will say skipped"
fi
if [ "${1:-}" = --test ] && [ -n "$(missing_of chromium)" ] &&
   ! command -v chromium chromium-browser google-chrome > /dev/null 2>&1; then
  install chromium || echo "chromium could not be installed: the HTML render test will say skipped"
fi
