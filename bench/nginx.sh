# Sourced by bench/bench.sh and bench/scale.sh: their work directory and the
# loopback nginx they measure against, one worker process answering 200 "ok"
# on 127.0.0.1-9, in a session and process group of its own (setsid), so
# Ctrl-C at the terminal does not reach it and the exit trap stops exactly
# that group. Needs $nginx_bin and a log function.

# bench_workdir NAME makes $work and sets the traps that stop nginx and
# remove $work however the script ends.
bench_workdir() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/pinprobe-$1.XXXXXX")
  nginx_pgid=""
  trap bench_cleanup EXIT
  trap 'log interrupted; exit 130' INT TERM HUP
}

bench_cleanup() {
  local rc=$?
  if [[ -n $nginx_pgid ]]; then
    kill -TERM -- "-$nginx_pgid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 -- "-$nginx_pgid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$nginx_pgid" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$rc"
}

# start_nginx WHO CONNECTIONS [MAIN] starts nginx with CONNECTIONS worker
# connections (and the main-context directives MAIN) on a free port, and
# sets $port, $nginx_master, $nginx_worker and $nginx_pgid; WHO names the
# script in its errors.
start_nginx() {
  local who=$1 connections=$2 main=${3:-}
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local listen=""
  for i in 1 2 3 4 5 6 7 8 9; do listen+="    listen 127.0.0.$i:$port;"$'\n'; done
  mkdir -p "$work/nginx"
  cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 1;
$main
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections $connections; }
http {
  access_log off;
  keepalive_requests 10000000;
  keepalive_timeout 75s;
  client_body_temp_path $work/nginx; proxy_temp_path $work/nginx; fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx; scgi_temp_path $work/nginx;
  server {
$listen    location / { return 200 "ok\n"; }
  }
}
CONF
  setsid "$nginx_bin" -c "$work/nginx/nginx.conf" -p "$work/nginx" </dev/null >"$work/nginx/stdout.log" 2>&1 &
  local up=0
  for _ in $(seq 100); do
    if [[ -s $work/nginx/nginx.pid ]] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null &&
      (exec 3<>"/dev/tcp/127.0.0.9/$port") 2>/dev/null; then
      up=1
      break
    fi
    sleep 0.1
  done
  if ((!up)); then
    echo "$who: nginx did not start on 127.0.0.1:$port" >&2
    cat "$work/nginx/error.log" "$work/nginx/stdout.log" >&2 2>/dev/null || true
    exit 1
  fi
  nginx_master=$(cat "$work/nginx/nginx.pid")
  nginx_pgid=$(ps -o pgid= -p "$nginx_master" | tr -d ' ')
  nginx_worker=$(ps -o pid= --ppid "$nginx_master" | head -n 1 | tr -d ' ')
  [[ $nginx_pgid =~ ^[0-9]+$ && $nginx_pgid != "$(ps -o pgid= -p $$ | tr -d ' ')" ]] || {
    echo "$who: nginx is not in a process group of its own" >&2; exit 1; }
}
