#!/bin/sh
# damage.sh: run iwarpdump on 1000 damaged captures (issue 11).
#
# Builds cmd/iwarpdump, lets internal/damage make damaged variants of
# testdata/siw/*.pcap and testdata/synth/*.pcap (bit flips, truncations,
# splices, random TCP payloads, reordered/duplicated/zero-length records,
# lying record lengths, timestamps going backwards, corrupt pcapng blocks)
# and runs the binary on each, checking: no panic, no hang, peak memory under
# the cap, exit code 0/1/3 (2 only when the file header itself was damaged),
# valid JSON Lines, no control characters in text output. Prints a summary
# table per damage kind.
#
# Environment (all optional):
#   DAMAGE_N=1000         number of variants
#   DAMAGE_SEED=1         generator seed (the same seed gives the same files)
#   DAMAGE_WORKERS=2      binaries run at once
#   DAMAGE_TIMEOUT=10s    time limit per file
#   DAMAGE_RSS_MIB=512    peak resident memory cap per run
#   DAMAGE_REPRO_DIR=dir  also copy failing variants there
#
# Extra arguments go to `go test` (e.g. -short for 100 variants).
set -eu
cd "$(dirname "$0")/.."
exec go test ./internal/damage -run '^TestDamagedCapturesRealBinary$' -v -count=1 -timeout 30m "$@"
