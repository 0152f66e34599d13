#!/usr/bin/env bash
# pgo.sh: regenerates cmd/iwarpdump/default.pgo, the CPU profile the Go
# toolchain uses for profile-guided optimisation of iwarpdump (go build and
# go run pick it up by themselves). The profile merges the issue 6 workload
# (synth's perf scenario) decoded in each common mode: -q -z conn, -T jsonl,
# text, and -j 2. PGO made iwarpdump -q some 8% faster on that workload.
# Rerun it after large changes to the hot path. Usage: scripts/pgo.sh [SIZE]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-256M}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Profile a binary built without PGO, so that the profile does not feed on itself.
CGO_ENABLED=0 go build -pgo=off -o "$dir/iwarpdump" ./cmd/iwarpdump
go run ./cmd/iwarpsynth -scenario perf -size "$size" -seed 1 -o "$dir/perf.pcap"
i=0
for args in "-q -z conn" "-T jsonl" "" "-j 2 -q -z conn"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$dir/iwarpdump" -r "$dir/perf.pcap" $args --cpuprofile "$dir/$i.prof" >/dev/null
done
go tool pprof -proto "$dir"/*.prof > cmd/iwarpdump/default.pgo
echo "wrote cmd/iwarpdump/default.pgo ($(stat -c %s cmd/iwarpdump/default.pgo) octets)"
