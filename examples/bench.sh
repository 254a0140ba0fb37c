#!/usr/bin/env bash
# Benchmark pinprobe against a loopback nginx (1 worker) and hey in the same run.
#
#   bash examples/bench.sh [SECONDS [ROUNDS]]   (default 10 s per measurement, 3 rounds)
#
# Installs nginx and hey from Debian's packages when missing (needs root),
# starts nginx on 127.0.0.1 with its own config in a temp dir, and prints:
#   - hey -c 50:                         requests/s, CPU µs per request
#   - pinprobe --rate max -c 50:         requests/s, CPU µs per request
#   - pinprobe --rate 2000:              achieved rate and its error
#   - pinprobe --rate 2000, 1x and 4x the duration: max RSS (memory stays flat)
# CPU is user+sys of the client process only (from GNU time); compare the
# ratios of one run: machines here are shared and noisy.
set -euo pipefail
secs=${1:-10}
rounds=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
need=()
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || need+=(nginx)
command -v hey >/dev/null || need+=(hey)
[[ -x /usr/bin/time ]] || need+=(time)
if ((${#need[@]})); then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

work=$(mktemp -d)
trap '[[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work; uwsgi_temp_path $work; scgi_temp_path $work;
  server { listen 127.0.0.1:$port; location / { return 200 "ok\n"; } }
}
CONF
"$nginx_bin" -c "$work/nginx.conf" -p "$work"
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done

(cd "$here" && go build -o "$work/pinprobe" .)
url="http://bench.test:$port/"
pin=("$work/pinprobe" -q --no-preflight --resolve "bench.test:$port:127.0.0.1" --format json)

# cpu_us COMMAND... : runs it, prints "user+sys seconds" and "max RSS KiB" into $work/time
timed() { /usr/bin/time -f '%U %S %M' -o "$work/time" "$@"; }
cpu() { awk '{printf "%.3f", $1+$2}' "$work/time"; }
rss() { awk '{print $3}' "$work/time"; }
json() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

# Saturation: hey and pinprobe alternate, $rounds rounds each, medians compared
# (the machine is shared and noisy: one pair of runs proves little).
: >"$work/sat.txt"
for round in $(seq "$rounds"); do
  timed hey -c 50 -z "${secs}s" "http://127.0.0.1:$port/" >"$work/hey.txt"
  echo "hey $(awk '/Requests\/sec/ {print $2}' "$work/hey.txt") $(cpu) $(awk '/\[200\]/ {print $2}' "$work/hey.txt")" >>"$work/sat.txt"
  timed "${pin[@]}" --rate max -c 50 -d "${secs}s" "$url" >"$work/max.json"
  echo "pinprobe $(json "$work/max.json" 'd["totals"]["rps"]') $(cpu) $(json "$work/max.json" 'd["totals"]["requests"]')" >>"$work/sat.txt"
done
python3 - "$work/sat.txt" <<'PY'
import statistics, sys
runs = {"hey": [], "pinprobe": []}
for line in open(sys.argv[1]):
    tool, rps, cpu, n = line.split()
    runs[tool].append((float(rps), float(cpu) / float(n) * 1e6))
med = {t: (statistics.median(r for r, _ in v), statistics.median(c for _, c in v)) for t, v in runs.items()}
for t, label in (("hey", "hey -c 50           "), ("pinprobe", "pinprobe --rate max ")):
    each = ", ".join(f"{r:.0f}" for r, _ in runs[t])
    print(f"{label} {med[t][0]:8.0f} req/s  {med[t][1]:6.1f} µs CPU/request  (medians of {len(runs[t])} runs: {each} req/s)")
print(f"ratio pinprobe/hey:  throughput {med['pinprobe'][0] / med['hey'][0]:.2f}, CPU per request {med['pinprobe'][1] / med['hey'][1]:.2f}")
PY

timed "${pin[@]}" --rate 2000 -c 50 -d "${secs}s" "$url" >"$work/r2000.json"
n=$(json "$work/r2000.json" 'd["totals"]["requests"]')
dur=$(json "$work/r2000.json" 'd["duration_s"]')
dropped=$(json "$work/r2000.json" 'd["totals"]["dropped"]')
rss1=$(rss)
printf 'pinprobe --rate 2000 %8.1f req/s achieved (%s requests in %ss, %+.2f%% vs plan, %s dropped), max RSS %s KiB\n' \
  "$(echo "$n $dur" | awk '{print $1/$2}')" "$n" "$dur" "$(echo "$n $dur" | awk '{print ($1/$2/2000-1)*100}')" "$dropped" "$rss1"

timed "${pin[@]}" --rate 2000 -c 50 -d "$((secs * 4))s" "$url" >"$work/r2000x4.json"
printf 'pinprobe --rate 2000 for %ss: max RSS %s KiB (vs %s KiB for %ss)\n' "$((secs * 4))" "$(rss)" "$rss1" "$secs"
