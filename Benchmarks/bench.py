#!/usr/bin/env python3
"""Measurements for Benchmarks/run (see Benchmarks/README.md). Python is only glue here.

  bench.py peers  --fixture DIR --work DIR --fs DIR --plain-port P --delay-port Q --provision BIN
                  [--reps N] [--quick] [--download-tiles BIN] --json FILE
  bench.py plans  --work DIR --fs DIR --cache DIR --provision BIN [--quick] --json FILE
  bench.py scale  --work DIR --fs DIR --cache DIR --provision BIN --fixture DIR [--h2-port P --h1s-port P --h2-ca PEM]
                  [--quick] [--https-only] --json FILE
  bench.py search --work DIR --fs DIR --cache DIR --provision BIN [--quick] --json FILE
  bench.py report PART.json... --json FILE   (prints the tables, writes the merged JSON)

Every tool runs as a child whose user+sys CPU time and peak RSS come from wait4(2); every tool
writes into a fresh directory of the same file system (--fs), emptied and synced between runs.
"""
import argparse
import json
import math
import os
import platform
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time

CASES = [  # id, label, server, connections
    ("plain16", "no latency, 16 conns", "plain", 16),
    ("delay16", "+20 ms, 16 conns", "delay", 16),
    ("delay64", "+20 ms, 64 conns", "delay", 64),
]
TOOLS = ["wrk", "curl", "aria2c", "download-tiles", "provision"]
TOOL_LABELS = {
    "wrk": "wrk (ceiling, writes nothing)",
    "curl": "curl --parallel (plain files)",
    "aria2c": "aria2c -i -j N (plain files)",
    "download-tiles": "download-tiles (Python, MBTiles)",
    "provision": "provision apply (offline.db)",
}


def log(message):
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- running children ----------------------------------------------------------------------

GNU_TIME = "/usr/bin/time"
CURRENT = []  # process group ids of the children running now


def stop_children(signum, _frame):
    for pid in list(CURRENT):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    raise SystemExit(128 + signum)


signal.signal(signal.SIGTERM, stop_children)
signal.signal(signal.SIGINT, stop_children)


def run_measured(cmd, *, cwd=None, env=None, timeout=600, stdout_path=None, stderr_path=None):
    """Runs cmd, returning wall seconds, user/sys CPU seconds, peak RSS (MB) and exit status."""
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    err = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    # GNU time reports the child's own rusage: wait4 here would also count the RSS the child
    # inherited from this (larger) Python process before it exec'd.
    usage_file = None
    if os.access(GNU_TIME, os.X_OK):
        usage_file = f"/tmp/bench-usage-{os.getpid()}.txt"
        cmd = [GNU_TIME, "-f", "%U %S %M", "-o", usage_file, "--"] + list(cmd)
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err, start_new_session=True)
    CURRENT.append(proc.pid)
    timed_out = []

    def kill():
        timed_out.append(True)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
        CURRENT.remove(proc.pid)
        for f in (out, err):
            if f is not subprocess.DEVNULL:
                f.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    user, system, rss_kb = usage.ru_utime, usage.ru_stime, usage.ru_maxrss
    if usage_file:
        try:
            with open(usage_file) as f:
                fields = f.read().split()
            os.remove(usage_file)
            # the last line holds the numbers (GNU time may print "Command exited with ..." first)
            user, system, rss_kb = float(fields[-3]), float(fields[-2]), int(fields[-1])
        except (OSError, ValueError, IndexError):
            pass
    return {
        "wall": wall, "user": user, "sys": system, "cpu": user + system, "rssMB": rss_kb / 1024.0,
        "rc": proc.returncode, "timedOut": bool(timed_out),
    }


def fresh_dir(path):
    if os.path.exists(path):
        shutil.rmtree(path)
    os.makedirs(path)
    os.sync()


def count_files(root):
    n, size = 0, 0
    for dirpath, _, files in os.walk(root):
        for name in files:
            n += 1
            size += os.path.getsize(os.path.join(dirpath, name))
    return n, size


def tail(path, lines=5):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:]).strip()
    except OSError:
        return ""


# --- the peer tools -------------------------------------------------------------------------

class Peers:
    def __init__(self, args):
        self.args = args
        with open(os.path.join(args.fixture, "fixture.json")) as f:
            self.fixture = json.load(f)
        with open(os.path.join(args.fixture, "paths.txt")) as f:
            self.paths = [line.strip() for line in f if line.strip()]
        self.work = args.work
        self.fs = args.fs
        self.ports = {"plain": args.plain_port, "delay": args.delay_port}
        os.makedirs(self.work, exist_ok=True)
        self._lists = {}

    def base(self, server):
        return f"http://127.0.0.1:{self.ports[server]}"

    def out_dir(self, tool):
        return os.path.join(self.fs, f"out-{tool}")

    def logs(self, tool, case, rep):
        stem = os.path.join(self.work, "logs", f"{tool}-{case}-{rep}")
        os.makedirs(os.path.dirname(stem), exist_ok=True)
        return stem + ".out", stem + ".err"

    def subset(self, tool, case):
        """The paths a tool fetches in a case: all of them, except for the two slow peers, which
        fetch z10-13 (a quarter; download-tiles, sequential, only z10-12 under latency) so that the
        whole run stays within its time box. Rates are steady long before that many tiles."""
        limit = {"aria2c": 13, "download-tiles": 13 if case == "plain16" else 12}.get(tool)
        if limit is None:
            return self.paths
        return [p for p in self.paths if int(p.split("/")[2]) <= limit]

    # Each runner returns (measurement, tiles fetched and verified, note).

    def run_wrk(self, case, server, conns, rep):
        seconds = 3 if self.args.quick else 6
        out, err = self.logs("wrk", case, rep)
        env = dict(os.environ, WRK_PATHS=os.path.join(self.args.fixture, "paths.txt"))
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wrk_paths.lua")
        m = run_measured(["wrk", "-t2", f"-c{conns}", f"-d{seconds}s", "-s", script, self.base(server)],
                         env=env, stdout_path=out, stderr_path=err, timeout=seconds + 30)
        text = open(out).read()
        requests = 0
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "requests" and parts[2] == "in":
                requests = int(parts[0])
            if "Non-2xx" in line:
                return m, 0, "non-2xx responses: " + line.strip()
        # wrk's own duration excludes its start-up; rate = requests / measured seconds
        for line in text.splitlines():
            if line.startswith("Requests/sec:"):
                rate = float(line.split()[1])
                if rate > 0:
                    m["wall"] = requests / rate
        return m, requests, ""

    def url_list(self, tool, case, server):
        key = (tool, case)
        if key in self._lists:
            return self._lists[key]
        paths = self.subset(tool, case)
        base = self.base(server)
        out = self.out_dir(tool)
        path = os.path.join(self.work, f"{tool}-{case}.list")
        with open(path, "w") as f:
            for p in paths:
                rel = p[len("/tiles/"):]
                if tool == "curl":
                    f.write(f'url = "{base}{p}"\noutput = "{out}/{rel}"\n')
                else:
                    f.write(f"{base}{p}\n  out={rel}\n")
        self._lists[key] = (path, len(paths))
        return self._lists[key]

    def run_curl(self, case, server, conns, rep):
        listing, expected = self.url_list("curl", case, server)
        out_dir = self.out_dir("curl")
        fresh_dir(out_dir)
        out, err = self.logs("curl", case, rep)
        m = run_measured(["curl", "-sS", "--fail", "--parallel", "--parallel-immediate", "--parallel-max", str(conns),
                          "--create-dirs", "-K", listing], stdout_path=out, stderr_path=err)
        got, _ = count_files(out_dir)
        note = "" if m["rc"] == 0 and got == expected else f"rc {m['rc']}, {got}/{expected} files: {tail(err)}"
        return m, got if not note else 0, note

    def run_aria2c(self, case, server, conns, rep):
        listing, expected = self.url_list("aria2c", case, server)
        out_dir = self.out_dir("aria2c")
        fresh_dir(out_dir)
        out, err = self.logs("aria2c", case, rep)
        m = run_measured(["aria2c", "-q", "-i", listing, "-d", out_dir, "-j", str(conns), "-x1", "-s1",
                          "--file-allocation=none", "--auto-file-renaming=false", "--allow-overwrite=true",
                          "--console-log-level=error", "--summary-interval=0", "--download-result=hide",
                          "--max-tries=3", "--retry-wait=1"],
                         stdout_path=out, stderr_path=err)
        got, _ = count_files(out_dir)
        note = "" if m["rc"] == 0 and got == expected else f"rc {m['rc']}, {got}/{expected} files: {tail(err)}"
        return m, got if m["rc"] == 0 and got == expected else 0, note

    def run_download_tiles(self, case, server, conns, rep):
        exe = self.args.download_tiles
        paths = self.subset("download-tiles", case)
        maxzoom = max(int(p.split("/")[2]) for p in paths)
        out_dir = self.out_dir("download-tiles")
        fresh_dir(out_dir)
        target = os.path.join(out_dir, "tiles.mbtiles")
        out, err = self.logs("download-tiles", case, rep)
        b = self.fixture["bbox"]
        env = dict(os.environ, TMPDIR=out_dir, HOME=out_dir)
        m = run_measured([exe, target, "--zoom-levels", f"{self.fixture['minzoom']}-{maxzoom}",
                          "--bbox", ",".join(repr(v) for v in b),
                          "--tiles-url", self.base(server) + "/tiles/{z}/{x}/{y}.pbf",
                          "--cache-dir", os.path.join(out_dir, "cache")],
                         env=env, stdout_path=out, stderr_path=err, timeout=900)
        got = 0
        if os.path.exists(target):
            with sqlite3.connect(target) as db:
                got = db.execute("SELECT count(*) FROM tiles").fetchone()[0]
        note = "" if m["rc"] == 0 and got > 0 else f"rc {m['rc']}: {tail(err)}"
        if not note:
            note = "sequential (no concurrency setting)"
            if got != len(paths):
                note += f"; its cover holds {got} tiles where provision's holds {len(paths)}"
            if len(paths) != len(self.paths):
                note += f"; z{self.fixture['minzoom']}-{maxzoom} only"
        return m, got if m["rc"] == 0 else 0, note

    def write_docs(self, server):
        port = self.ports[server]
        docs = os.path.join(self.work, f"docs-{port}")
        os.makedirs(docs, exist_ok=True)
        base = self.base(server)
        f = self.fixture
        tilejson = {"tilejson": "3.0.0", "name": "bench", "tiles": [base + "/tiles/{z}/{x}/{y}.pbf"],
                    "minzoom": f["minzoom"], "maxzoom": f["maxzoom"], "bounds": f["bbox"],
                    "vector_layers": [{"id": n, "fields": {}} for n in ("roads", "buildings", "water", "pois")]}
        style = {"version": 8, "name": "bench", "sources": {"bench": {"type": "vector", "url": base + "/docs/tiles.json"}},
                 "layers": [
                     {"id": "water", "type": "fill", "source": "bench", "source-layer": "water"},
                     {"id": "buildings", "type": "fill", "source": "bench", "source-layer": "buildings"},
                     {"id": "roads", "type": "line", "source": "bench", "source-layer": "roads"},
                     {"id": "pois", "type": "circle", "source": "bench", "source-layer": "pois"}]}
        for name, doc in (("tiles.json", tilejson), ("style.json", style)):
            with open(os.path.join(docs, name), "w") as fh:
                json.dump(doc, fh, indent=1)
        return base + "/docs/style.json"

    def provision_job(self, case, server, conns):
        style = self.write_docs(server)
        job = {
            "version": 1, "name": f"bench {case}",
            "stylePacks": [{"id": "bench", "style": style}],
            "regions": [{"id": "fixture", "name": "Benchmark fixture", "bbox": self.fixture["bbox"],
                         "zoom": [self.fixture["minzoom"], self.fixture["maxzoom"]], "stylePacks": ["bench"]}],
            "limits": {"maxTiles": 1000000},
            "download": {"concurrency": conns, "retries": 3, "timeoutSeconds": 30},
        }
        path = os.path.join(self.work, f"job-{case}.json")
        with open(path, "w") as fh:
            json.dump(job, fh, indent=1)
        return path

    def check_provision_cover(self):
        """provision's plan of the job covers exactly the fixture's tiles."""
        job = self.provision_job("plain16", "plain", 16)
        store = os.path.join(self.fs, "plan-check")
        fresh_dir(store)
        res = subprocess.run([self.args.provision, "plan", job, "--store", store, "--json", "--quiet"],
                             capture_output=True, text=True)
        shutil.rmtree(store, ignore_errors=True)
        if res.returncode != 0:
            raise SystemExit(f"provision plan failed ({res.returncode}): {res.stderr.strip()}")
        plan = json.loads(res.stdout)
        n = plan.get("summary", plan).get("tilesToDownload", plan.get("tilesToDownload"))
        if n is None:
            n = find_key(plan, "tilesToDownload")
        if n != len(self.paths):
            raise SystemExit(f"provision plans {n} tiles, the fixture holds {len(self.paths)}: the covers differ")
        log(f"provision plan covers exactly the fixture's {n} tiles")

    def run_provision(self, case, server, conns, rep):
        job = self.provision_job(case, server, conns)
        out_dir = self.out_dir("provision")
        fresh_dir(out_dir)
        store = os.path.join(out_dir, "store")
        report = os.path.join(self.work, "logs", f"provision-{case}-{rep}.report.json")
        out, err = self.logs("provision", case, rep)
        m = run_measured([self.args.provision, "apply", job, "--store", store, "--report", report,
                          "--progress", "json"], stdout_path=out, stderr_path=err)
        phases = {}
        with open(err, errors="replace") as f:
            for line in f:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if event.get("event") == "phase":
                    phases[event["phase"]] = event["elapsed"]
                elif event.get("event") == "apply-finished":
                    phases["finished"] = event["elapsed"]
        if "tiles" in phases and "links" in phases:
            m["tilesPhaseSeconds"] = phases["links"] - phases["tiles"]
        if "links" in phases and "finished" in phases:
            m["finishSeconds"] = phases["finished"] - phases["links"]
        m["phases"] = phases
        got = 0
        db = os.path.join(store, "offline.db")
        if m["rc"] == 0 and os.path.exists(db):
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
                got = con.execute("SELECT count(*) FROM tiles").fetchone()[0]
        note = "" if m["rc"] == 0 and got == len(self.paths) else f"rc {m['rc']}, {got} tiles: {tail(err)}"
        m["storeBytes"] = os.path.getsize(db) if os.path.exists(db) else 0
        return m, got if not note else 0, note

    def run_all(self):
        tools = [t for t in TOOLS if t != "download-tiles" or self.args.download_tiles]
        reps = self.args.reps
        results = {"fixture": {k: self.fixture[k] for k in ("count", "bytes", "medianBytes", "minBytes", "maxBytes",
                                                            "minzoom", "maxzoom", "bbox")},
                   "reps": reps, "filesystem": self.args.fs_kind, "cases": [{"id": c, "label": l, "connections": n, "addedLatencyMs": 20 if s == "delay" else 0}
                                           for c, l, s, n in CASES],
                   "tools": {}}
        if not self.args.download_tiles:
            results["notes"] = ["download-tiles was not available: skipped"]
        self.check_provision_cover()
        # Repetitions go round the tools (rep 1 of every tool, then rep 2, …), so a slow spell of
        # the machine (this VM's kdamond reclaiming memory, say) falls on several tools rather
        # than on all the runs of one.
        for case, label, server, conns in CASES:
            active = [t for t in tools if not (t == "download-tiles" and case == "delay64")]
            counts = {t: 1 if t == "download-tiles" and case != "plain16" else reps for t in active}
            runs = {t: [] for t in active}
            for rep in range(reps):
                for tool in active:
                    n = counts[tool]
                    if rep >= n:
                        continue
                    runner = getattr(self, "run_" + tool.replace("-", "_"))
                    m, tiles, note = runner(case, server, conns, rep)
                    shutil.rmtree(self.out_dir(tool), ignore_errors=True)
                    m["tiles"] = tiles
                    m["note"] = f"{tool}, {label}: {note}" if note else ""
                    m["tilesPerSecond"] = tiles / m["wall"] if tiles and m["wall"] > 0 else 0.0
                    m["cpuPer10k"] = m["cpu"] / tiles * 10000 if tiles else None
                    runs[tool].append(m)
                    extra = ""
                    if m.get("tilesPhaseSeconds"):
                        extra = f", tiles phase {m['tilesPhaseSeconds']:.2f} s, finish {m.get('finishSeconds', 0):.2f} s"
                    log(f"{case:8} {tool:15} rep {rep + 1}/{n}: {tiles} tiles in {m['wall']:.2f} s = "
                        f"{m['tilesPerSecond']:,.0f}/s, cpu {m['cpu']:.2f} s, rss {m['rssMB']:.0f} MB{extra}"
                        + (f"  [{note}]" if note else ""))
            for tool in active:
                tool_runs = runs[tool]
                ok = [r for r in tool_runs if r["tiles"]]
                entry = {"runs": tool_runs, "ok": len(ok) == len(tool_runs),
                         "note": "; ".join(sorted({r["note"] for r in tool_runs if r["note"]}))}
                phase = [r["tiles"] / r["tilesPhaseSeconds"] for r in ok if r.get("tilesPhaseSeconds")]
                if phase:
                    entry["tilesPhaseTilesPerSecond"] = statistics.median(phase)
                    entry["finishSeconds"] = statistics.median(r.get("finishSeconds", 0) for r in ok)
                if ok:
                    entry["tilesPerSecond"] = statistics.median(r["tilesPerSecond"] for r in ok)
                    entry["cpuPer10k"] = statistics.median(r["cpuPer10k"] for r in ok)
                    entry["peakRSSMB"] = max(r["rssMB"] for r in ok)
                    entry["tiles"] = ok[0]["tiles"]
                results["tools"].setdefault(tool, {})[case] = entry
        return results


def find_key(value, key):
    if isinstance(value, dict):
        if key in value:
            return value[key]
        for v in value.values():
            found = find_key(v, key)
            if found is not None:
                return found
    elif isinstance(value, list):
        for v in value:
            found = find_key(v, key)
            if found is not None:
                return found
    return None


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("peers")
    p.add_argument("--fixture", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--fs", required=True)
    p.add_argument("--plain-port", type=int, required=True)
    p.add_argument("--delay-port", type=int, required=True)
    p.add_argument("--provision", required=True)
    p.add_argument("--download-tiles", default="")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--fs-kind", default="one file system")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json", required=True)
    q = sub.add_parser("plans")
    q.add_argument("--work", required=True)
    q.add_argument("--fs", required=True)
    q.add_argument("--cache", required=True)
    q.add_argument("--provision", required=True)
    q.add_argument("--quick", action="store_true")
    q.add_argument("--json", required=True)
    s = sub.add_parser("scale")
    s.add_argument("--work", required=True)
    s.add_argument("--fs", required=True)
    s.add_argument("--cache", required=True)
    s.add_argument("--provision", required=True)
    s.add_argument("--fixture", required=True)
    s.add_argument("--h2-port", type=lambda v: int(v) if v else 0, default=0)
    s.add_argument("--h1s-port", type=lambda v: int(v) if v else 0, default=0)
    s.add_argument("--h2-ca", default="")
    s.add_argument("--fs-kind", default="one file system")
    s.add_argument("--quick", action="store_true")
    s.add_argument("--https-only", action="store_true")
    s.add_argument("--json", required=True)
    x = sub.add_parser("export")
    x.add_argument("--work", required=True)
    x.add_argument("--fs", required=True)
    x.add_argument("--cache", required=True)
    x.add_argument("--provision", required=True)
    x.add_argument("--python", required=True)
    x.add_argument("--pmtiles-convert", default="")
    x.add_argument("--fs-kind", default="one file system")
    x.add_argument("--quick", action="store_true")
    x.add_argument("--json", required=True)
    g = sub.add_parser("search")
    g.add_argument("--work", required=True)
    g.add_argument("--fs", required=True)
    g.add_argument("--cache", required=True)
    g.add_argument("--provision", required=True)
    g.add_argument("--fs-kind", default="one file system")
    g.add_argument("--quick", action="store_true")
    g.add_argument("--json", required=True)
    r = sub.add_parser("report")
    r.add_argument("parts", nargs="+")
    r.add_argument("--json", required=True)
    args = parser.parse_args()
    if args.command == "peers":
        result = Peers(args).run_all()
    elif args.command == "plans":
        from plans import run_plans
        result = run_plans(args)
    elif args.command == "scale":
        from scale import run_scale
        result = run_scale(args)
    elif args.command == "export":
        from export import run_export
        result = run_export(args)
    elif args.command == "search":
        from search import run_search
        result = run_search(args)
    else:
        from report import merge_and_print
        merge_and_print(args.parts, args.json)
        return
    with open(args.json, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
