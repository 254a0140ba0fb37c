#!/usr/bin/env python3
"""Helpers for bench/bench.sh: time a command, parse each tool's summary, write the tables.

    benchlib.py time TIMEFILE -- CMD...        run CMD (stdin/stdout/stderr inherited), write
                                               "user_s sys_s maxrss_kib wall_s exit" to TIMEFILE
    benchlib.py record CSV FIELD=VALUE... --tool T --output F --time TIMEFILE
                                               parse F as T's summary and append one CSV row;
                                               exit 1 with the reason when the summary doesn't parse
    benchlib.py report CSV META_TSV OUT_MD [--keep OLD_MD]
                                               medians per (section, scenario, tool), targets, Markdown
    benchlib.py busy [SECONDS]                 cores the machine keeps busy (from /proc/stat)

Standard library only. CPU time comes from wait4(2)'s rusage of the tool's own process
(user+sys, microsecond resolution), peak RSS from its ru_maxrss (KiB on Linux).
"""

import csv
import json
import math
import os
import re
import signal
import statistics
import sys
import time

# ---------------------------------------------------------------------------- time


_TICK = os.sysconf("SC_CLK_TCK")


def _machine_cpu():
    """Busy and steal CPU seconds of the whole machine so far (first line of /proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...; guest time is already in user
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / _TICK, (v[7] if len(v) > 7 else 0) / _TICK


def _proc_cpu(pid):
    """utime+stime seconds of process pid, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return None


def cmd_time(argv):
    watch = None
    if len(argv) >= 2 and argv[1] == "--watch":
        watch = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) < 3 or argv[1] != "--":
        die("usage: benchlib.py time TIMEFILE [--watch PID] -- CMD...")
    timefile, cmd = argv[0], argv[2:]
    busy0, steal0 = _machine_cpu()
    watch0 = _proc_cpu(watch) if watch else None
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            print(f"benchlib: exec {cmd[0]}: {e}", file=sys.stderr)
            os._exit(127)
    # Ctrl-C reaches the tool too (same process group): let it finish its report, then die of
    # SIGINT ourselves so that the calling shell sees the interrupt and runs its trap.
    interrupted = []
    signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    while True:
        try:
            _, status, ru = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    wall = time.monotonic() - start
    busy1, steal1 = _machine_cpu()
    watch1 = _proc_cpu(watch) if watch else None
    code = os.waitstatus_to_exitcode(status)
    # The server's CPU, and everything else the machine did meanwhile (other users' work: noise).
    server = watch1 - watch0 if watch0 is not None and watch1 is not None else 0.0
    other = max(0.0, busy1 - busy0 - ru.ru_utime - ru.ru_stime - server)
    with open(timefile, "w") as f:
        f.write(f"{ru.ru_utime:.6f} {ru.ru_stime:.6f} {ru.ru_maxrss} {wall:.6f} {code} "
                f"{server:.2f} {other:.2f} {steal1 - steal0:.2f}\n")
    if interrupted or code == -signal.SIGINT:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return code if code >= 0 else 128 - code


# ---------------------------------------------------------------------------- parsing


class ParseError(Exception):
    pass


_UNITS_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def _wrk_duration_ms(text):
    m = re.fullmatch(r"([0-9.]+)(ns|us|µs|ms|s|m|h)", text.strip())
    if not m:
        raise ParseError(f"wrk latency {text!r}")
    return float(m.group(1)) * _UNITS_S[m.group(2)] * 1e3


def _find(pattern, text, what):
    m = re.search(pattern, text, re.MULTILINE)
    if not m:
        raise ParseError(f"no {what} (pattern {pattern!r})")
    return m


def parse_wrk(text):
    req = int(_find(r"^\s*(\d+) requests in ([0-9.]+)(\w+)", text, "'N requests in'").group(1))
    rate = float(_find(r"^Requests/sec:\s*([0-9.]+)", text, "Requests/sec").group(1))
    p50 = _wrk_duration_ms(_find(r"^\s*50%\s+(\S+)", text, "50% latency (--latency)").group(1))
    p99 = _wrk_duration_ms(_find(r"^\s*99%\s+(\S+)", text, "99% latency (--latency)").group(1))
    errors = 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        errors += sum(int(x) for x in m.groups())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        errors += int(m.group(1))
    return dict(requests=req, errors=errors, rate=rate, p50_ms=p50, p99_ms=p99)


def parse_hey(text):
    rate = float(_find(r"^\s*Requests/sec:\s*([0-9.]+)", text, "Requests/sec").group(1))
    status = re.findall(r"^\s*\[(\d{3})\]\s+(\d+) responses", text, re.MULTILINE)
    ok = sum(int(n) for code, n in status if code.startswith("2"))
    other = sum(int(n) for code, n in status if not code.startswith("2"))
    errors = other
    m = re.search(r"^Error distribution:\n((?:\s+\[\d+\].*\n?)*)", text, re.MULTILINE)
    if m:
        errors += sum(int(n) for n in re.findall(r"^\s+\[(\d+)\]", m.group(1), re.MULTILINE))
    p50 = float(_find(r"^\s*50% in ([0-9.]+) secs", text, "50% latency").group(1)) * 1e3
    p99 = float(_find(r"^\s*99% in ([0-9.]+) secs", text, "99% latency").group(1)) * 1e3
    if ok + errors == 0:
        raise ParseError("no status code or error counts")
    return dict(requests=ok + errors, errors=errors, rate=rate, p50_ms=p50, p99_ms=p99)


def parse_vegeta(text):
    try:
        d = json.loads(text)
        req = int(d["requests"])
        codes = d.get("status_codes") or {}
        ok = sum(int(n) for c, n in codes.items() if str(c).startswith("2"))
        lat = d["latencies"]
        return dict(requests=req, errors=req - ok, rate=float(d["rate"]),
                    p50_ms=float(lat["50th"]) / 1e6, p99_ms=float(lat["99th"]) / 1e6)
    except (ValueError, KeyError, TypeError) as e:
        raise ParseError(f"vegeta report -type=json: {e!r}") from None


def parse_bombardier(text):
    try:
        r = json.loads(text)["result"]
        req = sum(int(r[k]) for k in ("req1xx", "req2xx", "req3xx", "req4xx", "req5xx", "others"))
        took = float(r["timeTakenSeconds"])
        pct = r["latency"]["percentiles"]
        return dict(requests=req, errors=req - int(r["req2xx"]), rate=req / took,
                    p50_ms=float(pct["50"]) / 1e3, p99_ms=float(pct["99"]) / 1e3)
    except (ValueError, KeyError, TypeError, ZeroDivisionError) as e:
        raise ParseError(f"bombardier -o json -p r: {e!r}") from None


def parse_pinprobe(text):
    try:
        d = json.loads(text)
        t = d["totals"]
        req = int(t["requests"])
        send = float(d["send_s"])
        return dict(requests=req, errors=int(t["failed"]), dropped=int(t["dropped"]),
                    rate=req / send, p50_ms=float(t["latency_ms"]["p50"]),
                    p99_ms=float(t["latency_ms"]["p99"]))
    except (ValueError, KeyError, TypeError, ZeroDivisionError) as e:
        raise ParseError(f"pinprobe --format json: {e!r}") from None


PARSERS = dict(wrk=parse_wrk, hey=parse_hey, vegeta=parse_vegeta, bombardier=parse_bombardier,
               pinprobe=parse_pinprobe)
PARSERS["pinprobe-c0"] = parse_pinprobe  # the rate scenario with --conn-requests 0
PARSERS["pinprobe-b10"] = parse_pinprobe  # the rate scenario paced as bombardier: --pace-grain 10ms -c 50

FIELDS = ["run_id", "round", "section", "scenario", "tool", "plan_rate", "plan_requests",
          "requests", "errors", "dropped", "rate", "p50_ms", "p99_ms", "user_s", "sys_s",
          "cpu_us_per_req", "maxrss_kib", "wall_s", "exit", "load1", "server_cpu_s", "other_cpu_s", "steal_s",
          "command"]


def cmd_record(argv):
    opts, fields = {}, {}
    it = iter(argv)
    csv_path = next(it, None)
    for a in it:
        if a in ("--tool", "--output", "--time"):
            opts[a[2:]] = next(it)
        elif "=" in a:
            k, v = a.split("=", 1)
            fields[k] = v
        else:
            die(f"record: unexpected argument {a!r}")
    tool, out = opts["tool"], opts["output"]
    text = ""
    try:
        with open(out, errors="replace") as f:
            text = f.read()
        user, sys_s, rss, wall, code, *extra = open(opts["time"]).read().split()
        server_s, other_s, steal_s = (extra + ["", "", ""])[:3]
        parsed = PARSERS[tool](text)
        for k in ("requests", "rate", "p50_ms", "p99_ms"):
            v = parsed[k]
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ParseError(f"{k} = {v!r}")
        if parsed["requests"] <= 0:
            raise ParseError("0 requests")
        if int(code) != 0:
            raise ParseError(f"exit status {code}")
    except (ParseError, OSError, ValueError) as e:
        print(f"\nbench: PARSE ERROR for {tool} ({fields.get('section')} {fields.get('scenario')}): {e}\n"
              f"--- {out} (first 3000 bytes) ---\n{text[:3000]}\n---",
              file=sys.stderr)
        return 1
    row = dict(fields)
    row.update(tool=tool, requests=parsed["requests"], errors=parsed["errors"],
               dropped=parsed.get("dropped", ""), rate=f"{parsed['rate']:.3f}",
               p50_ms=f"{parsed['p50_ms']:.4f}", p99_ms=f"{parsed['p99_ms']:.4f}",
               user_s=user, sys_s=sys_s,
               cpu_us_per_req=f"{(float(user) + float(sys_s)) / parsed['requests'] * 1e6:.3f}",
               maxrss_kib=rss, wall_s=wall, exit=code, server_cpu_s=server_s, other_cpu_s=other_s,
               steal_s=steal_s)
    new = not os.path.exists(csv_path) or os.path.getsize(csv_path) == 0
    with open(csv_path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            w.writeheader()
        w.writerow({k: row.get(k, "") for k in FIELDS})
    rss_mib = int(rss) / 1024
    print(f"{time.strftime('%H:%M:%S', time.gmtime())} bench:   {tool:<10} {fields.get('section', '')} "
          f"{fields.get('scenario', ''):<8} {parsed['rate']:9.0f} req/s {float(row['cpu_us_per_req']):7.1f} µs CPU/req "
          f" p99 {parsed['p99_ms']:8.3f} ms  RSS {rss_mib:6.1f} MiB  ({parsed['requests']} requests, "
          f"{parsed['errors']} errors{', %s dropped' % parsed['dropped'] if 'dropped' in parsed else ''})",
          file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------- report

PROFILE_BEGIN = "<!-- BEGIN lead: what the profile says (bench/bench.sh keeps this section on a re-run) -->"
PROFILE_END = "<!-- END lead: what the profile says -->"
PROFILE_PLACEHOLDER = ("_To be filled in by the lead: where pinprobe's CPU goes at saturation and at 2,000 req/s "
                       "(`go tool pprof`), and why the targets above are or are not met._")

# bench/scale.sh writes its section between these markers; a re-run of bench.sh keeps it.
SCALE_BEGIN = "<!-- BEGIN scale: written by bench/scale.sh (bench/bench.sh keeps this section on a re-run) -->"
SCALE_END = "<!-- END scale -->"
LOGS_BEGIN = "<!-- BEGIN logs: written by hand from bench/logs.sh (bench/bench.sh keeps this section on a re-run) -->"
LOGS_END = "<!-- END logs -->"
WATCH_BEGIN = "<!-- BEGIN watch: written by hand (bench/bench.sh keeps this section on a re-run) -->"
WATCH_END = "<!-- END watch -->"
# Sections other scripts or people wrote, kept as they are on a re-run.
KEPT_BLOCKS = [(SCALE_BEGIN, SCALE_END), (LOGS_BEGIN, LOGS_END), (WATCH_BEGIN, WATCH_END)]

TOOLS = ["wrk", "hey", "vegeta", "bombardier", "pinprobe", "pinprobe-c0", "pinprobe-b10"]
# pinprobe's variants in the rate scenario: its default connection sampling (--conn-requests auto), and
# --conn-requests 0, each connection kept for the whole run like the peers' (like with like).
PIN_RATE = [("pinprobe", "default connection sampling"), ("pinprobe-c0", "--conn-requests 0"),
            ("pinprobe-b10", "bombardier's pacing: --pace-grain 10ms -c 50 --conn-requests 0")]
MIB = 1024.0


def _num(v):
    return float(v) if v not in ("", None) else None


def _fmt_int(v):
    return "–" if v is None else f"{v:,.0f}"


def _fmt(v, digits=1):
    return "–" if v is None else f"{v:,.{digits}f}"


def _ms(v):
    if v is None:
        return "–"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def _med(rows, key):
    vals = [_num(r[key]) for r in rows if _num(r[key]) is not None]
    return statistics.median(vals) if vals else None


def _share(rows, key):
    """Median over rows of key ÷ wall_s (a CPU time as cores in use), or None when not recorded."""
    vals = [float(r[key]) / float(r["wall_s"]) for r in rows
            if r.get(key) not in ("", None) and float(r["wall_s"]) > 0]
    return statistics.median(vals) if vals else None


def _other_cores(rows):
    return [float(r["other_cpu_s"]) / float(r["wall_s"]) for r in rows
            if r.get("other_cpu_s") not in ("", None) and float(r["wall_s"]) > 0]


def _pct(v):
    return "–" if v is None else f"{v * 100:.0f}%"


def read_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            if "\t" in line:
                k, v = line.rstrip("\n").split("\t", 1)
                meta[k] = v
    return meta


def _keep_profile(old_md):
    return _keep_block(old_md, PROFILE_BEGIN, PROFILE_END)


def _keep_block(old_md, begin, end):
    """The text of old_md between the markers begin and end, or None."""
    try:
        text = open(old_md).read()
    except OSError:
        return None
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        return None
    return text[i + len(begin):j].strip("\n")


def cmd_report(argv):
    if len(argv) < 3:
        die("usage: benchlib.py report CSV META OUT_MD [--keep OLD_MD]")
    csv_path, meta_path, out_md = argv[:3]
    keep = argv[argv.index("--keep") + 1] if "--keep" in argv else None
    meta = read_meta(meta_path)
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        die(f"report: {csv_path} has no rows")
    groups = {}
    for r in rows:
        groups.setdefault((r["section"], r["scenario"], r["tool"]), []).append(r)

    def g(section, scenario, tool):
        return groups.get((section, scenario, tool), [])

    out = []
    w = out.append
    rounds = max(int(r["round"]) for r in rows)
    csv_rel = meta.get("csv_rel", csv_path)
    w("# Benchmarks")
    w("")
    w("<!-- Written by bench/bench.sh; a re-run rewrites everything except the section marked for the lead. -->")
    w("")
    w(f"pinprobe against wrk, hey, vegeta and bombardier on a loopback nginx (one worker, `access_log off`, "
      f"`return 200 \"ok\\n\"`), all in one run: {rounds} round(s), each running every tool once per scenario "
      f"(tools interleaved, the first tool rotated each round); "
      + (f"every figure is the **median of the {rounds} runs** unless it says otherwise." if rounds > 1
         else "every figure is from that **single run**.") +
      f" CPU is the load generator's own user+sys time; the server's is not counted. "
      f"Raw per-run numbers: [`{csv_rel}`]({csv_rel}).")
    w("")
    if meta.get("smoke") == "1":
        w("**Smoke run** (`--smoke`): every scenario once for about a second — it checks the procedure and the "
          "parsing, and its figures mean nothing.")
        w("")

    # -- machine
    w("## Machine and run")
    w("")
    w("| | |")
    w("|---|---|")
    for key, label in (("date", "date (UTC)"), ("command", "command"), ("cpu", "CPU"), ("kernel", "kernel"),
                       ("go", "Go"), ("tools", "tools"), ("pinprobe", "pinprobe"), ("settings", "settings"),
                       ("load", "load average"), ("wall", "wall time of the run")):
        if meta.get(key):
            w(f"| {label} | {meta[key]} |")
    loads = [_num(r["load1"]) for r in rows if _num(r.get("load1")) is not None]
    if loads:
        w(f"| 1-min load at run starts | median {statistics.median(loads):.2f}, max {max(loads):.2f} |")
    others = _other_cores(rows)
    busy_note = None
    if others:
        w(f"| other processes' CPU during the runs | median {statistics.median(others):.2f} cores, "
          f"max {max(others):.2f} (the whole machine's busy time less the generator's and nginx's) |")
        if statistics.median(others) > 0.25:
            busy_note = (f"**The machine was busy**: other processes used a median of "
                         f"{statistics.median(others):.2f} cores during the runs (of {meta.get('nproc', '?')}). "
                         f"Requests/s, latencies and how well a rate is held suffer most and vary between "
                         f"rounds; CPU per request (each tool's own CPU time) is the steadier figure.")
    elif loads and statistics.median(loads) > int(meta.get("nproc", "2")) + 1:
        busy_note = (f"**The machine was busy**: the median 1-min load at the start of a run was "
                     f"{statistics.median(loads):.1f} on {meta.get('nproc', '?')} cores (nginx and the generator "
                     f"account for about 2). Requests/s, latencies and how well a rate is held suffer most and vary "
                     f"between rounds; CPU per request (each tool's own CPU time) is the steadier figure.")
    w("")

    # -- targets
    sat = {t: g("sat", "c50", t) for t in TOOLS}
    sat_rps = {t: _med(v, "rate") for t, v in sat.items()}
    sat_cpu = {t: _med(v, "cpu_us_per_req") for t, v in sat.items()}
    targets = []

    def ratio_target(label, num, den, limit, higher_is_better, unit, nd=1):
        if num is None or den is None or den == 0:
            targets.append((label, "not measured", "–"))
            return
        r = num / den
        ok = r >= limit if higher_is_better else r <= limit
        targets.append((label, f"{_fmt(num, nd)} vs {_fmt(den, nd)} {unit} = **{r:.2f}×**", "yes" if ok else "**no**"))

    ratio_target("max req/s ≥ 1.8 × hey's (50 connections)", sat_rps["pinprobe"], sat_rps["hey"], 1.8, True,
                 "req/s", 0)
    ratio_target("max req/s ≥ 0.95 × bombardier's", sat_rps["pinprobe"], sat_rps["bombardier"], 0.95, True, "req/s",
                 0)
    ratio_target("CPU/request at saturation ≤ 1.1 × bombardier's", sat_cpu["pinprobe"], sat_cpu["bombardier"], 1.1,
                 False, "µs")
    for plan in (2000, 10000):
        for tool, how in PIN_RATE:
            ratio_target(f"CPU/request at {plan:,} req/s ≤ bombardier's ({how})",
                         _med(g("rate", f"r{plan}", tool), "cpu_us_per_req"),
                         _med(g("rate", f"r{plan}", "bombardier"), "cpu_us_per_req"), 1.0, False, "µs")
    for plan, (tool, how) in [(p, v) for p in (2000, 10000, 50000) for v in PIN_RATE]:
        runs = g("rate", f"r{plan}", tool)
        conc = "-c 50" if tool == "pinprobe-b10" else "default -c"
        label = f"achieved rate within ±0.5% of {plan:,} req/s, {conc}, 0 dropped ({how})"
        if not runs:
            targets.append((label, "not measured", "–"))
            continue
        devs = [float(r["rate"]) / plan - 1 for r in runs]
        worst = max(devs, key=abs)
        dropped = sum(int(r["dropped"] or 0) for r in runs)
        errors = sum(int(r["errors"] or 0) for r in runs)
        ok = all(abs(d) <= 0.005 for d in devs) and dropped == 0 and errors == 0
        targets.append((label, f"median {_fmt_int(_med(runs, 'rate'))} req/s, worst run {worst * 100:+.2f}%, "
                               f"{dropped:,} dropped, {errors:,} failed in {len(runs)} runs", "yes" if ok else "**no**"))
    rss_runs = [r for r in rows if r["section"] == "rss" and r["tool"] == "pinprobe"]
    if rss_runs:
        peak = max(float(r["maxrss_kib"]) for r in rss_runs) / MIB
        targets.append(("peak RSS ≤ 32 MiB (8 endpoints, all request counts)", f"largest run {peak:.1f} MiB",
                        "yes" if peak <= 32 else "**no**"))
        by_n = {}
        for r in rss_runs:
            by_n.setdefault(int(r["plan_requests"]), []).append(r)
        lo, hi = min(by_n), max(by_n)
        a, b = _med(by_n[lo], "maxrss_kib") / MIB, _med(by_n[hi], "maxrss_kib") / MIB
        targets.append((f"RSS flat from {lo:,} to {hi:,} requests (the median at {hi:,} within 10% of the one at "
                        f"{lo:,})", f"{a:.1f} → {b:.1f} MiB = **{b / a:.2f}×**", "yes" if b / a <= 1.10 else "**no**"))
    else:
        targets.append(("peak RSS ≤ 32 MiB and flat", "not measured", "–"))
    met = sum(1 for t in targets if t[2] == "yes")
    w("## Targets")
    w("")
    w(f"{met} of {len(targets)} met in this run (ratios within one run are what count; the machine is shared).")
    w("")
    if busy_note:
        w(busy_note)
        w("")
    w("| target | this run (medians) | met |")
    w("|---|---|---|")
    for t in targets:
        w(f"| {t[0]} | {t[1]} | {t[2]} |")
    w("")

    # -- saturation
    w("## Saturation: 50 connections, back to back")
    w("")
    w("nginx is one worker process, so it can use at most one core: near 100% there, the server and not the "
      "generator limits req/s. \"Others\" is the CPU that other processes on the machine used meanwhile.")
    w("")
    w("| tool | req/s | req/s each round | CPU µs/request | p50 ms | p99 ms | peak RSS MiB | errors | "
      "nginx core | others, cores | pinprobe ÷ tool: req/s, CPU/request |")
    w("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for t in TOOLS:
        runs = sat[t]
        if not runs:
            continue
        each = ", ".join(_fmt_int(float(r["rate"])) for r in sorted(runs, key=lambda r: int(r["round"])))
        ratio = "–"
        if t != "pinprobe" and sat_rps["pinprobe"] and sat_rps[t] and sat_cpu[t]:
            ratio = f"{sat_rps['pinprobe'] / sat_rps[t]:.2f}×, {sat_cpu['pinprobe'] / sat_cpu[t]:.2f}×"
        rss = _med(runs, "maxrss_kib")
        w(f"| {t} | {_fmt_int(sat_rps[t])} | {each} | {_fmt(sat_cpu[t])} | {_ms(_med(runs, 'p50_ms'))} | "
          f"{_ms(_med(runs, 'p99_ms'))} | {_fmt(rss / MIB if rss else None)} | "
          f"{sum(int(r['errors'] or 0) for r in runs):,} | {_pct(_share(runs, 'server_cpu_s'))} | "
          f"{_fmt(_share(runs, 'other_cpu_s'), 2)} | {ratio} |")
    w("")

    # -- fixed rate
    plans = sorted({int(float(r["plan_rate"])) for r in rows if r["section"] == "rate"})
    if plans:
        w("## Fixed rate")
        w("")
        w("Open-loop rate limits: vegeta `-rate`, bombardier `-r`, hey `-q` (per worker, × 50 workers), pinprobe "
          "`--rate` with its default `-c` (as many as the rate needs, by `--timeout`), as `pinprobe` with its default "
          "connection sampling (`--conn-requests` auto: about 32 connections over the run) and as `pinprobe-c0` with "
          "`--conn-requests 0` (each connection kept for the whole run, as the peers do), and as `pinprobe-b10` paced as "
          "bombardier paces, its token bucket filled every 10 ms (`--pace-grain 10ms -c 50 --conn-requests 0`: the "
          "requests due within each 10 ms sent together, on 50 connections). wrk has no rate limit "
          "(wrk2 is not in Debian). "
          "\"vs plan\" is the achieved rate as the tool reports it against the planned rate: the median run, "
          "and the run furthest from the plan.")
        w("")
        w("| plan req/s | tool | achieved req/s | vs plan (median; worst) | dropped | errors | CPU µs/request | "
          "p50 ms | p99 ms | peak RSS MiB |")
        w("|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|")
        for plan in plans:
            for t in TOOLS:
                runs = g("rate", f"r{plan}", t)
                if not runs:
                    continue
                devs = [float(r["rate"]) / plan - 1 for r in runs]
                worst = max(devs, key=abs)
                dropped = "–" if not t.startswith("pinprobe") else f"{sum(int(r['dropped'] or 0) for r in runs):,}"
                rss = _med(runs, "maxrss_kib")
                w(f"| {plan:,} | {t} | {_fmt_int(_med(runs, 'rate'))} | {statistics.median(devs) * 100:+.2f}%; "
                  f"{worst * 100:+.2f}% | {dropped} | {sum(int(r['errors'] or 0) for r in runs):,} | "
                  f"{_fmt(_med(runs, 'cpu_us_per_req'))} | {_ms(_med(runs, 'p50_ms'))} | "
                  f"{_ms(_med(runs, 'p99_ms'))} | {_fmt(rss / MIB if rss else None)} |")
        w("")

    # -- memory
    if rss_runs:
        w("## pinprobe memory: 8 endpoints")
        w("")
        w("One host name pinned to 127.0.0.2 … 127.0.0.9 (same nginx, same port), `--rate max`, default `-c` "
          "(10 per endpoint, 80 connections), stopped by `-n`. Peak RSS is the process's maximum resident set "
          "(`ru_maxrss`).")
        w("")
        w("| requests | peak RSS MiB | each round | req/s | CPU µs/request | wall s |")
        w("|--:|--:|--:|--:|--:|--:|")
        by_n = {}
        for r in rss_runs:
            by_n.setdefault(int(r["plan_requests"]), []).append(r)
        for n in sorted(by_n):
            runs = by_n[n]
            each = ", ".join(f"{float(r['maxrss_kib']) / MIB:.1f}" for r in sorted(runs, key=lambda r: int(r["round"])))
            w(f"| {n:,} | {_med(runs, 'maxrss_kib') / MIB:.1f} | {each} | {_fmt_int(_med(runs, 'rate'))} | "
              f"{_fmt(_med(runs, 'cpu_us_per_req'))} | {_fmt(_med(runs, 'wall_s'), 2)} |")
        w("")

    # -- commands
    for begin, end in KEPT_BLOCKS:
        block = _keep_block(keep, begin, end) if keep else None
        if block is not None:
            w(begin)
            w(block)
            w(end)
            w("")
    w("## Commands")
    w("")
    w("As run in round 1 (`PORT` is a free port picked at start; URLs are plain HTTP/1.1 on loopback):")
    w("")
    w("```text")
    seen = set()
    for r in rows:
        key = (r["section"], r["scenario"], r["tool"])
        if r["round"] != "1" or key in seen:
            continue
        seen.add(key)
        w(f"{r['section']:<4} {r['scenario']:<8} {r['command']}")
    w("```")
    w("")
    w("## How it is measured")
    w("")
    for line in HOW:
        w(line)
    w("")
    w("## What the profile says")
    w("")
    w(PROFILE_BEGIN)
    kept = _keep_profile(keep) if keep else None
    w(kept if kept is not None else PROFILE_PLACEHOLDER)
    w(PROFILE_END)
    w("")
    with open(out_md, "w") as f:
        f.write("\n".join(out))
    return 0


HOW = [
    "- **CPU per request**: user+sys CPU seconds of the generator's process (from `wait4(2)`'s rusage, by "
    "`bench/benchlib.py time`) divided by the requests the tool itself reports. It includes start-up and, for "
    "vegeta, encoding every result to its output file (that is how vegeta works).",
    "- **Requests and rate**, each tool's own figures: wrk `N requests in` and `Requests/sec`; hey the sum of its "
    "status-code and error counts and `Requests/sec` (responses ÷ total time); vegeta `report -type=json` "
    "`requests` and `rate` (requests ÷ span of the attack); bombardier `-o json -p r`: the sum of `req1xx`…`others` "
    "÷ `timeTakenSeconds`; pinprobe `--format json`: `totals.requests` ÷ `send_s`.",
    "- **p50/p99 latency** as each tool reports it: wrk `--latency`, hey's latency distribution (0.1 ms "
    "resolution), vegeta `50th`/`99th`, bombardier `-l` percentiles, pinprobe `totals.latency_ms` (HDR histogram).",
    "- **Peak RSS**: `ru_maxrss` of the generator's process.",
    "- **Errors**: non-2xx responses and transport errors; **dropped** (pinprobe only): requests that were due "
    "while all of an endpoint's `-c` slots were busy, so never sent.",
    "- Medians are taken per tool and scenario over the rounds; ratios are of medians from the same run.",
]


def die(msg):
    print(f"benchlib: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) < 2:
        die("usage: benchlib.py time|record|report|busy ...")
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "time":
        sys.exit(cmd_time(argv))
    if cmd == "busy":
        b0, _ = _machine_cpu()
        time.sleep(float(argv[0]) if argv else 2.0)
        b1, _ = _machine_cpu()
        print(f"{(b1 - b0) / (float(argv[0]) if argv else 2.0):.2f}")
        sys.exit(0)
    if cmd == "record":
        sys.exit(cmd_record(argv))
    if cmd == "report":
        sys.exit(cmd_report(argv))
    die(f"unknown command {cmd!r}")


if __name__ == "__main__":
    main()
