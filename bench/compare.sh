#!/usr/bin/env bash
# compare.sh: iwarpdump side by side with tshark on the issue 6 workload.
#
# Generates the workload with synth (8 connections, markers in half, CRC on,
# messages 0 B to 256 KiB, MSS 1460; SIZE, default 512M), then runs each
# command RUNS times (default 3) and prints the median wall time, the
# throughput, the peak RSS and the ratio to tshark:
#   iwarpdump -q -z conn      full dissection, CRC checked, findings, no per-record output
#   iwarpdump -T jsonl        every record as JSON Lines, to /dev/null
#   the same two with -j 2    two workers (output identical to -j 1)
#   tshark -T fields -e iwarp_rdma.opcode
#   baseline                  read + Ethernet/IP/TCP decode + CRC32c of every payload octet
# Needs tshark and GNU time (/usr/bin/time). Usage: bench/compare.sh [SIZE] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-${SIZE:-512M}}
runs=${2:-${RUNS:-3}}
dir=${BENCH_DIR:-/tmp/iwarpkit-bench}
mkdir -p "$dir"
command -v tshark >/dev/null || { echo "compare.sh: tshark not installed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "compare.sh: GNU time (/usr/bin/time) not installed" >&2; exit 2; }

CGO_ENABLED=0 go build -o "$dir/iwarpdump" ./cmd/iwarpdump
CGO_ENABLED=0 go build -o "$dir/iwarpsynth" ./cmd/iwarpsynth
CGO_ENABLED=0 go build -o "$dir/baseline" ./bench/baseline
pcap="$dir/perf-$size.pcap"
[ -s "$pcap" ] || "$dir/iwarpsynth" -scenario perf -size "$size" -seed 1 -o "$pcap"
bytes=$(stat -c %s "$pcap")

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "workload: $pcap ($bytes octets), $runs runs each, median shown"
echo "tshark: $(tshark --version | head -1)"
printf '%-34s %10s %12s %10s %10s\n' command seconds MB/s "peak RSS" "vs tshark"

# measure NAME CMD...: median seconds and max RSS (KiB) over the runs.
measure() {
	local name=$1; shift
	local ts=() rss=0
	for _ in $(seq "$runs"); do
		/usr/bin/time -f '%e %M' -o "$dir/time.out" "$@" >/dev/null 2>"$dir/stderr.out" || { cat "$dir/stderr.out" >&2; exit 1; }
		read -r s m < "$dir/time.out"
		ts+=("$s")
		(( m > rss )) && rss=$m
	done
	local med
	med=$(printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	echo "$name $med $rss"
}

declare -A secs
tsh=$(measure tshark tshark -r "$pcap" -T fields -e iwarp_rdma.opcode)
tsh_s=$(echo "$tsh" | awk '{print $2}')
for spec in "iwarpdump -q -z conn|$dir/iwarpdump -r $pcap -q -z conn" \
	"iwarpdump -T jsonl|$dir/iwarpdump -r $pcap -T jsonl" \
	"iwarpdump -j 2 -q -z conn|$dir/iwarpdump -j 2 -r $pcap -q -z conn" \
	"iwarpdump -j 2 -T jsonl|$dir/iwarpdump -j 2 -r $pcap -T jsonl" \
	"baseline (gopacket read+TCP+CRC32c)|$dir/baseline $pcap"; do
	name=${spec%%|*}
	read -r -a cmd <<< "${spec#*|}"
	res=$(measure x "${cmd[@]}")
	s=$(echo "$res" | awk '{print $2}'); m=$(echo "$res" | awk '{print $3}')
	secs[$name]=$s
	awk -v n="$name" -v s="$s" -v m="$m" -v b="$bytes" -v t="$tsh_s" \
		'BEGIN {printf "%-34s %10.2f %12.0f %8.0f MiB %9.1fx\n", n, s, b/1e6/s, m/1024, t/s}'
done
awk -v s="$tsh_s" -v m="$(echo "$tsh" | awk '{print $3}')" -v b="$bytes" \
	'BEGIN {printf "%-34s %10.2f %12.0f %8.0f MiB %9.1fx\n", "tshark -T fields -e iwarp_rdma.opcode", s, b/1e6/s, m/1024, 1}'
awk -v q1="${secs[iwarpdump -q -z conn]}" -v q2="${secs[iwarpdump -j 2 -q -z conn]}" \
	-v j1="${secs[iwarpdump -T jsonl]}" -v j2="${secs[iwarpdump -j 2 -T jsonl]}" \
	-v b="${secs[baseline (gopacket read+TCP+CRC32c)]}" \
	'BEGIN {printf "2 workers vs 1: -q -z conn %.2fx, -T jsonl %.2fx; -q -z conn takes %.2fx the baseline time\n", q1/q2, j1/j2, q1/b}'
h1=$("$dir/iwarpdump" -r "$pcap" -T jsonl | sha256sum | cut -c1-16)
h2=$("$dir/iwarpdump" -j 2 -r "$pcap" -T jsonl | sha256sum | cut -c1-16)
if [ "$h1" = "$h2" ]; then echo "-T jsonl output with -j 2 identical to -j 1 (sha256 $h1...)"; else echo "-j 2 OUTPUT DIFFERS: $h1 vs $h2"; exit 1; fi
