#!/usr/bin/env bash
# Reproduce the incident with a real nginx gateway on loopback, probe it, stop
# it. Needs nginx (apt-get install nginx) and an IPv6 loopback.
#
#   examples/nginx-incident/run.sh [pinprobe flags]      # e.g. --format markdown
#
# PINPROBE is the binary (default: pinprobe on PATH).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pinprobe=${PINPROBE:-pinprobe}
nginx=$(command -v nginx || echo /usr/sbin/nginx)
dir=$(mktemp -d)
pgid=""
cleanup() {
  # nginx's master and workers share a process group: stop all of them.
  if [[ -n $pgid ]]; then kill -TERM -- "-$pgid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port); backend=$(free_port); dead=$(free_port)
sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|g" -e "s|@BACKEND@|$backend|g" -e "s|@DEAD@|$dead|g" \
  "$here/nginx.conf.tmpl" > "$dir/nginx.conf"
setsid "$nginx" -c "$dir/nginx.conf" -p "$dir" &
pgid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.05
done

# sign.example.test resolves to both gateway addresses, as the real host did.
status=0
"$pinprobe" --rate 100 --requests 300 --resolve "sign.example.test:$port:127.0.0.1,::1" "$@" \
  "http://sign.example.test:$port/sign" || status=$?
echo "nginx's own view of the 502s (its error log names the upstream it could not reach):" >&2
grep -m 3 upstream "$dir/error.log" >&2 || true
exit "$status"
