#!/usr/bin/env bash
# memory.sh: iwarpdump's peak RSS on captures whose cost is in their
# connections and messages rather than their octets (issue 6: memory is
# bounded by the connections open at once and their windows, never by the
# capture's size; 64 MiB).
#
# Generates synth's stress workloads (iwarpsynth -scenario KIND -conns N)
# at two sizes each, N and 4N (SCALE, default 1: N as below), and prints
# the peak RSS of `-q -z conn`, `-T jsonl`, `-z conn` (the lines and the
# table), and each with `-j 2`:
#   synflood  N SYNs, none answered (a port scan, a SYN flood)
#   churn     N short connections, 64 open at a time, closed with FINs
#   resets    the same, each reset after its messages
#   resets-slow  the same with frames 100 ms apart (N = 25,000: a day)
#   longmsg   one connection sending one RDMA Write of N MiB
#   open      N connections open at once, each in the middle of a Write
# For all but open, the two sizes should take about the same memory; open
# grows with N (its connections are all open at once). Needs GNU time (/usr/bin/time). Usage: bench/memory.sh [SCALE]
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-${SCALE:-1}}
dir=${BENCH_DIR:-/tmp/iwarpkit-bench}
mkdir -p "$dir"
[ -x /usr/bin/time ] || { echo "memory.sh: GNU time (/usr/bin/time) not installed" >&2; exit 2; }
CGO_ENABLED=0 go build -o "$dir/iwarpdump" ./cmd/iwarpdump
CGO_ENABLED=0 go build -o "$dir/iwarpsynth" ./cmd/iwarpsynth

# kind and its smaller N.
cases="synflood:100000 churn:25000 resets:25000 resets-slow:25000 longmsg:32 open:500"
modes=("-q -z conn" "-T jsonl" "-j 2 -q -z conn" "-j 2 -T jsonl" "-z conn" "-j 2 -z conn")

printf '%-11s %9s %10s' workload N "file MB"
for m in "${modes[@]}"; do printf ' %16s' "$m"; done
printf '   (peak RSS, MiB)\n'
for c in $cases; do
	kind=${c%%:*}
	base=$(( ${c#*:} * scale ))
	for n in $base $((4 * base)); do
		f="$dir/stress-$kind-$n.pcap"
		[ -s "$f" ] || "$dir/iwarpsynth" -scenario "$kind" -conns "$n" -seed 1 -o "$f"
		printf '%-11s %9d %10.1f' "$kind" "$n" "$(awk -v b="$(stat -c %s "$f")" 'BEGIN{print b/1e6}')"
		for m in "${modes[@]}"; do
			# shellcheck disable=SC2086 # the mode is several arguments
			/usr/bin/time -f '%M' -o "$dir/memory.time" "$dir/iwarpdump" -r "$f" $m > /dev/null 2> "$dir/memory.err" ||
				{ echo; echo "memory.sh: iwarpdump -r $f $m failed:" >&2; cat "$dir/memory.err" >&2; exit 1; }
			printf ' %16.1f' "$(awk '{print $1/1024}' "$dir/memory.time")"
		done
		printf '\n'
	done
done
