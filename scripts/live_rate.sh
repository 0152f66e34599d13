#!/usr/bin/env bash
# live_rate.sh: the highest loopback rate iwarpdump captures and decodes with
# zero kernel drops, next to tcpdump -w /dev/null on the same traffic.
#
# One iWARP connection (MPA rev 2 Request/Reply, then RDMA Send/Write/Read
# FPDUs with CRC from synth's rev2-enhanced scenario, repeated) runs over lo
# in a network namespace of its own, at a paced rate, for SECONDS seconds;
# the capture tool runs with the filter "tcp port 7174" and is stopped with
# SIGINT; its statistics lines say whether the kernel dropped packets. The
# rate doubles until a drop, then is bisected.
#
# Needs root, iproute2 and tcpdump. Environment:
#   SECONDS_PER_RUN  seconds of traffic per measurement (default 3)
#   START_MBPS       first rate tried, MB/s (default 25)
#   MAX_MBPS         highest rate tried, MB/s (default 6400)
#   BISECT           bisection steps after the first drop (default 4)
#   BUFFER_KIB       -B for both tools (default: their default, 2048 KiB)
#   WRITE_SIZE       octets per write by the sender (default 65536)
#   IWARPDUMP_ARGS   extra iwarpdump arguments (default: text output)
#   SCENARIO         repeat the FPDUs of this synth scenario instead of the
#                    default RDMA Writes of 16 KiB (e.g. rev2-enhanced: small
#                    Sends, Writes and Reads, much more decoding per octet)
#   TOOLS            "iwarpdump tcpdump" (default) or one of them
# Output: a table of runs, then a summary line per tool and the ratio.
set -euo pipefail

cd "$(dirname "$0")/.."
secs=${SECONDS_PER_RUN:-3}
start=${START_MBPS:-25}
max=${MAX_MBPS:-6400}
bisect=${BISECT:-4}
tools=${TOOLS:-"iwarpdump tcpdump"}
bopt=()
[ -n "${BUFFER_KIB:-}" ] && bopt=(-B "$BUFFER_KIB")

[ "$(id -u)" = 0 ] || { echo "live_rate.sh: needs root" >&2; exit 2; }
command -v ip >/dev/null || { echo "live_rate.sh: needs iproute2 (ip)" >&2; exit 2; }
command -v tcpdump >/dev/null || { echo "live_rate.sh: needs tcpdump" >&2; exit 2; }

work=$(mktemp -d)
ns=iwrate$$
cleanup() {
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
CGO_ENABLED=0 go build -o "$work/iwarpdump" ./cmd/iwarpdump
go test -c -o "$work/gen" ./cmd/iwarpdump
ip netns add "$ns"
ip -n "$ns" link set lo up

# measure TOOL MBPS: prints "achieved_MBps captured received dropped".
measure() {
	local tool=$1 mbps=$2 err=$work/err out pid achieved
	: >"$err"
	case $tool in
	iwarpdump)
		ip netns exec "$ns" "$work/iwarpdump" -i lo "${bopt[@]}" ${IWARPDUMP_ARGS:-} tcp port 7174 >/dev/null 2>"$err" &
		;;
	tcpdump)
		ip netns exec "$ns" tcpdump -i lo "${bopt[@]}" -w /dev/null tcp port 7174 2>"$err" &
		;;
	esac
	pid=$!
	for _ in $(seq 100); do
		grep -q "listening on" "$err" && break
		sleep 0.05
	done
	out=$(ip netns exec "$ns" env IWARP_RATE_BPS=$((mbps * 1000000)) IWARP_RATE_SECONDS="$secs" \
		IWARP_RATE_WRITE="${WRITE_SIZE:-65536}" IWARP_RATE_SCENARIO="${SCENARIO:-}" "$work/gen" -test.run '^TestLiveRateGenerator$' 2>&1)
	achieved=$(sed -n 's/.*= \([0-9.]*\) MB\/s.*/\1/p' <<<"$out")
	sleep 0.5
	kill -INT "$pid"
	wait "$pid" || true
	local c r d
	c=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured$/\1/p' "$err")
	r=$(sed -n 's/^\([0-9]*\) packets\{0,1\} received by filter$/\1/p' "$err")
	d=$(sed -n 's/^\([0-9]*\) packets\{0,1\} dropped by kernel$/\1/p' "$err")
	echo "${achieved:-0} ${c:-?} ${r:-?} ${d:-?}"
}

printf "%-10s %10s %12s %10s %10s %8s\n" tool target_MBps achieved_MBps captured received dropped
declare -A best
for tool in $tools; do
	ok=0 okach=0 bad=0
	rate=$start
	while [ "$rate" -le "$max" ]; do
		read -r ach c r d < <(measure "$tool" "$rate")
		printf "%-10s %10s %12s %10s %10s %8s\n" "$tool" "$rate" "$ach" "$c" "$r" "$d"
		if [ "$d" = 0 ]; then
			ok=$rate
			okach=$(awk -v a="$ach" -v b="$okach" 'BEGIN{print (a > b ? a : b)}')
			# The sender cannot go faster: stop climbing.
			if awk -v a="$ach" -v t="$rate" 'BEGIN{exit !(a < 0.8*t)}'; then
				break
			fi
			rate=$((rate * 2))
		else
			bad=$rate
			break
		fi
	done
	if [ "$bad" -gt 0 ]; then
		lo=$ok hi=$bad
		for _ in $(seq "$bisect"); do
			mid=$(((lo + hi) / 2))
			[ "$mid" -le "$lo" ] && break
			read -r ach c r d < <(measure "$tool" "$mid")
			printf "%-10s %10s %12s %10s %10s %8s\n" "$tool" "$mid" "$ach" "$c" "$r" "$d"
			if [ "$d" = 0 ]; then
				lo=$mid
				okach=$(awk -v a="$ach" -v b="$okach" 'BEGIN{print (a > b ? a : b)}')
			else
				hi=$mid
			fi
		done
		best[$tool]=$okach
		echo "$tool: highest rate with zero kernel drops: $okach MB/s (drops at ${hi} MB/s)"
	else
		best[$tool]=$okach
		echo "$tool: no drops up to $okach MB/s (the sender's limit or MAX_MBPS)"
	fi
done
if [ -n "${best[iwarpdump]:-}" ] && [ -n "${best[tcpdump]:-}" ]; then
	awk -v a="${best[iwarpdump]}" -v b="${best[tcpdump]}" 'BEGIN{ if (b > 0) printf "ratio iwarpdump/tcpdump: %.2f (%s / %s MB/s)\n", a/b, a, b }'
fi
