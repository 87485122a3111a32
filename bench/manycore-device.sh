#!/bin/bash
# bench/manycore on the device machine, which has neither Node.js nor Open MPI (../shared/manycore/README.md).
# Here, first:   npm run build && bash ../shared/manycore/pack.sh
# There, in one `run` call with carry [".manycore"] (about 6 minutes on 16 cores; timeout_s 570):
#   bash bench/manycore-device.sh [manycore flags, e.g. --rounds 2]
# The table, the JSON, the SVGs and the log come back in $OUT; make the PNGs here afterwards:
#   cp -r <the returned files> /tmp/mc && node dist/bench/manycore.js report --out /tmp/mc
set -eu
out=${OUT:-/tmp/manycore}
mkdir -p "$out"
source .manycore/env.sh
# pack.sh carries the C references compiled (bin-ref/), not the Python ones: put them where manycore looks.
mkdir -p "$MC_CCJS/bench/reference"
cp bench/reference/*.py "$MC_CCJS/bench/reference/"
cd "$MC_CCJS"
# Stopped short of the call's limit, it still leaves the rounds done (the report is rewritten after each).
timeout "${MANYCORE_SECONDS:-540}" node dist/bench/manycore.js --out "$out" "$@" 2>&1 | tee "$out/manycore.log"
