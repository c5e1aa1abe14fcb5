#!/usr/bin/env python3
"""Benchmarks/run part "extract": a city cut out of a planet-like PMTiles archive over loopback HTTP.

  extract.py --fixture DIR --cache DIR --work DIR --fs DIR --provision BIN [--reps N] [--json OUT]

Runs under a python with the `pmtiles` package (Benchmarks/run passes the oracles' venv).

The archive (cached in CACHE/planet.pmtiles): every tile of zooms 0-8 of the world and 9-12 of a
box around France, whose bytes are drawn from the fixture's tiles by a hash of the tile id (the
pmtiles writer stores each distinct content once, so offsets jump and the directory needs leaf
directories, as a planet's does), plus the fixture's 20,460 tiles (zooms 10-14 around Paris, a
realistic size mix) as they are. Written by the pmtiles package's writer; nginx serves it with
byte ranges on 127.0.0.1.

The cut: the fixture's bbox at zooms 0-14 (its 20,460 tiles and their ancestors), with
  - provision apply, a job whose tileset's origin is pmtiles:http://127.0.0.1:PORT/planet.pmtiles
    (verified, into a MapLibre offline database on the fresh file system);
  - `pmtiles extract` (go-pmtiles) when a `pmtiles` binary is on PATH or in BENCH_PMTILES, else the
    pmtiles package's reader functions over HTTP ranges (each directory read and parsed once, 16
    threads, one range request per tile, the same tile set) writing a PMTiles archive with its writer.
Each is timed with /usr/bin/time (wall seconds, peak RSS), medians of the repetitions, and the
tile counts are checked equal.
"""
import argparse
import hashlib
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

import mercantile
from pmtiles.reader import Reader
from pmtiles.tile import Compression, TileType, deserialize_directory, find_tile, zxy_to_tileid, tileid_to_zxy
from pmtiles.writer import Writer

HERE = os.path.dirname(os.path.abspath(__file__))
FRANCE = (-5.0, 42.0, 8.0, 51.0)
ARCHIVE_VERSION = 1


def say(text):
    print(f"[extract {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def fixture_tiles(fixture):
    """(z, x, y) → path of the fixture's tiles."""
    tiles = {}
    with open(os.path.join(fixture, "paths.txt")) as f:
        for line in f:
            path = line.strip()
            z, x, y = (int(v) for v in path[len("/tiles/"):-len(".pbf")].split("/"))
            tiles[(z, x, y)] = os.path.join(fixture, path.lstrip("/"))
    return tiles


def make_archive(fixture, path):
    """The planet-like archive (see the module text); skipped when a matching one is cached."""
    stamp = path + ".json"
    with open(os.path.join(fixture, "fixture.json")) as f:
        key = {"version": ARCHIVE_VERSION, "fixture": json.load(f)["sha256"]}
    if os.path.exists(path) and os.path.exists(stamp) and json.load(open(stamp)) == key:
        return
    say(f"writing the planet-like PMTiles archive {path}")
    own = fixture_tiles(fixture)
    pool = [own[k] for k in sorted(own)[:: max(1, len(own) // 1500)]]
    ids = set(zxy_to_tileid(*t) for t in own)
    for z in range(0, 9):
        ids.update(range(zxy_to_tileid(z, 0, 0), zxy_to_tileid(z + 1, 0, 0)))
    for z in range(9, 13):
        for t in mercantile.tiles(*FRANCE, [z]):
            ids.add(zxy_to_tileid(t.z, t.x, t.y))
    shared = {}
    for source in pool:
        with open(source, "rb") as t:
            shared[source] = t.read()
    tmp = path + ".partial"
    with open(tmp, "wb") as f:
        writer = Writer(f)
        for tile_id in sorted(ids):
            z, x, y = tileid_to_zxy(tile_id)
            if (z, x, y) in own:
                with open(own[(z, x, y)], "rb") as t:
                    data = t.read()
            else:
                pick = int.from_bytes(hashlib.blake2b(tile_id.to_bytes(8, "little"), digest_size=4).digest(), "little")
                data = shared[pool[pick % len(pool)]]
            writer.write_tile(tile_id, data)
        writer.finalize({"tile_type": TileType.MVT, "tile_compression": Compression.NONE,
                         "min_lon_e7": -1800000000, "min_lat_e7": -850000000, "max_lon_e7": 1800000000,
                         "max_lat_e7": 850000000, "center_zoom": 0, "center_lon_e7": 0, "center_lat_e7": 0},
                        {"name": "provision benchmark planet"})
    os.replace(tmp, path)
    with open(stamp, "w") as f:
        json.dump(key, f)


def start_nginx(work, archive_dir, fixture):
    """nginx serving archive_dir at /archives/ and the fixture's tiles at /tiles/ on a free port;
    returns (process, port)."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    conf = os.path.join(work, "nginx-extract.conf")
    os.makedirs(os.path.join(work, "nginx-extract"), exist_ok=True)
    with open(conf, "w") as f:
        f.write(f"""daemon off; master_process off; worker_rlimit_nofile 65536;
pid {work}/nginx-extract/nginx.pid; error_log {work}/nginx-extract/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off; sendfile on; tcp_nodelay on; keepalive_requests 10000000; etag on;
    client_body_temp_path {work}/nginx-extract/body;
    default_type application/octet-stream;
    server {{ listen 127.0.0.1:{port} backlog=4096; location /archives/ {{ alias {archive_dir}/; }}
             location /tiles/ {{ root {fixture}; }} }}
}}
""")
    process = subprocess.Popen(["nginx", "-c", conf, "-p", work, "-e", f"{work}/nginx-extract/error.log"])
    CHILDREN.append(process)
    for _ in range(100):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("HEAD", "/archives/planet.pmtiles")
            c.getresponse().read()
            return process, port
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("extract: nginx did not start")


CHILDREN = []


def stop(signum, frame):
    """SIGTERM/SIGINT: stop what runs (the finally clauses stop nginx) and exit 143."""
    for child in CHILDREN:
        if child.poll() is None:
            child.terminate()
    raise SystemExit(143)


def timed(argv, log, env=None):
    """Runs argv under /usr/bin/time; returns (status, wall seconds, peak RSS MB)."""
    fmt = "TIME %e %M"
    with open(log, "w") as out:
        child = subprocess.Popen(["/usr/bin/time", "-f", fmt] + argv, stdout=out, stderr=out, env=env)
        CHILDREN.append(child)
        status = child.wait()
        CHILDREN.remove(child)
    wall, rss = 0.0, 0.0
    with open(log) as f:
        for line in f:
            if line.startswith("TIME "):
                _, e, m = line.split()
                wall, rss = float(e), int(m) / 1024
    return status, wall, rss


def python_extract(url, bbox, minzoom, maxzoom, out, threads=16):
    """The pmtiles package's reader over HTTP ranges: what `pmtiles extract` does, in Python."""
    host, port, path = url.split("/", 3)[2].split(":")[0], int(url.split("/", 3)[2].split(":")[1]), "/" + url.split("/", 3)[3]
    local = threading.local()
    lock = threading.Lock()

    def get_bytes(offset, length):
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection(host, port)
        local.conn.request("GET", path, headers={"Range": f"bytes={offset}-{offset + length - 1}"})
        response = local.conn.getresponse()
        data = response.read()
        if response.status != 206:
            raise SystemExit(f"extract: HTTP {response.status} for a range")
        return data

    header = Reader(get_bytes).header()
    tile_data = header["tile_data_offset"]
    parsed = {}

    def directory(offset, length):
        """A directory, read and parsed once (the package's Reader.get parses it for every tile)."""
        with lock:
            entries = parsed.get((offset, length))
        if entries is None:
            entries = deserialize_directory(get_bytes(offset, length))
            with lock:
                parsed[(offset, length)] = entries
        return entries

    def get(z, x, y):
        tile_id = zxy_to_tileid(z, x, y)
        offset, length = header["root_offset"], header["root_length"]
        for _ in range(4):
            entry = find_tile(directory(offset, length), tile_id)
            if entry is None:
                return None
            if entry.run_length > 0:
                return get_bytes(tile_data + entry.offset, entry.length)
            offset, length = header["leaf_directory_offset"] + entry.offset, entry.length
        return None

    wanted = set()
    level = set(mercantile.tiles(*bbox, [maxzoom]))
    while level:
        wanted |= level
        level = {mercantile.parent(t) for t in level if t.z > minzoom}
    work = sorted(wanted, key=lambda t: zxy_to_tileid(t.z, t.x, t.y))
    results = {}

    def worker(items):
        for t in items:
            data = get(t.z, t.x, t.y)
            if data is not None:
                results[zxy_to_tileid(t.z, t.x, t.y)] = data

    chunks = [work[i::threads] for i in range(threads)]
    pool = [threading.Thread(target=worker, args=(c,)) for c in chunks]
    for p in pool:
        p.start()
    for p in pool:
        p.join()
    with open(out, "wb") as f:
        writer = Writer(f)
        for tile_id in sorted(results):
            writer.write_tile(tile_id, results[tile_id])
        writer.finalize({"tile_type": TileType.MVT, "tile_compression": Compression.NONE}, {})
    print(json.dumps({"tiles": len(results)}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixture", required=True)
    parser.add_argument("--cache", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--fs", required=True)
    parser.add_argument("--provision", required=True)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json")
    parser.add_argument("--python-extract", nargs=5, metavar=("URL", "BBOX", "MINZOOM", "MAXZOOM", "OUT"))
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.python_extract:
        url, bbox, minzoom, maxzoom, out = args.python_extract
        python_extract(url, tuple(float(v) for v in bbox.split(",")), int(minzoom), int(maxzoom), out)
        return

    archive_dir = os.path.join(args.cache, "pmtiles")
    os.makedirs(archive_dir, exist_ok=True)
    archive = os.path.join(archive_dir, "planet.pmtiles")
    make_archive(args.fixture, archive)
    with open(archive, "rb") as f:
        header = Reader(lambda o, n: (f.seek(o), f.read(n))[1]).header()
    with open(os.path.join(args.fixture, "fixture.json")) as f:
        bbox = json.load(f)["bbox"]
    work = os.path.join(args.work, "extract")
    logs = os.path.join(work, "logs")
    os.makedirs(logs, exist_ok=True)
    nginx, port = start_nginx(work, archive_dir, args.fixture)
    url = f"http://127.0.0.1:{port}/archives/planet.pmtiles"
    template = "https://tiles.example.com/planet/{z}/{x}/{y}.mvt"
    job = {"version": 1, "name": "city from a planet", "store": "store",
           "regions": [{"id": "city", "name": "City", "bbox": bbox, "zoom": [0, 14], "tilesets": [template]}],
           "origins": {"https://tiles.example.com/planet/": "pmtiles:" + url},
           "limits": {"maxTiles": 1000000},
           "download": {"concurrency": 16, "retries": 3, "timeoutSeconds": 60}}
    job_path = os.path.join(work, "job.json")
    with open(job_path, "w") as f:
        json.dump(job, f)
    # The reference: the same region's fixture tiles (zooms 10-14) as files over HTTP, no archive.
    files = dict(job, regions=[dict(job["regions"][0], zoom=[10, 14],
                                    tilesets=["https://tiles.example.com/files/{z}/{x}/{y}.pbf"])],
                 origins={"https://tiles.example.com/files/": f"http://127.0.0.1:{port}/tiles/"})
    files_path = os.path.join(work, "files.json")
    with open(files_path, "w") as f:
        json.dump(files, f)
    gopm = os.environ.get("BENCH_PMTILES") or shutil.which("pmtiles")
    peer_name = "pmtiles extract (go-pmtiles)" if gopm else "pmtiles package reader (Python, 16 threads)"
    if not gopm:
        say("no go-pmtiles binary (not packaged in Debian; BENCH_PMTILES=PATH uses one): the peer is the Python reader")
    runs = {"provision": [], "peer": [], "files": []}
    tiles = {}
    try:
        for rep in range(args.reps):
            store = os.path.join(args.fs, f"extract-store-{rep}")
            shutil.rmtree(store, ignore_errors=True)
            status, wall, rss = timed([args.provision, "apply", job_path, "--store", store, "--quiet"],
                                      os.path.join(logs, f"provision-{rep}.log"))
            if status != 0:
                raise SystemExit(f"extract: provision apply exited {status} (see {logs})")
            count = subprocess.run(["sqlite3", os.path.join(store, "offline.db"), "SELECT count(*) FROM tiles"],
                                   capture_output=True, text=True).stdout.strip()
            tiles["provision"] = int(count or 0)
            runs["provision"].append({"seconds": wall, "rssMB": rss})
            shutil.rmtree(store, ignore_errors=True)
            status, wall, rss = timed([args.provision, "apply", files_path, "--store", store, "--quiet"],
                                      os.path.join(logs, f"files-{rep}.log"))
            if status != 0:
                raise SystemExit(f"extract: provision apply (files) exited {status} (see {logs})")
            runs["files"].append({"seconds": wall, "rssMB": rss})
            shutil.rmtree(store, ignore_errors=True)
            out = os.path.join(args.fs, f"extract-{rep}.pmtiles")
            if gopm:
                argv = [gopm, "extract", url, out, "--bbox=" + ",".join(str(v) for v in bbox),
                        "--minzoom=0", "--maxzoom=14", "--download-threads=16"]
            else:
                argv = [sys.executable, os.path.abspath(__file__), "--fixture", args.fixture, "--cache", args.cache,
                        "--work", args.work, "--fs", args.fs, "--provision", args.provision,
                        "--python-extract", url, ",".join(str(v) for v in bbox), "0", "14", out]
            log = os.path.join(logs, f"peer-{rep}.log")
            status, wall, rss = timed(argv, log)
            if status != 0:
                raise SystemExit(f"extract: the peer exited {status} (see {log})")
            with open(out, "rb") as f:
                tiles["peer"] = Reader(lambda o, n: (f.seek(o), f.read(n))[1]).header()["addressed_tiles_count"]
            os.remove(out)
            runs["peer"].append({"seconds": wall, "rssMB": rss})
            say(f"rep {rep + 1}: provision {runs['provision'][-1]}, peer {runs['peer'][-1]}")
    finally:
        nginx.terminate()
        nginx.wait()

    def median(kind, field):
        return statistics.median(r[field] for r in runs[kind])

    result = {
        "part": "extract",
        "archive": {"bytes": os.path.getsize(archive), "addressedTiles": header["addressed_tiles_count"],
                    "leafDirectoryBytes": header["leaf_directory_length"], "maxZoom": header["max_zoom"]},
        "city": {"bbox": bbox, "zoom": [0, 14]},
        "tiles": tiles,
        "sameTileCount": tiles.get("provision") == tiles.get("peer"),
        "peer": peer_name,
        "provision": {"seconds": median("provision", "seconds"), "rssMB": median("provision", "rssMB")},
        "peerResult": {"seconds": median("peer", "seconds"), "rssMB": median("peer", "rssMB")},
        "filesReference": {"seconds": median("files", "seconds"), "rssMB": median("files", "rssMB"), "tiles": 20460},
        "runs": runs,
        "targetRssMB": 150,
    }
    p, q = result["provision"], result["peerResult"]
    print(f"| city from a {result['archive']['bytes'] / 1e6:.0f} MB PMTiles archive over loopback HTTP "
          f"({tiles.get('provision')} tiles, z0-14) | seconds | tiles/s | peak RSS MB |")
    print("|---|---|---|---|")
    rows = (("**provision apply** (verified, offline.db)", p, tiles.get("provision") or 0),
            (peer_name + " (PMTiles file)", q, tiles.get("provision") or 0),
            ("provision apply of the same z10-14 tiles as files over HTTP (reference, no archive)",
             result["filesReference"], 20460))
    for name, r, count in rows:
        rate = count / r["seconds"] if r["seconds"] else 0
        print(f"| {name} | {r['seconds']:.1f} | {rate:,.0f} | {r['rssMB']:.0f} |")
    print(f"\nprovision peak RSS {p['rssMB']:.0f} MB (target <= 150: {'met' if p['rssMB'] <= 150 else 'NOT met'}); "
          f"time ×{q['seconds'] / p['seconds']:.2f} of the peer's; same tile count: {result['sameTileCount']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
