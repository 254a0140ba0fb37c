#!/usr/bin/env bash
# pinprobe against wrk, hey, vegeta and bombardier on a loopback nginx, in one run.
#
#   bash bench/bench.sh [--smoke] [--rounds N] [options]      (bash bench/bench.sh --help)
#
# Installs what it lacks (Debian: nginx, wrk, hey; `go install` at fixed versions: vegeta,
# bombardier — into a cache dir, not the repo), builds pinprobe from this checkout, starts nginx
# (one worker, access_log off, `return 200 "ok\n"`) on 127.0.0.1-127.0.0.9 in its own process
# group in a temp dir, and stops it on any exit, Ctrl-C included. Each round runs every scenario
# with every tool once, tools interleaved (the first tool rotated each round); medians of the
# rounds go into BENCHMARKS.md, every run into bench/results/<date>-<commit>.csv.
#
# Scenarios:  sat   50 connections back to back: req/s, CPU/request, p50/p99, RSS (all 5 tools)
#             rate  fixed 2,000 / 10,000 / 50,000 req/s: achieved rate, CPU/request, p50/p99, RSS
#                   (vegeta, bombardier, hey; pinprobe with its default connection sampling, and
#                   pinprobe-c0 with --conn-requests 0 like the peers, pinprobe-b10 paced as
#                   bombardier, --pace-grain 10ms -c 50; wrk cannot limit its rate)
#             rss   pinprobe's peak RSS over 8 endpoints at 10^4, 10^5, 10^6 requests
# CPU is the generator's own user+sys (wait4 rusage), requests are the tool's own count.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bash bench/bench.sh [options]

  --smoke            every scenario once for ~1 s, small request counts; checks that every tool's
                     output parses (fails loudly otherwise); writes nothing into the repo
  --rounds N         rounds; each figure is the median of N runs (default 3)
  --sat-secs S       seconds per saturation run (default 10)
  --rate-secs S      seconds per fixed-rate run (default 8)
  --rates "R..."     fixed rates in req/s (default "2000 10000 50000")
  --rss "N..."       request counts of the 8-endpoint memory runs (default "10000 100000 1000000")
  --sections "S..."  which scenarios to run, of sat, rate and rss (default "sat rate rss")
  --out FILE         Markdown output (default BENCHMARKS.md at the repo root; smoke: a temp file,
                     printed)
  --report CSV       run nothing: write the Markdown again from a results CSV and the .meta.tsv
                     beside it (e.g. after a change to bench/benchlib.py, or --out OLD.md for an
                     earlier run)
  --no-install       fail instead of installing a missing tool
  -h, --help         this text

Environment:
  PINPROBE_FLAGS     extra flags for every pinprobe run, e.g. "--client fast"
  BENCH_TOOLS_DIR    where vegeta/bombardier (and hey, if Debian lacks it) are installed
                     (default ${XDG_CACHE_HOME:-~/.cache}/pinprobe-bench)

pinprobe gets --conn-requests 0 (unlimited keep-alive reuse) in the sat scenario, and as
pinprobe-c0 in the rate scenario, when its --help lists that flag. The whole default run takes about 10 minutes on 2 cores.
EOF
}

VEGETA_MOD=github.com/tsenart/vegeta/v12
VEGETA_VERSION=v12.13.0
BOMBARDIER_MOD=github.com/codesenberg/bombardier
BOMBARDIER_VERSION=v1.2.6
HEY_MOD=github.com/rakyll/hey
HEY_VERSION=v0.1.4
CONNS=50

smoke=0 rounds=3 sat_secs=10 rate_secs=8 rates="2000 10000 50000" rss_counts="10000 100000 1000000"
sections="sat rate rss" out="" install=1 report_csv=""
orig_args=("$@")
while (($#)); do
  case $1 in
    --smoke) smoke=1 ;;
    --rounds) rounds=$2; shift ;;
    --sat-secs) sat_secs=$2; shift ;;
    --rate-secs) rate_secs=$2; shift ;;
    --rates) rates=$2; shift ;;
    --rss) rss_counts=$2; shift ;;
    --sections) sections=$2; shift ;;
    --out) out=$2; shift ;;
    --no-install) install=0 ;;
    --report) report_csv=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if ((smoke)); then
  rounds=1 sat_secs=1 rate_secs=1 rss_counts="1000 3000 10000"
fi
for v in $sections; do
  [[ $v == sat || $v == rate || $v == rss ]] || { echo "bench: --sections: not sat, rate or rss: $v" >&2; exit 2; }
done
for v in "$rounds" "$sat_secs" "$rate_secs" $rates $rss_counts; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench: not a positive integer: $v" >&2; exit 2; }
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lib=$repo/bench/benchlib.py
if [[ -n $report_csv ]]; then
  md=${out:-$repo/BENCHMARKS.md}
  keep=()
  [[ ! -f $md ]] || keep=(--keep "$md")
  python3 "$lib" report "$report_csv" "${report_csv%.csv}.meta.tsv" "$md.tmp" "${keep[@]}"
  mv "$md.tmp" "$md"
  echo "bench: wrote $md from $report_csv" >&2
  exit 0
fi
tools_dir=${BENCH_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pinprobe-bench}
tools_bin=$tools_dir/bin
log() { printf '%s bench: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# ------------------------------------------------------------------------- install
# go_tool NAME MODULE VERSION: installs MODULE@VERSION into $tools_bin unless that exact build is there.
go_tool() {
  local name=$1 mod=$2 ver=$3
  if [[ -x $tools_bin/$name ]] && go version -m "$tools_bin/$name" 2>/dev/null | awk '$1 == "mod"' | grep -q "[[:space:]]$ver\b"; then
    return
  fi
  ((install)) || { echo "bench: missing $tools_bin/$name $ver (and --no-install)" >&2; exit 1; }
  log "go install $mod@$ver"
  mkdir -p "$tools_bin"
  (cd / && GOBIN=$tools_bin GOFLAGS='' go install "$mod@$ver")
}

command -v go >/dev/null || { echo "bench: go is not on PATH" >&2; exit 1; }
need=()
command -v python3 >/dev/null || need+=(python3)
[[ -x /usr/sbin/nginx ]] || command -v nginx >/dev/null || need+=(nginx)
command -v wrk >/dev/null || need+=(wrk)
command -v setsid >/dev/null || need+=(util-linux)
hey_bin=$(command -v hey || true)
if ((${#need[@]})) || [[ -z $hey_bin && ! -x $tools_bin/hey ]]; then
  if ((!install)); then
    missing="${need[*]}"
    [[ -n $hey_bin || -x $tools_bin/hey ]] || missing+=" hey"
    echo "bench: missing ${missing# } (and --no-install)" >&2
    exit 1
  fi
  log "apt-get update"
  apt-get update -qq
  # hey: Debian's package where the release has one (bookworm does), else go install below.
  if [[ -z $hey_bin ]] && apt-cache policy hey 2>/dev/null | grep -q 'Candidate: [0-9]'; then need+=(hey); fi
  if ((${#need[@]})); then
    log "apt-get install ${need[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  hey_bin=$(command -v hey || true)
fi
if [[ -z $hey_bin ]]; then
  go_tool hey "$HEY_MOD" "$HEY_VERSION"
  hey_bin=$tools_bin/hey
fi
go_tool vegeta "$VEGETA_MOD" "$VEGETA_VERSION"
go_tool bombardier "$BOMBARDIER_MOD" "$BOMBARDIER_VERSION"
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
vegeta_bin=$tools_bin/vegeta
bombardier_bin=$tools_bin/bombardier

# ------------------------------------------------------------------------- nginx
# shellcheck source=bench/nginx.sh
source "$repo/bench/nginx.sh"
bench_workdir bench
start_nginx bench "4096"
log "nginx $nginx_master, worker $nginx_worker (process group $nginx_pgid) on 127.0.0.1-9:$port"

# ------------------------------------------------------------------------- pinprobe
log "go build pinprobe"
(cd "$repo" && go build -o "$work/pinprobe" .)
pin_bin=$work/pinprobe
read -r -a pin_extra <<<"${PINPROBE_FLAGS:-}"
keepalive=()
if "$pin_bin" --help 2>&1 | grep -q -- '--conn-requests'; then
  keepalive=(--conn-requests 0)
fi
# pinprobe-b10 paces as bombardier does (a token bucket filled every 10 ms,
# 50 connections), when this pinprobe has --pace-grain.
grained=()
if "$pin_bin" --help 2>&1 | grep -q -- '--pace-grain'; then
  grained=(--pace-grain 10ms -c $CONNS --conn-requests 0)
fi
host=bench.test
url_ip=http://127.0.0.1:$port/
url_pin=http://$host:$port/
rss_addrs=127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8,127.0.0.9
printf 'GET %s\n' "$url_ip" >"$work/targets.txt"

# ------------------------------------------------------------------------- output files
commit=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
dirty=""
# -dirty: the pinprobe that was built differs from the commit (changes to bench/ and BENCHMARKS.md don't count).
[[ -z $(git -C "$repo" status --porcelain --untracked-files=no -- . ':!bench' ':!BENCHMARKS.md' 2>/dev/null) ]] ||
  dirty="-dirty"
stamp=$(date -u +%Y%m%d-%H%M%S)
if ((smoke)); then
  csv=$work/smoke.csv
  md=${out:-$work/BENCHMARKS.md}
else
  mkdir -p "$repo/bench/results"
  csv=$repo/bench/results/$stamp-$commit$dirty.csv
  md=${out:-$repo/BENCHMARKS.md}
fi
run_id=$stamp-$commit$dirty

# ------------------------------------------------------------------------- one run
# measure SECTION SCENARIO TOOL PLAN_RATE PLAN_REQUESTS CMD...: runs CMD under the rusage wrapper
# (stdout to $work/out, stdin from $work/stdin), converts vegeta's results, appends a CSV row.
measure() {
  local section=$1 scenario=$2 tool=$3 plan_rate=$4 plan_requests=$5
  shift 5
  local load1 rc=0 shown
  load1=$(cut -d' ' -f1 /proc/loadavg)
  python3 "$lib" time "$work/time" --watch "$nginx_worker" -- "$@" <"$work/stdin" >"$work/out" 2>"$work/err" || rc=$?
  if ((rc >= 128)); then
    log "$tool ended by signal $((rc - 128)): stopping"
    exit 130
  fi
  if [[ $tool == vegeta && -s $work/vegeta.bin ]]; then
    mv "$work/out" "$work/attack.out"
    "$vegeta_bin" report -type=json "$work/vegeta.bin" >"$work/out" 2>>"$work/err" || true
    rm -f "$work/vegeta.bin"
  fi
  shown=$(show_cmd "$@")
  shown=${shown#"$(dirname "$1")/"}
  shown=${shown//"$work/"/}
  shown=${shown//":$port"/:PORT}
  [[ $tool != vegeta ]] || shown+=" < targets.txt && vegeta report -type=json vegeta.bin"
  if ! python3 "$lib" record "$csv" run_id="$run_id" round="$round" section="$section" scenario="$scenario" \
    plan_rate="$plan_rate" plan_requests="$plan_requests" load1="$load1" command="$shown" \
    --tool "$tool" --output "$work/out" --time "$work/time"; then
    echo "--- stderr of: $shown" >&2
    head -c 3000 "$work/err" >&2
    echo "bench: stopping: $tool's output did not parse (exit status $rc)" >&2
    exit 1
  fi
}

# show_cmd ARG...: the command line, quoting only the arguments that need it.
show_cmd() {
  local a line=""
  for a in "$@"; do
    if [[ -n $a && $a != *[^A-Za-z0-9_./:=,@%+-]* ]]; then line+="$a "; else line+="$(printf '%q' "$a") "; fi
  done
  printf '%s' "${line% }"
}

# sat_TOOL / rate_TOOL RATE build and measure one run.
sat_wrk() { : >"$work/stdin"; measure sat c$CONNS wrk "" "" wrk -t 2 -c $CONNS -d "${sat_secs}s" --latency "$url_ip"; }
sat_hey() { : >"$work/stdin"; measure sat c$CONNS hey "" "" "$hey_bin" -c $CONNS -z "${sat_secs}s" "$url_ip"; }
sat_vegeta() {
  cp "$work/targets.txt" "$work/stdin"
  measure sat c$CONNS vegeta "" "" "$vegeta_bin" attack -rate=0 -workers=$CONNS -max-workers=$CONNS \
    -max-connections=$CONNS -duration="${sat_secs}s" -output="$work/vegeta.bin"
}
sat_bombardier() {
  : >"$work/stdin"
  measure sat c$CONNS bombardier "" "" "$bombardier_bin" -c $CONNS -d "${sat_secs}s" -l -o json -p r "$url_ip"
}
sat_pinprobe() {
  : >"$work/stdin"
  measure sat c$CONNS pinprobe "" "" "$pin_bin" -q --no-preflight --format json --resolve "$host:$port:127.0.0.1" \
    --rate max -c $CONNS -d "${sat_secs}s" "${keepalive[@]}" "${pin_extra[@]}" "$url_pin"
}
rate_hey() {
  local q
  q=$(awk -v r="$1" -v c=$CONNS 'BEGIN { printf "%g", r / c }')
  : >"$work/stdin"
  measure rate "r$1" hey "$1" "" "$hey_bin" -c $CONNS -q "$q" -z "${rate_secs}s" "$url_ip"
}
rate_vegeta() {
  cp "$work/targets.txt" "$work/stdin"
  measure rate "r$1" vegeta "$1" "" "$vegeta_bin" attack -rate="$1/1s" -workers=$CONNS -max-workers=$CONNS \
    -max-connections=$CONNS -duration="${rate_secs}s" -output="$work/vegeta.bin"
}
rate_bombardier() {
  : >"$work/stdin"
  measure rate "r$1" bombardier "$1" "" "$bombardier_bin" -c $CONNS -r "$1" -d "${rate_secs}s" -l -o json -p r "$url_ip"
}
rate_pinprobe() {
  : >"$work/stdin"
  measure rate "r$1" pinprobe "$1" "" "$pin_bin" -q --no-preflight --format json --resolve "$host:$port:127.0.0.1" \
    --rate "$1" -d "${rate_secs}s" "${pin_extra[@]}" "$url_pin"
}
rate_pinprobe_c0() {
  ((${#keepalive[@]})) || return 0
  : >"$work/stdin"
  measure rate "r$1" pinprobe-c0 "$1" "" "$pin_bin" -q --no-preflight --format json --resolve "$host:$port:127.0.0.1" \
    --rate "$1" -d "${rate_secs}s" "${keepalive[@]}" "${pin_extra[@]}" "$url_pin"
}
rate_pinprobe_b10() {
  ((${#grained[@]})) || return 0
  : >"$work/stdin"
  measure rate "r$1" pinprobe-b10 "$1" "" "$pin_bin" -q --no-preflight --format json --resolve "$host:$port:127.0.0.1" \
    --rate "$1" -d "${rate_secs}s" "${grained[@]}" "${pin_extra[@]}" "$url_pin"
}
rss_pinprobe() {
  : >"$work/stdin"
  # -d bounds the run in time should -n not be reached; the CSV keeps the count actually sent.
  measure rss "n$1" pinprobe "" "$1" "$pin_bin" -q --no-preflight --format json --resolve "$host:$port:$rss_addrs" \
    --rate max -n "$1" -d 300s "${pin_extra[@]}" "$url_pin"
}

# rotate K WORD...: the words, starting at index K mod count.
rotate() {
  local k=$1
  shift
  local n=$# i
  local a=("$@")
  for ((i = 0; i < n; i++)); do printf '%s ' "${a[(i + k) % n]}"; done
}

# ------------------------------------------------------------------------- the run
busy=$(python3 "$lib" busy $((smoke ? 1 : 2)))
if awk -v b="$busy" 'BEGIN { exit !(b > 0.3) }'; then
  log "warning: before the first run the machine already keeps $busy cores busy: figures will be noisy"
fi
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
log "$rounds round(s) of [$sections]: sat ${sat_secs}s x 5 tools, rates [$rates] ${rate_secs}s x 5 tools, rss [$rss_counts]; CSV $csv"
for ((round = 1; round <= rounds; round++)); do
  log "round $round/$rounds"
  if [[ " $sections " == *" sat "* ]]; then
    for t in $(rotate $((round - 1)) wrk hey vegeta bombardier pinprobe); do "sat_$t"; done
  fi
  if [[ " $sections " == *" rate "* ]]; then
    for r in $rates; do
      for t in $(rotate $((round - 1)) hey vegeta bombardier pinprobe pinprobe_c0 pinprobe_b10); do "rate_$t" "$r"; done
    done
  fi
  if [[ " $sections " == *" rss "* ]]; then
    for n in $rss_counts; do rss_pinprobe "$n"; done
  fi
done
wall=$(($(date +%s) - t0))
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# ------------------------------------------------------------------------- report
gomod_version() { go version -m "$1" 2>/dev/null | awk '$1 == "mod" { print $3; exit }'; }
deb_version() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null || true; }
hey_version=$(deb_version hey)
if [[ $hey_bin == "$tools_bin/hey" ]]; then hey_version="$(gomod_version "$hey_bin") (go install)"; else hey_version="Debian $hey_version"; fi
cmdline="bash bench/bench.sh${orig_args[*]:+ ${orig_args[*]}}"
[[ -z ${PINPROBE_FLAGS:-} ]] || cmdline="PINPROBE_FLAGS='$PINPROBE_FLAGS' $cmdline"
{
  printf 'date\t%s\n' "$(date -u '+%Y-%m-%d %H:%M')"
  printf 'command\t\x60%s\x60\n' "$cmdline"
  printf 'nproc\t%s\n' "$(nproc)"
  printf 'cpu\t%s × %s\n' "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  printf 'kernel\t%s\n' "$(uname -sr)"
  printf 'go\t%s\n' "$(go version | sed 's/^go version //')"
  printf 'tools\tnginx %s (Debian %s), wrk Debian %s, hey %s, vegeta %s, bombardier %s\n' \
    "$("$nginx_bin" -v 2>&1 | sed 's|.*nginx/||')" "$(deb_version nginx)" "$(deb_version wrk)" "$hey_version" \
    "$(gomod_version "$vegeta_bin")" "$(gomod_version "$bombardier_bin")"
  printf 'pinprobe\t%s, commit %s%s; extra flags: %s; keep-alive flags: %s\n' \
    "$("$pin_bin" --version 2>&1 | head -n 1)" "$commit" "$dirty" "${PINPROBE_FLAGS:-none}" \
    "${keepalive[*]:-none (no --conn-requests flag)}"
  printf 'sections\t%s\n' "$sections"
  printf 'settings\t%s round(s); saturation %s s, %s connections; fixed rates %s req/s for %s s; memory runs %s requests\n' \
    "$rounds" "$sat_secs" "$CONNS" "$rates" "$rate_secs" "$rss_counts"
  printf 'load\tat start %s, at end %s (1, 5, 15 min); %s cores busy just before the first run\n' \
    "$load_start" "$load_end" "$busy"
  printf 'wall\t%d min %02d s\n' $((wall / 60)) $((wall % 60))
  printf 'smoke\t%s\n' "$smoke"
  if ((smoke)); then printf 'csv_rel\t%s\n' "$csv"; else printf 'csv_rel\t%s\n' "${csv#"$repo/"}"; fi
} >"${csv%.csv}.meta.tsv"
keep=()
[[ ! -f $md ]] || keep=(--keep "$md")
python3 "$lib" report "$csv" "${csv%.csv}.meta.tsv" "$md.tmp" "${keep[@]}"
mv "$md.tmp" "$md"
if ((smoke)); then
  cat "$md"
  log "smoke run passed: every tool's output parsed (${wall} s)"
else
  log "wrote $md, $csv and ${csv%.csv}.meta.tsv (${wall} s)"
fi
