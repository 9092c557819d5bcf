#!/usr/bin/env bash
# `make demo`: run the built-in default scenario headless (differential robot, noisy
# localization, figure-eight) and print where the bag, plots and metrics are.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
set +u
# shellcheck disable=SC1091
source env.sh || exit 2
set -u
exec wheelsim run "$@"
