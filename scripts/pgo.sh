#!/usr/bin/env bash
# pgo.sh: regenerates cmd/iwarpdump/default.pgo, the CPU profile the Go
# toolchain uses for profile-guided optimisation of iwarpdump (go build and
# go run pick it up by themselves). The profile merges the issue 6 workload
# (synth's perf scenario) decoded in each common mode: -q -z conn, -T jsonl,
# text, and -j 2. PGO made iwarpdump -q some 8% faster on that workload.
# Rerun it after large changes to the hot path. Each mode runs ROUNDS
# times: a run of the 256 MiB workload takes some 0.1 s, and the profiler
# samples at 100 Hz, so one run of each gave the compiler 33 samples, too
# few to say which call sites are hot. Usage: scripts/pgo.sh [SIZE [ROUNDS]]
#
# Keep a new profile only after timing builds with it and with the old one
# in interleaved rounds on the 512 MiB workload, each round with fresh
# copies of the two binaries (cp, as bench/compare.sh's fresh does):
# which call sites a profile makes hot moves with the samples it happens
# to take. In session 40, of eight profiles made as this script makes
# them, one made -q -z conn 5-7 % faster than the profile committed then
# (it is the one committed now) and the other seven timed within 3 % of
# that one; five rounds of each mode, 40 rounds, -q -z conn alone, or a
# profile of the PGO build itself gave builds 2-10 % slower (those timed
# before fresh copies were made each round). Without fresh copies, where
# the page cache put each binary's file decides too: identical binaries
# in two files ran 7 % apart round after round.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-256M}
rounds=${2:-10}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Profile a binary built without PGO, so that the profile does not feed on itself.
CGO_ENABLED=0 go build -pgo=off -o "$dir/iwarpdump" ./cmd/iwarpdump
go run ./cmd/iwarpsynth -scenario perf -size "$size" -seed 1 -o "$dir/perf.pcap"
i=0
for args in "-q -z conn" "-T jsonl" "" "-j 2 -q -z conn"; do
	for _ in $(seq "$rounds"); do
		i=$((i + 1))
		# shellcheck disable=SC2086
		"$dir/iwarpdump" -r "$dir/perf.pcap" $args --cpuprofile "$dir/$i.prof" >/dev/null
	done
done
go tool pprof -proto "$dir"/*.prof > cmd/iwarpdump/default.pgo
echo "wrote cmd/iwarpdump/default.pgo ($(stat -c %s cmd/iwarpdump/default.pgo) octets, $(go tool pprof -top cmd/iwarpdump/default.pgo 2>/dev/null | sed -n 's/.*Total samples = \([^ ]*\).*/\1/p') of samples)"
