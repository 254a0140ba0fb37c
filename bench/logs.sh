#!/usr/bin/env bash
# pinprobe logs on a large access log: time and peak memory.
#
#   bash bench/logs.sh [MB]      (default 200)
#
# Builds pinprobe from this checkout, runs the demo (2 s, loopback only) for
# a saved run and its gateway's access log, then writes a log of about MB
# megabytes: the run's own lines, spread through it, among lines of other
# clients in the same nginx format, every one inside the run's window (the
# join's worst case: each is weighed, none passed over by time). Then times
# `pinprobe logs` on it with GNU time and prints the figures BENCHMARKS.md
# quotes. Everything lives in a temp dir, removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-200}
[[ $mb =~ ^[0-9]+$ ]] || { echo "usage: bash bench/logs.sh [MB]" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench/logs.sh needs GNU time (/usr/bin/time)" >&2; exit 2; }

tmp=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$tmp"' EXIT
echo "tmp: $tmp" >&2
go build -o "$tmp/pinprobe" .
XDG_CACHE_HOME="$tmp/cache" "$tmp/pinprobe" --demo -q -d 2s --format json -o "$tmp/run.json" >/dev/null 2>"$tmp/demo.err" || true
demo_log=$(ls "$tmp"/cache/pinprobe/demo/run-*/access.log)
format=$(sed -n "s/^.* logs --log-format '\(.*\)' .*$/\1/p" "$tmp/demo.err")
[[ -n $format ]] || { echo "the demo printed no logs command:" >&2; cat "$tmp/demo.err" >&2; exit 1; }

python3 - "$demo_log" "$tmp/big.log" "$mb" <<'EOF'
import random, re, sys
src, dst, mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
run = open(src).read().splitlines()
random.seed(7)
# The other clients' lines are the run's with another client address and
# port and no pinprobe request ID: placed by nothing, counted as others'.
ids = re.compile(r"rid=pinprobe-\S+")
first = re.compile(r"^\S+")
target, size, n = mb << 20, 0, 0
every = max(1, target // (max(len(run), 1) * 200))  # the run's lines, spread through the log
with open(dst, "w") as out:
    k = 0
    while size < target:
        base = run[n % len(run)]
        n += 1
        if n % every == 0 and k < len(run):
            line = run[k]
            k += 1
        else:
            client = "10.%d.%d.%d:%d" % (random.randrange(256), random.randrange(256), random.randrange(1, 255), random.randrange(1024, 65535))
            line = first.sub(client, ids.sub("rid=-", base), count=1)
        out.write(line + "\n")
        size += len(line) + 1
    for line in run[k:]:
        out.write(line + "\n")
print("log: %d MB, %d lines (%d of the run)" % (size >> 20, n + len(run) - k, len(run)), file=sys.stderr)
EOF

/usr/bin/time -f '%e s elapsed, %U s user, %S s sys, %M KB peak RSS' \
  "$tmp/pinprobe" logs --log-format "$format" "$tmp/run.json" "$tmp/big.log" >"$tmp/out.txt" 2>"$tmp/time.txt" || true
head -1 "$tmp/out.txt"
grep -E ' Log |Placed' -A1 "$tmp/out.txt" | head -4 || true
tail -1 "$tmp/time.txt"
