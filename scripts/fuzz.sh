#!/bin/sh
# fuzz.sh: run every native Go fuzz target in the module for a short time.
#
# Finds each `func FuzzXxx(` in the module's _test.go files and runs it
# alone in its package:
#   go test -run='^$' -fuzz='^FuzzXxx$' -fuzztime=$FUZZTIME ./pkg
# (the anchored pattern matters: -fuzz must match exactly one target per
# package). The committed seed corpora (f.Add and testdata/fuzz/FuzzXxx/)
# run first. Prints one summary line per target and exits 1 if any failed;
# a failing input is written by Go under the package's testdata/fuzz/FuzzXxx/.
# Needs no terminal (CI).
#
# Environment:
#   FUZZTIME=10s   time per target (a duration, or Nx for N executions)
#   FUZZ_FILTER=   only targets whose "package FuzzName" matches this
#                  extended regular expression (e.g. 'dissect/mpa' or 'FuzzPipeline')
#   FUZZ_PARALLEL= value for -parallel (fuzzing workers; default GOMAXPROCS)
#   FUZZ_MINIMIZE= -fuzzminimizetime (default 200x)
set -u
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10s}
filter=${FUZZ_FILTER:-}
parallel=${FUZZ_PARALLEL:-}
# Minimising each new interesting input may take up to 60 s by default, during
# which no new input runs: the pipeline targets (inputs of kilobytes) then
# did 30 runs in 3 s. A bounded count keeps them fuzzing.
minimize=${FUZZ_MINIMIZE:-200x}

# "dir name" per target, sorted; vendor and testdata trees skipped.
targets=$(find . -name '*_test.go' -not -path './vendor/*' -not -path '*/testdata/*' -print |
	sort |
	while IFS= read -r f; do
		sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f" |
			while IFS= read -r name; do
				printf '%s %s\n' "$(dirname "$f")" "$name"
			done
	done | sort -u)

if [ -n "$filter" ]; then
	targets=$(printf '%s\n' "$targets" | grep -E -- "$filter" || true)
fi
if [ -z "$targets" ]; then
	echo "fuzz.sh: no fuzz targets found${filter:+ matching $filter}" >&2
	exit 1
fi

total=$(printf '%s\n' "$targets" | wc -l | tr -d ' ')
echo "fuzz.sh: $total targets, $fuzztime each"
log=$(mktemp "${TMPDIR:-/tmp}/fuzz.XXXXXX")
trap 'rm -f "$log"' EXIT INT TERM

failed=0
summary=""
while IFS=' ' read -r dir name; do
	start=$(date +%s)
	set -- -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$minimize"
	if [ -n "$parallel" ]; then
		set -- "$@" -parallel="$parallel"
	fi
	status=""
	for try in 1 2; do
		if go test "$@" "$dir" </dev/null >"$log" 2>&1; then
			status=ok
			break
		fi
		# Go 1.26's fuzz coordinator can report "context deadline exceeded"
		# when -fuzztime expires while a worker is mid-input
		# (golang/go#75804, fixed in Go 1.27): no input failed, none was
		# written. Retry such a run once; if it happens again, report it
		# as a flake. A real failure always writes its input.
		if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written\|panic:' "$log"; then
			status=FLAKE
			continue
		fi
		status=""
		break
	done
	if [ -n "$status" ]; then
		:
	else
		status=FAIL
		failed=$((failed + 1))
		echo "---- $dir $name failed:"
		cat "$log"
		echo "----"
	fi
	secs=$(($(date +%s) - start))
	# The last progress line says how many inputs were run.
	execs=$(sed -n 's/.*execs: \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
	line=$(printf '%-4s %-22s %-28s %4ss %s' "$status" "$dir" "$name" "$secs" "${execs:+execs $execs}")
	echo "$line"
	summary="$summary$line
"
done <<EOF2
$targets
EOF2

echo
echo "fuzz.sh summary ($fuzztime per target):"
printf '%s' "$summary"
if [ "$failed" -gt 0 ]; then
	echo "fuzz.sh: $failed of $total targets FAILED (failing inputs are under <pkg>/testdata/fuzz/<FuzzName>/)"
	exit 1
fi
echo "fuzz.sh: all $total targets passed"
