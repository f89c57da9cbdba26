#!/bin/sh
# The gate: horizon accepts a change only when this exits 0.
set -e
cd "$(dirname "$0")/.."
sh tests/test_add.sh
