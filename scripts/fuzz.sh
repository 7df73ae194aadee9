#!/usr/bin/env bash
# Runs one fuzz target for FUZZTIME: scripts/fuzz.sh FUZZTIME PACKAGE TARGET
#
# Go 1.26's fuzz coordinator can fail a run whose -fuzztime runs out while a worker is
# mid-call: "context deadline exceeded", no failing input written (go.dev/issue/75804,
# fixed in Go 1.27). Such a run found nothing, so it is run once more; any other failure,
# and a failing input above all, fails at once.
set -euo pipefail
fuzztime=$1 pkg=$2 target=$3
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for attempt in 1 2; do
	if go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" 2>&1 | tee "$log"; then
		exit 0
	fi
	if [[ $attempt == 2 ]] || grep -q 'Failing input written' "$log" ||
		[[ $(grep -c -- '--- FAIL' "$log") != 1 ]] || ! grep -qx '    context deadline exceeded' "$log"; then
		exit 1
	fi
	echo "fuzz.sh: $target stopped on the fuzz coordinator's deadline race (go.dev/issue/75804) with nothing found; running it again" >&2
done
