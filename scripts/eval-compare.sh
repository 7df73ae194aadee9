#!/usr/bin/env bash
# Hybrid nDCG@10 of two ctxd-eval reports side by side, per collection, and whether the
# second is at most LIMIT below the first on every collection: the rule that makes the int8
# model the default (README, docs/measuring.md). Like ctxd-eval, the verdict never changes
# the exit status; a report without a hybrid row for a collection of the other is an error.
#
# usage: scripts/eval-compare.sh FP32.md INT8.md
set -euo pipefail

LIMIT=0.005
[[ $# -eq 2 ]] || { echo "usage: $0 FP32.md INT8.md (reports of ctxd-eval -out)" >&2; exit 2; }

# The default hybrid row of each collection: "| name | docs | queries | hybrid | nDCG@10 | ...".
awk -F' *[|] *' -v limit="$LIMIT" '
	FNR == 1 { f++ }
	$5 == "hybrid" { ndcg[f, $2] = $6; if (f == 1) order[++n] = $2 }
	END {
		printf "%-12s %12s %12s %9s\n", "collection", "fp32 nDCG@10", "int8 nDCG@10", "diff"
		ok = 1
		for (i = 1; i <= n; i++) {
			c = order[i]
			if (!((2, c) in ndcg)) { printf "%s: no hybrid row in %s\n", c, ARGV[2] > "/dev/stderr"; exit 1 }
			d = ndcg[2, c] - ndcg[1, c]
			printf "%-12s %12.4f %12.4f %+9.4f\n", c, ndcg[1, c], ndcg[2, c], d
			if (d < -limit) ok = 0
		}
		if (n == 0) { print "no hybrid rows in " ARGV[1] > "/dev/stderr"; exit 1 }
		printf "int8 hybrid nDCG@10 at most %s below fp32 on every collection: %s\n", limit, ok ? "yes" : "no"
	}' "$1" "$2"
