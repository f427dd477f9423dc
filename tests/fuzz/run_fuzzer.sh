#!/bin/sh
# SPDX-License-Identifier: MIT
# A bounded fuzzing run: FUZZER for SECONDS from the seed CORPUS (read only;
# new inputs go to a scratch directory, crashes to the build directory).
# The targets' own stdout and stderr are closed (-close_fd_mask=3): the config
# parser writes a line for every setting it rejects, which took most of its
# time; libFuzzer's reports and a crash's still print.
#   run_fuzzer.sh FUZZER CORPUS SECONDS
set -eu
fuzzer=$1 corpus=$2 seconds=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -close_fd_mask=3 \
  -artifact_prefix="$(pwd)/$(basename "$fuzzer")-" "$work" "$corpus"
