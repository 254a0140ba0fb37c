#!/usr/bin/env bash
# pinprobe's cost in the number of endpoints, against one loopback nginx.
#
#   bash bench/scale.sh [--smoke] [--rounds N] [options]      (bash bench/scale.sh --help)
#
# Builds pinprobe from this checkout (or takes PINPROBE_BIN), starts nginx (one worker, access_log off,
# `return 200 "ok\n"`) on 127.0.0.1-127.0.0.9 in its own process group in a temp dir, and stops it on any
# exit, Ctrl-C included. Then, each round:
#   scale  a targets file of N URLs (http://127.0.0.1:PORT/e/1 … /e/N, one endpoint each) for 2 s at a
#          fixed rate, the text report on stdout and the JSON saved (-o): peak RSS, CPU per request, and the seconds from the end of the load (the report's
#          ended_at) to the process's exit with its report written;
#   report `pinprobe report` of the saved run of the largest N: wall seconds and peak RSS;
#   flat   8 endpoints (one host pinned to 127.0.0.2-9), --rate max, 10^4 and 10^6 requests: peak RSS.
# Every run is bounded by -d and by `timeout`; nothing but loopback is ever addressed. The figures (medians
# of the rounds) replace the "Scale in endpoints" section of BENCHMARKS.md (bench/bench.sh keeps it).
set -euo pipefail

usage() {
  cat <<'EOF'
usage: bash bench/scale.sh [options]

  --smoke          one round, 100 and 1,000 endpoints, 10^4 and 10^5 requests; writes nothing into the repo
  --rounds N       rounds; each figure is the median of N runs (default 3)
  --sizes "N..."   endpoint counts (default "100 1000 10000")
  --flat "N..."    request counts of the 8-endpoint runs (default "10000 1000000")
  --out FILE       Markdown file whose "Scale in endpoints" section is replaced (default BENCHMARKS.md;
                   smoke: a temp file, printed)
  -h, --help       this text

Environment:
  PINPROBE_BIN     a pinprobe binary to measure instead of building this checkout
  PINPROBE_FLAGS   extra flags for every pinprobe run
EOF
}

smoke=0 rounds=3 sizes="100 1000 10000" flat="10000 1000000" out=""
while (($#)); do
  case $1 in
    --smoke) smoke=1 ;;
    --rounds) rounds=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --flat) flat=$2; shift ;;
    --out) out=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "scale: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if ((smoke)); then rounds=1 sizes="100 1000" flat="10000 100000"; fi
for v in "$rounds" $sizes $flat; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "scale: not a positive integer: $v" >&2; exit 2; }
done
for n in $sizes; do ((n <= 100000)) || { echo "scale: at most 100000 endpoints: $n" >&2; exit 2; }; done
for n in $flat; do ((n <= 10000000)) || { echo "scale: at most 10000000 requests: $n" >&2; exit 2; }; done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lib=$repo/bench/benchlib.py
log() { printf '%s scale: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
command -v python3 >/dev/null || { echo "scale: python3 is not on PATH" >&2; exit 1; }
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
[[ -x $nginx_bin ]] || { echo "scale: nginx is not installed (bash bench/bench.sh installs it)" >&2; exit 1; }
command -v setsid >/dev/null || { echo "scale: setsid (util-linux) is not installed" >&2; exit 1; }

# Every endpoint may hold a connection of its own: nginx and pinprobe each need a descriptor per endpoint.
largest=0
for n in $sizes; do ((n > largest)) && largest=$n; done
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if (($(ulimit -n) < largest + 1000)); then
  echo "scale: $largest endpoints need $((largest + 1000)) descriptors; ulimit -n is $(ulimit -n)" >&2
  exit 1
fi

# ------------------------------------------------------------------------- nginx
# shellcheck source=bench/nginx.sh
source "$repo/bench/nginx.sh"
bench_workdir scale
start_nginx scale "$((largest + 500))" "worker_rlimit_nofile $((largest + 1000));"
log "nginx (process group $nginx_pgid) on 127.0.0.1-9:$port"

# ------------------------------------------------------------------------- pinprobe
if [[ -n ${PINPROBE_BIN:-} ]]; then
  pin_bin=$PINPROBE_BIN
else
  command -v go >/dev/null || { echo "scale: go is not on PATH" >&2; exit 1; }
  log "go build pinprobe"
  (cd "$repo" && go build -o "$work/pinprobe" .)
  pin_bin=$work/pinprobe
fi
read -r -a pin_extra <<<"${PINPROBE_FLAGS:-}"
commit=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[[ -z $(git -C "$repo" status --porcelain --untracked-files=no -- . ':!bench' ':!BENCHMARKS.md' 2>/dev/null) ]] ||
  commit+="-dirty"
[[ -z ${PINPROBE_BIN:-} ]] || commit="PINPROBE_BIN=$PINPROBE_BIN"
csv=$work/scale.csv
echo "round,kind,n,rate,requests,endpoints,user_s,sys_s,maxrss_kib,wall_s,exit,after_load_s" >"$csv"

# rate N: the fixed rate of the N-endpoint run (the issue's: 1,000 req/s, 2,000 from 10,000 endpoints).
rate_for() { if (($1 >= 10000)); then echo 2000; else echo 1000; fi; }

# timed KIND N RATE CMD...: runs CMD (stdout to $work/out) under the rusage wrapper and `timeout`, and
# appends a CSV row; after_load_s is the exit time less the report's ended_at (scale runs only).
timed() {
  local kind=$1 n=$2 rate=$3 rc=0
  shift 3
  python3 "$lib" time "$work/time" -- timeout -s INT -k 10 600 "$@" <"$work/stdin" >"$work/out" 2>"$work/err" || rc=$?
  local end
  end=$(date +%s.%N)
  if ((rc >= 128)) && ((rc != 130)); then log "$kind $n: ended by signal $((rc - 128))"; fi
  if ((rc > 1)); then
    head -c 2000 "$work/err" >&2
    echo "scale: $kind $n: exit status $rc" >&2
    exit 1
  fi
  python3 - "$csv" "$round" "$kind" "$n" "$rate" "$work/time" "$work/out" "$end" "$work/saved.json" \
    "$work/saved-$n.json" <<'PY'
import csv, datetime, json, sys
path, rnd, kind, n, rate, timefile, outfile, end, saved, saved_n = sys.argv[1:]
user, sys_s, rss, wall, code = open(timefile).read().split()[:5]
requests = endpoints = after = ""
if kind in ("scale", "flat"):
    d = json.load(open(saved_n if kind == "scale" else outfile))
    requests, endpoints = d["totals"]["requests"], len(d["endpoints"])
    if kind == "scale":
        ended = datetime.datetime.fromisoformat(d["ended_at"].replace("Z", "+00:00")).timestamp()
        after = f"{float(end) - ended:.3f}"
elif kind == "report":
    d = json.load(open(saved))
    requests, endpoints = d["totals"]["requests"], len(d["endpoints"])
with open(path, "a", newline="") as f:
    csv.writer(f).writerow([rnd, kind, n, rate, requests, endpoints, user, sys_s, rss, wall, code, after])
PY
}

: >"$work/stdin"
busy=$(python3 "$lib" busy 2)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
log "$rounds round(s): endpoints [$sizes] for 2 s, report of the largest, 8 endpoints at [$flat] requests"
for ((round = 1; round <= rounds; round++)); do
  for n in $sizes; do
    awk -v n="$n" -v p="$port" 'BEGIN { for (i = 1; i <= n; i++) printf "http://127.0.0.1:%d/e/%d\n", p, i }' \
      >"$work/targets.txt"
    r=$(rate_for "$n")
    log "round $round/$rounds: $n endpoints at $r req/s"
    timed scale "$n" "$r" "$pin_bin" -q --no-preflight --targets "$work/targets.txt" -r "$r" -d 2s \
      -o "$work/saved-$n.json" "${pin_extra[@]}"
  done
  log "round $round/$rounds: report of the $largest-endpoint run"
  cp "$work/saved-$largest.json" "$work/saved.json"
  timed report "$largest" "" "$pin_bin" report "$work/saved.json"
  for n in $flat; do
    log "round $round/$rounds: 8 endpoints, $n requests"
    timed flat "$n" "" "$pin_bin" -q --no-preflight --format json \
      --resolve "scale.test:$port:127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8,127.0.0.9" \
      --rate max -n "$n" -d 300s "${pin_extra[@]}" "http://scale.test:$port/"
  done
done
wall=$(($(date +%s) - t0))
cp "$csv" "$work/keep.csv"

# ------------------------------------------------------------------------- report
if ((smoke)); then md=${out:-$work/BENCHMARKS.md}; else md=${out:-$repo/BENCHMARKS.md}; fi
[[ -f $md ]] || printf '# Benchmarks\n' >"$md"
python3 - "$csv" "$md" "$rounds" "$commit" "$(date -u '+%Y-%m-%d %H:%M')" "$wall" \
  "$(nproc) × $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" \
  "at the start $load_start, at the end $(cut -d' ' -f1-3 /proc/loadavg); $busy cores busy just before the first run" \
  "${PINPROBE_FLAGS:-none}" <<'PY'
import csv, statistics, sys
path, md, rounds, commit, date, wall, cpu, load, flags = sys.argv[1:]
rows = list(csv.DictReader(open(path)))
BEGIN = "<!-- BEGIN scale: written by bench/scale.sh (bench/bench.sh keeps this section on a re-run) -->"
END = "<!-- END scale -->"

def med(kind, n, key, f=float):
    v = [f(r[key]) for r in rows if r["kind"] == kind and r["n"] == str(n) and r[key] != ""]
    return statistics.median(v) if v else None

def each(kind, n, key, fmt):
    return ", ".join(fmt(float(r[key])) for r in rows if r["kind"] == kind and r["n"] == str(n))

mib = lambda kib: kib / 1024
NOTES_BEGIN = "<!-- BEGIN lead: what the profile says at scale (bench/scale.sh keeps this on a re-run) -->"
NOTES_END = "<!-- END lead: what the profile says at scale -->"
text = open(md).read()
i, j = text.find(NOTES_BEGIN), text.find(NOTES_END)
notes = text[i + len(NOTES_BEGIN):j].strip("\n") if 0 <= i < j else (
    "_To be filled in: where the memory and the time go (`go tool pprof`) for each target not met._")
out = [BEGIN, "## Scale in endpoints", ""]
out.append(f"`bash bench/scale.sh` ({rounds} round(s), {date} UTC, {cpu}, pinprobe commit {commit}, extra flags: "
           f"{flags}; {int(wall) // 60} min {int(wall) % 60:02d} s; load average {load}). A targets file of "
           "N URLs on one loopback nginx (`http://127.0.0.1:PORT/e/1` … `/e/N`, one endpoint each), "
           "`--targets FILE -r RATE -d 2s --no-preflight -o saved.json` (the text report on stdout, the JSON "
           "saved); figures are medians of the rounds. *After the load* is the seconds from the report's `ended_at` "
           "to the process's exit, its report printed and saved. CPU per request is the process's whole user+sys time (start-up, DNS-free "
           "target parsing and the report included) over the requests sent.")
out.append("")
out.append("| endpoints | rate req/s | requests | peak RSS MiB | each round | CPU µs/request | after the load s | each round |")
out.append("|--:|--:|--:|--:|--:|--:|--:|--:|")
sizes = sorted({int(r["n"]) for r in rows if r["kind"] == "scale"})
for n in sizes:
    rss = med("scale", n, "maxrss_kib")
    cpu_req = statistics.median(
        [(float(r["user_s"]) + float(r["sys_s"])) / max(int(r["requests"]), 1) * 1e6
         for r in rows if r["kind"] == "scale" and r["n"] == str(n)])
    out.append(f"| {n:,} | {int(med('scale', n, 'rate')):,} | {int(med('scale', n, 'requests')):,} | {mib(rss):.1f} | "
               f"{each('scale', n, 'maxrss_kib', lambda v: f'{v / 1024:.1f}')} | {cpu_req:,.0f} | "
               f"{med('scale', n, 'after_load_s'):.2f} | {each('scale', n, 'after_load_s', lambda v: f'{v:.2f}')} |")
largest = max(sizes)
rep_wall, rep_rss = med("report", largest, "wall_s"), med("report", largest, "maxrss_kib")
rep_cpu = statistics.median([float(r["user_s"]) + float(r["sys_s"]) for r in rows if r["kind"] == "report"])
out.append("")
out.append(f"`pinprobe report saved.json` (text) of the saved {largest:,}-endpoint run: **{rep_wall:.2f} s** "
           f"(each round {each('report', largest, 'wall_s', lambda v: f'{v:.2f}')}), {rep_cpu:.2f} s of CPU, peak RSS {mib(rep_rss):.1f} MiB.")
out.append("")
flat = sorted({int(r["n"]) for r in rows if r["kind"] == "flat"})
out.append("8 endpoints (one host pinned to 127.0.0.2 … 127.0.0.9), `--rate max -n N`:")
out.append("")
out.append("| requests | peak RSS MiB | each round |")
out.append("|--:|--:|--:|")
for n in flat:
    out.append(f"| {n:,} | {mib(med('flat', n, 'maxrss_kib')):.1f} | {each('flat', n, 'maxrss_kib', lambda v: f'{v / 1024:.1f}')} |")
out.append("")
targets = []
def target(label, value, ok):
    targets.append(f"| {label} | {value} | {'yes' if ok else '**no**'} |")
for n, limit in ((1000, 48), (10000, 300)):
    if n in sizes:
        v = mib(med("scale", n, "maxrss_kib"))
        target(f"peak RSS ≤ {limit} MB at {n:,} endpoints", f"{v:.1f} MiB", v * 1.048576 <= limit)
if 10000 in sizes:
    v = med("scale", 10000, "after_load_s")
    target("the report within 2 s of the end of the load at 10,000 endpoints", f"{v:.2f} s", v <= 2)
    target("`report` of a saved 10,000-endpoint run within 2 s", f"{rep_wall:.2f} s", rep_wall <= 2)
if len(flat) >= 2:
    a, b = med("flat", flat[0], "maxrss_kib"), med("flat", flat[-1], "maxrss_kib")
    target(f"RSS at {flat[-1]:,} requests within 1.1× of that at {flat[0]:,} (8 endpoints)",
           f"{mib(a):.1f} → {mib(b):.1f} MiB = **{b / a:.2f}×**", b / a <= 1.1)
out.append(f"{sum('yes |' in t for t in targets)} of {len(targets)} scale targets met in this run:")
out.append("")
out.append("| target | this run (medians) | met |")
out.append("|---|---|---|")
out += targets
out += ["", "What the profile says:", "", NOTES_BEGIN, notes, NOTES_END, END]
block = "\n".join(out)
i, j = text.find(BEGIN), text.find(END)
if i >= 0 and j > i:
    text = text[:i] + block + text[j + len(END):]
else:
    k = text.find("## Commands")
    text = text[:k] + block + "\n\n" + text[k:] if k >= 0 else text.rstrip("\n") + "\n\n" + block + "\n"
open(md, "w").write(text)
PY
if ((smoke)); then
  sed -n '/BEGIN scale/,/END scale/p' "$md"
  log "smoke run passed ($wall s)"
else
  cp "$work/keep.csv" "$repo/bench/results/scale-$(date -u +%Y%m%d-%H%M%S)-${commit//[^A-Za-z0-9-]/_}.csv"
  log "wrote the scale section of $md ($wall s)"
fi
