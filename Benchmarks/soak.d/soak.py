#!/usr/bin/env python3
"""The soak: apply a 5,401-tile job through a fault server, SIGKILL it ten times, finish it,
and compare the result with a clean run. Run through Benchmarks/soak.

    soak.py --provision BIN [--work DIR] [--seed N] [--keep]

Prints one line on stdout:
    soak: faults=N retries=N kills=10 redownloaded=0 missing=0 corrupt=0 integrity=ok digest=equal
and details on stderr (and in WORK/summary.json when --keep). Exits 1 when anything that must
be zero is not, integrity is not ok, the digests differ, or the product misbehaved (an exit
code other than 0/75 from apply, a run that never finishes, a plan that disagrees with the fixture).
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
KILLS = 10
FAULT_RATE = 0.1
KILL_DELAY = (0.5, 2.0)      # seconds after the run's first tile request (one batch of 256 takes ~1 s)
APPLY_TIMEOUT = 120          # seconds any one apply may take
MAX_RUNS = 40
DEADLINE = 540               # seconds for the whole soak (Benchmarks/soak also runs it under timeout 600)


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


class SoakError(Exception):
    pass


class Soak:
    def __init__(self, args):
        self.bin = os.path.abspath(args.provision)
        self.seed = args.seed
        self.work = args.work
        self.started = time.monotonic()
        self.fixture = os.path.join(self.work, "fixture")
        self.store = os.path.join(self.work, "store")
        self.clean = os.path.join(self.work, "clean")
        self.server_log = os.path.join(self.work, "server.log")
        self.server = None
        self.current = None       # the apply running now, killed if the soak itself is stopped
        self.runs = []            # {run, rc, killed, delay, seconds, stderr}
        self.kill_points = []     # {run, storedTiles, hotJournal, strays, sqlite3, audit}
        self.problems = []        # product misbehaviour, in words

    # -- plumbing ---------------------------------------------------------------------------

    def control(self, **query):
        url = f"http://127.0.0.1:{self.port}/__control?" + "&".join(f"{k}={v}" for k, v in query.items())
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.load(response)

    def stats(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/__stats", timeout=10) as response:
            return json.load(response)

    def provision(self, *args, timeout=APPLY_TIMEOUT):
        return subprocess.run([self.bin, *args], capture_output=True, text=True, timeout=timeout)

    def check_deadline(self):
        if time.monotonic() - self.started > DEADLINE:
            raise SoakError(f"the soak ran over its {DEADLINE} s budget")

    # -- setup ------------------------------------------------------------------------------

    def setup(self):
        out = subprocess.run([sys.executable, os.path.join(HERE, "fixture.py"), self.fixture],
                             capture_output=True, text=True, check=True)
        with open(os.path.join(self.fixture, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.expected = self.manifest["tiles"]
        log(f"soak: fixture of {out.stdout.strip()} tiles in {self.fixture}")
        port_file = os.path.join(self.work, "port")
        self.server = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "faultserver.py"), "--root", self.fixture, "--log", self.server_log,
             "--port-file", port_file, "--seed", str(self.seed), "--rate", "0"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.work, "server.err"), "w"))
        for _ in range(200):
            if os.path.exists(port_file):
                break
            if self.server.poll() is not None:
                raise SoakError("the fault server did not start (see server.err)")
            time.sleep(0.05)
        with open(port_file) as f:
            self.port = int(f.read())
        self.job = os.path.join(self.work, "job.json")
        job = {
            "version": 1,
            "name": "soak",
            "stylePacks": [{"id": "soak", "style": self.manifest["canonical"] + "style.json"}],
            "regions": [{"id": "soak", "name": "Soak", "bbox": self.manifest["bbox"], "zoom": self.manifest["zoom"],
                         "stylePacks": ["soak"]}],
            "origins": {self.manifest["canonical"]: f"http://127.0.0.1:{self.port}/"},
            "download": {"concurrency": 16, "perHost": 16, "retries": 5},
        }
        with open(self.job, "w") as f:
            json.dump(job, f, indent=2)
        self.check_plan()

    def check_plan(self):
        """The job's cover must be exactly the fixture: compare plan --json per zoom."""
        self.control(run=0, rate=0)
        result = self.provision("plan", self.job, "--store", self.store, "--json", "--progress", "none")
        if result.returncode != 0:
            raise SoakError(f"plan exited {result.returncode}: {result.stderr.strip()}")
        plan = json.loads(result.stdout)
        per_zoom = {}
        for key in self.expected:
            z = int(key.split("/")[0])
            per_zoom[z] = per_zoom.get(z, 0) + 1
        planned = {z["zoom"]: z["add"] for region in plan["regions"] for z in region["zooms"]}
        if planned != per_zoom or plan["summary"]["tilesToDownload"] != len(self.expected):
            raise SoakError(f"plan disagrees with the fixture: plan {planned}, fixture {per_zoom}")
        if os.path.exists(self.store):
            raise SoakError("plan created the store directory")
        log(f"soak: plan --json agrees with the fixture: {len(self.expected)} tiles, per zoom {per_zoom}")

    # -- the soak ---------------------------------------------------------------------------

    def apply(self, store, run):
        err = open(os.path.join(self.work, f"apply-{run}.err"), "w+")
        with open(os.path.join(self.work, f"apply-{run}.out"), "w") as out:
            process = subprocess.Popen([self.bin, "apply", self.job, "--store", store, "--progress", "none"],
                                       stdout=out, stderr=err)
        self.current = process
        return process, err

    def soak(self):
        rng = random.Random(self.seed)
        delays = [round(rng.uniform(*KILL_DELAY), 3) for _ in range(KILLS)]
        log(f"soak: kill delays after each run's first tile request: {delays}")
        self.control(rate=FAULT_RATE)
        run = 0
        while True:
            self.check_deadline()
            run += 1
            if run > MAX_RUNS:
                raise SoakError(f"apply did not finish in {MAX_RUNS} runs")
            self.control(run=run)
            begun = time.monotonic()
            process, err = self.apply(self.store, run)
            killed, delay = False, None
            if len(self.kill_points) < KILLS:
                while process.poll() is None and self.stats()["tilesStartedByRun"].get(str(run), 0) == 0:
                    if time.monotonic() - begun > APPLY_TIMEOUT:
                        break
                    time.sleep(0.01)
                delay = delays[len(self.kill_points)]
                time.sleep(delay)
                if process.poll() is None:
                    process.send_signal(signal.SIGKILL)
                    killed = True
            try:
                rc = process.wait(timeout=APPLY_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise SoakError(f"apply run {run} did not finish in {APPLY_TIMEOUT} s")
            err.seek(0)
            stderr = err.read()
            err.close()
            entry = {"run": run, "rc": rc, "killed": killed, "delay": delay if killed else None,
                     "seconds": round(time.monotonic() - begun, 2), "stderr": stderr.strip()[-2000:]}
            self.runs.append(entry)
            if killed:
                time.sleep(0.1)  # let the server log the requests the kill cut
                self.after_kill(run)
                point = self.kill_points[-1]
                log(f"soak: run {run}: SIGKILL after {delay} s; store holds {point['storedTiles']} tiles; "
                    f"hot journal {point['hotJournal']}; sqlite3 {point['sqlite3']}; audit {point['audit']}"
                    + (f"; strays {point['strays']}" if point["strays"] else ""))
                continue
            log(f"soak: run {run}: exit {rc} in {entry['seconds']} s")
            if rc == 0:
                if len(self.kill_points) < KILLS:
                    raise SoakError(f"apply finished after only {len(self.kill_points)} kills")
                return run
            if rc != 75:
                self.problems.append(f"apply run {run} exited {rc} (expected 0 or 75): {stderr.strip()[-500:]}")
                raise SoakError(self.problems[-1])

    def after_kill(self, run):
        """Integrity after a kill: audit on a copy (read-only), then sqlite3 on the store itself
        (whose read-write open rolls a hot journal back); then the committed tile set."""
        point = {"run": run, "storedTiles": 0, "hotJournal": False, "strays": [], "sqlite3": "no store yet",
                 "audit": "no store yet", "tiles": set()}
        self.kill_points.append(point)
        db = os.path.join(self.store, "offline.db")
        if os.path.isdir(self.store):
            point["strays"] = sorted(set(os.listdir(self.store)) - {"offline.db", "provision.lock.json"})
        if not os.path.exists(db):
            return
        journal = db + "-journal"
        point["hotJournal"] = os.path.exists(journal) and os.path.getsize(journal) > 0
        copy = os.path.join(self.work, "kill-copy")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(self.store, copy)
        audit = self.provision("audit", "--store", copy, "--json")
        try:
            point["audit"] = json.loads(audit.stdout)["integrity"]
        except (ValueError, KeyError):
            if point["hotJournal"] and "journal" in audit.stderr:
                # audit opens read-only and refuses a hot journal (exit 1, saying so); the next
                # read-write open (sqlite3 below, or the next apply) rolls it back.
                point["audit"] = "refused: hot journal"
            else:
                point["audit"] = f"exit {audit.returncode}: {audit.stderr.strip()[-300:]}"
        shutil.rmtree(copy, ignore_errors=True)
        check = subprocess.run(["sqlite3", db, "PRAGMA integrity_check"], capture_output=True, text=True)
        point["sqlite3"] = (check.stdout.strip() or check.stderr.strip()) if check.returncode == 0 \
            else f"exit {check.returncode}: {check.stderr.strip()}"
        point["tiles"] = self.stored_tiles(db)
        point["storedTiles"] = len(point["tiles"])

    @staticmethod
    def stored_tiles(db):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return {f"{z}/{x}/{y}" for z, x, y in con.execute("SELECT z, x, y FROM tiles WHERE data IS NOT NULL")}
        finally:
            con.close()

    def clean_run(self, run):
        self.control(run=run, rate=0)
        begun = time.monotonic()
        process, err = self.apply(self.clean, run)
        rc = process.wait(timeout=APPLY_TIMEOUT)
        err.seek(0)
        stderr = err.read()
        err.close()
        log(f"soak: clean run {run}: exit {rc} in {time.monotonic() - begun:.1f} s")
        if rc != 0:
            self.problems.append(f"the clean run exited {rc}: {stderr.strip()[-500:]}")
            raise SoakError(self.problems[-1])

    # -- results ----------------------------------------------------------------------------

    def final_store(self):
        db = os.path.join(self.store, "offline.db")
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        missing, corrupt, extra = 0, 0, 0
        try:
            got = {}
            for z, x, y, data, compressed in con.execute("SELECT z, x, y, data, compressed FROM tiles"):
                payload = bytes(data or b"")
                if compressed:
                    try:
                        payload = zlib.decompress(payload)
                    except zlib.error:
                        payload = zlib.decompress(payload, -15)
                got[f"{z}/{x}/{y}"] = hashlib.sha256(payload).hexdigest()
        finally:
            con.close()
        for key, digest in self.expected.items():
            if key not in got:
                missing += 1
            elif got[key] != digest:
                corrupt += 1
        extra = len(set(got) - set(self.expected))
        strays = sorted(set(os.listdir(self.store)) - {"offline.db", "provision.lock.json"})
        check = subprocess.run(["sqlite3", db, "PRAGMA integrity_check"], capture_output=True, text=True)
        audit = self.provision("audit", "--store", self.store, "--json", "--verify")
        try:
            audited = json.loads(audit.stdout)
        except ValueError:
            audited = {}
        return {"missing": missing, "corrupt": corrupt, "extra": extra, "strays": strays,
                "sqlite3": check.stdout.strip() or check.stderr.strip(), "auditExit": audit.returncode,
                "audit": audited.get("integrity"), "auditVerification": audited.get("verification")}

    def digests(self):
        out = {}
        for name, store in (("soaked", self.store), ("clean", self.clean)):
            with open(os.path.join(store, "provision.lock.json"), "rb") as f:
                lock = f.read()
            with open(os.path.join(store, "offline.db"), "rb") as f:
                db = f.read()
            out[name] = {"contentDigest": json.loads(lock)["store"]["contentDigest"],
                         "offline.db": hashlib.sha256(db).hexdigest(),
                         "provision.lock.json": hashlib.sha256(lock).hexdigest()}
        differs = [k for k in out["soaked"] if out["soaked"][k] != out["clean"][k]]
        return out, differs

    def traffic(self, last_soak_run):
        """Faults, retries and needless re-downloads from the server's log."""
        entries = []
        with open(self.server_log) as f:
            for line in f:
                entries.append(json.loads(line))
        faults = retries = 0
        seen_in_run = set()
        requested_in = {}   # path -> runs that requested it
        served_before = {}  # path -> first run in which it was served complete with 200 and the right bytes
        for e in entries:
            if not 1 <= e["run"] <= last_soak_run:
                continue
            path = e["path"]
            if e["fault"]:
                faults += 1
            if (e["run"], path) in seen_in_run:
                retries += 1
            seen_in_run.add((e["run"], path))
            if not path.startswith("/tiles/"):
                continue
            tile = path[len("/tiles/"):-len(".pbf")]
            requested_in.setdefault(tile, set()).add(e["run"])
            good = e["status"] == 200 and e["complete"] and e["fault"] in (None, "drip")
            if good and tile not in served_before:
                served_before[tile] = e["run"]
        redownloaded, uncommitted = set(), 0
        served_in = {}
        for e in entries:
            if e["path"].startswith("/tiles/") and e["status"] == 200 and e["complete"] \
                    and e["fault"] in (None, "drip"):
                served_in.setdefault(e["path"][len("/tiles/"):-len(".pbf")], set()).add(e["run"])
        for point in self.kill_points:
            for tile in point["tiles"]:
                if served_before.get(tile, 1 << 30) <= point["run"] \
                        and any(r > point["run"] for r in requested_in.get(tile, ())):
                    redownloaded.add(tile)
            # Served whole in the killed run but not committed when the kill came: fetched again.
            uncommitted += sum(1 for tile, runs in served_in.items()
                               if point["run"] in runs and tile not in point["tiles"]
                               and any(r > point["run"] for r in requested_in.get(tile, ())))
        return faults, retries, sorted(redownloaded), uncommitted

    def report(self):
        last_soak_run = self.soak()
        self.clean_run(last_soak_run + 1)
        final = self.final_store()
        digests, differs = self.digests()
        faults, retries, redownloaded, uncommitted = self.traffic(last_soak_run)
        stats = self.stats()

        kill_integrity = [p for p in self.kill_points if p["sqlite3"] not in ("ok", "no store yet")]
        audit_integrity = [p for p in self.kill_points
                           if p["audit"] not in ("ok", "no store yet", "refused: hot journal")]
        integrity_ok = not kill_integrity and not audit_integrity and final["sqlite3"] == "ok" and final["audit"] == "ok"
        grown = sum(1 for a, b in zip([0] + [p["storedTiles"] for p in self.kill_points], self.kill_points)
                    if b["storedTiles"] > a)
        log(f"soak: {len(self.runs)} runs, exit codes {[r['rc'] if not r['killed'] else 'KILL' for r in self.runs]}")
        log(f"soak: faults by kind {stats['byFault']}")
        log(f"soak: store grew between {grown} of {len(self.kill_points)} kills; tiles at each kill "
            f"{[p['storedTiles'] for p in self.kill_points]}; hot journals left by "
            f"{sum(p['hotJournal'] for p in self.kill_points)} kills (audit refused "
            f"{sum(p['audit'] == 'refused: hot journal' for p in self.kill_points)} of them; sqlite3 rolled them back)")
        log(f"soak: tiles served whole before a kill but not yet committed, so fetched again: {uncommitted} "
            f"(the downloader commits in batches; not counted as needless re-downloads)")
        for p in kill_integrity:
            log(f"soak: integrity after the kill in run {p['run']} (sqlite3): {p['sqlite3']}")
        for p in audit_integrity:
            log(f"soak: integrity after the kill in run {p['run']} (provision audit on a copy): {p['audit']}")
        log(f"soak: final store: sqlite3 {final['sqlite3']}, audit --verify exit {final['auditExit']} "
            f"integrity {final['audit']} verification {final['auditVerification']}, extra tiles {final['extra']}, "
            f"stray files {final['strays']}")
        for name in ("soaked", "clean"):
            log(f"soak: {name}: {digests[name]}")
        if differs:
            log(f"soak: differs between the soaked and the clean store: {differs}")
        if redownloaded:
            log(f"soak: needlessly re-downloaded after a kill: {redownloaded[:20]}")
        for before, after in zip(self.kill_points, self.kill_points[1:]):
            lost = before["tiles"] - after["tiles"]
            if lost:
                self.problems.append(f"{len(lost)} committed tiles present after the kill in run {before['run']} "
                                     f"were gone after the kill in run {after['run']}, e.g. {sorted(lost)[:5]}")
        if grown == 0:
            self.problems.append("no kill happened after the store had grown: the kills were not mid-download")
        if final["extra"] or final["strays"]:
            self.problems.append(f"the final store has {final['extra']} tiles outside the fixture and stray files {final['strays']}")
        for problem in self.problems:
            log(f"soak: problem: {problem}")

        integrity = "ok" if integrity_ok else "failed"
        digest = "equal" if not differs else "differs(" + ",".join(differs) + ")"
        line = (f"soak: faults={faults} retries={retries} kills={len(self.kill_points)} "
                f"redownloaded={len(redownloaded)} missing={final['missing']} corrupt={final['corrupt']} "
                f"integrity={integrity} digest={digest}")
        ok = (not redownloaded and not final["missing"] and not final["corrupt"] and integrity_ok and not differs
              and len(self.kill_points) == KILLS and not self.problems)
        summary = {"line": line, "ok": ok, "runs": self.runs, "problems": self.problems, "final": final,
                   "digests": digests, "serverStats": stats, "uncommittedAtKills": uncommitted,
                   "kills": [{k: v for k, v in p.items() if k != "tiles"} for p in self.kill_points]}
        with open(os.path.join(self.work, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1, default=list)
        return line, ok

    def stop(self):
        if self.current and self.current.poll() is None:
            self.current.kill()
            self.current.wait()
        if self.server and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.server.kill()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--provision", required=True)
    parser.add_argument("--work")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED", "20240501")))
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    keep = args.keep or args.work is not None
    args.work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="provision-soak."))
    os.makedirs(args.work, exist_ok=True)
    soak = Soak(args)
    try:
        soak.setup()
        line, ok = soak.report()
    except (SoakError, subprocess.SubprocessError, OSError) as error:
        line, ok = (f"soak: failed: {error}", False)
        keep = True
    finally:
        soak.stop()
        if keep:
            log(f"soak: work directory kept: {args.work}")
        else:
            shutil.rmtree(args.work, ignore_errors=True)
    print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
