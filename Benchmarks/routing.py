#!/usr/bin/env python3
"""Benchmarks/run part "routing": a region's routing pack cut out of a large Valhalla graph (issue 22).

  routing.py --cache DIR --work DIR --fs DIR --fixture DIR --provision BIN [--reps N] --json OUT
  routing.py --cache DIR --fixture-only     (only build, or find, the cached graph)

Runs under the python of a venv with PyPI pyvalhalla (Benchmarks/run passes PROVISION_VALHALLA's,
else the repository's .valhalla/): the graph is built by Valhalla itself.

The graph (built once, cached in CACHE/routing-<digest>/): a synthetic OSM road grid over
lon 0..10, lat 40..55 (40 x 60 = 2,400 level-2 tiles of 0.25 deg, 150 level-1, 12 level-0):
residential streets every 1/16 deg both ways, a secondary road every degree, a primary road every
4 degrees, built with the wheel's valhalla_build_tiles (the test town's script writes the config),
and the whole tree's extract written by valhalla_build_extract (served over HTTP below). The OSM
input is a pure function of this file: the same graph on every machine.

Two regions, pulled 1e-6 deg inside whole level-2 cells so both tools take the same tiles: the
south 26 rows (1,040 level-2 tiles) and the whole grid (2,400), each cut three ways, under
/usr/bin/time (wall seconds, peak RSS), medians of the repetitions going round the tools:
  - provision apply, tiles read from the tile tree through an `origins` directory;
  - provision apply over HTTP from nginx on 127.0.0.1: the whole build's extract
    (`"extract": "http://..."`, range requests through its index) when the binary accepts that,
    else the `{tilePath}` URL template over the tile tree (the report says which);
  - valhalla_build_extract -b BBOX on the tile tree (the peer).
The tiles of each tar (its members but index.bin: their paths and bytes) are checked the same.
"""
import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "Tests/Fixtures/valhalla"))
import valhalla_town  # noqa: E402  (the test town's Town writer and the wheel's paths)

WEST, SOUTH, COLUMNS, ROWS = 0.0, 40.0, 40, 60  # level-2 cells of 0.25 deg
SIZES = [("1,040 level-2 tiles", 26), ("2,400 level-2 tiles", 60)]  # (label, rows from the south)
CHANGESET = 2200
GRAPH_VERSION = 1  # bump when grid() changes: the cached graph is kept by this name
CHILDREN = []


def say(text):
    print(f"[routing {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def grid():
    """The road grid as a valhalla_town.Town."""
    t = valhalla_town.Town()
    east, north = WEST + COLUMNS * 0.25, SOUTH + ROWS * 0.25
    step = 1 / 16
    lons = [WEST + step / 2 + step * i for i in range(COLUMNS * 4)]
    lats = [SOUTH + step / 2 + step * i for i in range(ROWS * 4)]
    # Every 16th avenue (one a degree) is a secondary road, every 64th street a primary road.
    for n, lon in enumerate(lons):
        kind = ("primary", "90") if n % 64 == 32 else ("residential", "30")
        t.way([(lon, lat) for lat in lats], highway=kind[0], name=f"Street {n + 1}", maxspeed=kind[1])
    for n, lat in enumerate(lats):
        kind = ("secondary", "70") if n % 16 == 8 else ("residential", "30")
        t.way([(lon, lat) for lon in lons], highway=kind[0], name=f"Avenue {n + 1}", maxspeed=kind[1])
    assert lons[-1] < east and lats[-1] < north
    return t


def build_graph(cache):
    """The cached graph directory (tiles/, whole.tar, build.json); built when missing."""
    directory = Path(cache) / f"routing-v{GRAPH_VERSION}-{COLUMNS}x{ROWS}"
    if (directory / "build.json").exists():
        return directory
    partial = Path(str(directory) + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    say(f"building the Valhalla graph of {COLUMNS * ROWS} level-2 cells into {directory}")
    started = time.monotonic()
    osm = partial / "grid.osm"
    osm.write_text(grid().xml(CHANGESET))
    pbf = partial / "grid.osm.pbf"
    subprocess.run(["osmium", "cat", "--overwrite", "-o", str(pbf), str(osm)], check=True)
    osm.unlink()
    made = subprocess.run([str(valhalla_town.SCRIPTS / "valhalla_build_config"), "--mjolnir-tile-dir", str(directory / "tiles"),
                           "--mjolnir-tile-extract", str(directory / "whole.tar"),
                           "--mjolnir-timezone", "", "--mjolnir-admin", ""],
                          check=True, capture_output=True, text=True)
    config = json.loads(made.stdout)
    config["mjolnir"]["tile_dir"] = str(partial / "tiles")
    config["mjolnir"]["tile_extract"] = str(partial / "whole.tar")
    config["mjolnir"]["concurrency"] = 2
    (partial / "valhalla.json").write_text(json.dumps(config))
    with open(partial / "build_tiles.log", "w") as out:
        subprocess.run([str(valhalla_town.BIN / "valhalla_build_tiles"), "-c", str(partial / "valhalla.json"), str(pbf)],
                       check=True, stdout=out, stderr=subprocess.STDOUT)
    tiles_seconds = time.monotonic() - started
    subprocess.run([str(valhalla_town.SCRIPTS / "valhalla_build_extract"), "-c", str(partial / "valhalla.json"), "-O"],
                   check=True, capture_output=True)
    counts = {}
    for level in (0, 1, 2):
        counts[level] = sum(1 for _ in (partial / "tiles" / str(level)).rglob("*.gph"))
    summary = {"buildSeconds": round(tiles_seconds, 1), "extractSeconds": round(time.monotonic() - started - tiles_seconds, 1),
               "tiles": counts, "bytes": sum(f.stat().st_size for f in (partial / "tiles").rglob("*.gph"))}
    (partial / "build.json").write_text(json.dumps(summary))
    os.rename(partial, directory)
    # The config names the partial paths: point it at the cached ones.
    config["mjolnir"]["tile_dir"] = str(directory / "tiles")
    config["mjolnir"]["tile_extract"] = str(directory / "whole.tar")
    (directory / "valhalla.json").write_text(json.dumps(config))
    say(f"graph built: {summary}")
    return directory


def bbox(rows):
    """The region: whole level-2 cells, pulled 1e-6 deg inside."""
    return [WEST + 1e-6, SOUTH + 1e-6, WEST + COLUMNS * 0.25 - 1e-6, SOUTH + rows * 0.25 - 1e-6]


def start_nginx(work, graph):
    """nginx on a free port of 127.0.0.1 serving the graph's tile tree at /tiles/ and its whole
    extract at /whole.tar (byte ranges, ETag); returns the port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    root = Path(work) / "nginx-routing"
    root.mkdir(parents=True, exist_ok=True)
    conf = root / "nginx.conf"
    conf.write_text(f"""daemon off; master_process off; worker_rlimit_nofile 65536;
pid {root}/nginx.pid; error_log {root}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off; sendfile on; tcp_nodelay on; keepalive_requests 10000000; etag on;
    client_body_temp_path {root}/body; default_type application/octet-stream;
    server {{ listen 127.0.0.1:{port} backlog=4096; root {graph}; }}
}}
""")
    process = subprocess.Popen(["nginx", "-c", str(conf), "-p", str(root), "-e", f"{root}/error.log"])
    CHILDREN.append(process)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("routing: nginx did not start")


def write_job(path, source, region_bbox, maps):
    """A job of one region at z0 (one map tile from `maps`, so the map part costs nothing) naming
    one routing pack whose source is `source` (the pack's "tiles" or "extract" key and value)."""
    job = {"version": 1, "name": "routing bench", "origins": {"https://maps.bench.invalid/": str(maps)},
           "routingPacks": [{"id": "drive", **source}],
           "regions": [{"id": "grid", "name": "Grid", "bbox": region_bbox, "zoom": [0, 0],
                        "tilesets": ["https://maps.bench.invalid/{z}/{x}/{y}.pbf"], "routingPacks": ["drive"]}],
           "limits": {"maxTiles": 10_000_000}}
    if "graphOrigin" in source:
        job["origins"][source.pop("graphOrigin")] = source.pop("graphDirectory")
        job["routingPacks"][0] = {"id": "drive", **source}
    Path(path).write_text(json.dumps(job, indent=1))
    return path


def tar_tiles(path):
    """The graph tiles of a tile extract (its members but index.bin) and a digest of their paths and
    bytes (the same for two extracts of the same tiles, whatever their order or tar headers);
    (0, "") when it is not there."""
    try:
        digests = []
        with tarfile.open(path) as tar:
            for member in tar:
                if member.name.endswith(".gph"):
                    digests.append(member.name + " " + hashlib.sha256(tar.extractfile(member).read()).hexdigest())
        return len(digests), hashlib.sha256("\n".join(sorted(digests)).encode()).hexdigest()
    except (OSError, tarfile.TarError):
        return 0, ""


class Routing:
    def __init__(self, args, graph):
        sys.path.insert(0, str(HERE))
        from bench import run_measured, fresh_dir, tail
        self.run_measured, self.fresh_dir, self.tail = run_measured, fresh_dir, tail
        self.args, self.graph = args, graph
        self.work = Path(args.work) / "routing"
        self.logs = self.work / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.fs = Path(args.fs) / "routing"
        self.fs.mkdir(parents=True, exist_ok=True)
        # The map part of every job: one z0 tile, a copy of a fixture tile.
        self.maps = self.work / "maps"
        (self.maps / "0/0").mkdir(parents=True, exist_ok=True)
        first = (Path(args.fixture) / "paths.txt").read_text().split()[0]
        shutil.copy(Path(args.fixture) / first.lstrip("/"), self.maps / "0/0/0.pbf")

    def measure(self, name, cmd):
        m = self.run_measured(cmd, timeout=1200, stdout_path=str(self.logs / f"{name}.out"),
                              stderr_path=str(self.logs / f"{name}.err"))
        m["stderr"] = self.tail(str(self.logs / f"{name}.err"), 3)[-400:]
        return m

    def entry(self, m, tar):
        tiles, digest = tar_tiles(tar) if m["rc"] == 0 else (0, "")
        e = {"tiles": tiles, "tilesDigest": digest, "seconds": round(m["wall"], 3), "cpuSeconds": round(m["cpu"], 2),
             "peakRSSMB": round(m["rssMB"], 1), "rc": m["rc"], "timedOut": m["timedOut"],
             "bytes": os.path.getsize(tar) if m["rc"] == 0 and os.path.exists(tar) else 0}
        if m["rc"] != 0:
            e["error"] = m["stderr"]
        return e

    def http_source(self, port):
        """The pack's source over HTTP: the whole extract when this binary accepts an extract URL,
        else the {tilePath} template over the tile tree."""
        probe = write_job(self.work / "probe.json", {"extract": f"http://127.0.0.1:{port}/whole.tar"}, bbox(1), self.maps)
        accepted = subprocess.run([self.args.provision, "validate", str(probe)], capture_output=True).returncode == 0
        if accepted:
            return "extract over HTTP (range requests)", {"extract": f"http://127.0.0.1:{port}/whole.tar"}
        return "{tilePath} template over HTTP", {"tiles": f"http://127.0.0.1:{port}/tiles/{{tilePath}}"}

    def run(self):
        port = start_nginx(self.work, self.graph)
        http_label, http_source = self.http_source(port)
        directory = {"tiles": "https://graph.bench.invalid/{tilePath}", "graphOrigin": "https://graph.bench.invalid/",
                     "graphDirectory": str(self.graph / "tiles")}
        tools = [("provisionDirectory", "provision apply, tile tree via origins"),
                 ("provisionHTTP", f"provision apply, {http_label}"),
                 ("valhallaBuildExtract", "valhalla_build_extract -b")]
        config = json.loads((self.graph / "valhalla.json").read_text())
        result = {"part": "routing", "graph": json.loads((self.graph / "build.json").read_text()),
                  "httpSource": http_label, "tools": dict(tools), "sizes": []}
        for label, rows in SIZES:
            region = bbox(rows)
            entries = {tool: [] for tool, _ in tools}
            for rep in range(self.args.reps):
                for tool, _ in tools:
                    name = f"{tool}-{rows}-{rep}"
                    out = self.fs / name
                    shutil.rmtree(out, ignore_errors=True)
                    self.fresh_dir(str(out))
                    if tool == "valhallaBuildExtract":
                        tar = out / "drive.tar"
                        mjolnir = {**config["mjolnir"], "tile_extract": str(tar)}
                        cmd = [str(valhalla_town.SCRIPTS / "valhalla_build_extract"), "-c", str(self.graph / "valhalla.json"),
                               "-i", json.dumps({"mjolnir": mjolnir}), "-O", "-b", ",".join(repr(v) for v in region)]
                    else:
                        source = dict(directory) if tool == "provisionDirectory" else dict(http_source)
                        job = write_job(self.work / f"{name}.json", source, region, self.maps)
                        store = out / "store"
                        tar = store / "routing/drive.tar"
                        cmd = [self.args.provision, "apply", str(job), "--store", str(store), "--quiet"]
                    e = self.entry(self.measure(name, cmd), tar)
                    entries[tool].append(e)
                    say(f"{label} {tool} run {rep + 1}: {e['tiles']:,} tiles, {e['seconds']:.2f} s, "
                        f"rss {e['peakRSSMB']:.0f} MB" + (f": {e.get('error')}" if e["rc"] else ""))
                    shutil.rmtree(out, ignore_errors=True)
            size = {"label": label, "bbox": region, "level2Tiles": COLUMNS * rows}
            for tool, _ in tools:
                size[tool] = median(entries[tool])
            size["sameTiles"] = len({size[tool]["tilesDigest"] for tool, _ in tools}) == 1
            result["sizes"].append(size)
        return result


def median(entries):
    """The run of median time (a failed run counts as the slowest), with every run's seconds and
    the highest peak RSS of all."""
    ranked = sorted(entries, key=lambda e: (0 if e["rc"] == 0 else 1, e["seconds"]))
    chosen = dict(ranked[(len(ranked) - 1) // 2] if all(e["rc"] == 0 for e in entries) else ranked[-1])
    chosen["runs"] = [e["seconds"] for e in entries]
    chosen["peakRSSMB"] = max(e["peakRSSMB"] for e in entries)
    return chosen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", required=True)
    parser.add_argument("--work")
    parser.add_argument("--fs")
    parser.add_argument("--fixture")
    parser.add_argument("--provision")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json")
    parser.add_argument("--fixture-only", action="store_true")
    args = parser.parse_args()
    graph = build_graph(args.cache)
    if args.fixture_only:
        print((graph / "build.json").read_text())
        return
    try:
        result = Routing(args, graph).run()
    finally:
        for child in CHILDREN:
            child.terminate()
            child.wait()
    Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
