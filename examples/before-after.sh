#!/usr/bin/env bash
# Verify a gateway change: probe before, make the change, probe after, and
# let pinprobe say what changed. Exit 1 when the change made any endpoint
# or family significantly worse, or when the run after it breaches the gate.
#
#   examples/before-after.sh https://sign.example.com/        # then follow the prompt
#
# Environment:
#   PINPROBE   the binary (default: pinprobe on PATH)
#   PROBE_ARGS extra flags for both runs (default: --rate 20 -d 1m)
#   GATE       the release gate of the run after (default: --max-failure-rate 1% --fail-on-verdict;
#              a rate is proven with about 3/RATE requests an address: 300 for 1%, 3,000 for 0.1%,
#              so the default run proves 1% on a host of up to 4 addresses)
#   CHANGE     a command that makes the change; without it the script waits for Enter
#   OUT        where the reports go (default: ./gateway-change-<UTC time>)
set -euo pipefail
url=${1:?usage: before-after.sh URL [more pinprobe args]}
shift
pinprobe=${PINPROBE:-pinprobe}
out=${OUT:-./gateway-change-$(date -u +%Y%m%dT%H%M%SZ)}
gate=${GATE:---max-failure-rate 1% --fail-on-verdict}
probe_args=${PROBE_ARGS:---rate 20 -d 1m}
mkdir -p "$out"

# The top of a text report, up to its first blank line, says what matters:
# the verdict in one line (every suspect, how many requests failed), the
# release gate's outcome, then what ran.
top() { awk 'NF == 0 { exit } { print }' "$1"; }

echo "== before the change"
# The run before may fail: that is what the change is for. Keep its report.
# shellcheck disable=SC2086 # PROBE_ARGS is a list of flags
"$pinprobe" -q $probe_args -o "$out/before.json" "$@" "$url" > "$out/before.txt" || true
top "$out/before.txt"

if [[ -n ${CHANGE:-} ]]; then
  echo "== making the change: $CHANGE"
  bash -c "$CHANGE"
else
  read -r -p "== make the gateway change now, then press Enter " _
fi

echo "== after the change"
status=0
# shellcheck disable=SC2086 # GATE and PROBE_ARGS are lists of flags
"$pinprobe" -q $probe_args $gate -o "$out/after.json" "$@" "$url" > "$out/after.txt" || status=$?
top "$out/after.txt"

echo "== what changed"
compared=0
"$pinprobe" compare --fail-on-regression --format markdown -o "$out/compare.json" \
  "$out/before.json" "$out/after.json" > "$out/compare.md" || compared=$?
(( status != 0 )) || status=$compared
sed -n 3p "$out/compare.md"
echo "reports in $out (before/after .json and .txt, compare.md and compare.json)"
exit "$status"
