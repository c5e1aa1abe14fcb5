"""Part two of Benchmarks/run: how long `provision plan` takes on large covers.

- France: a simplified outline (50 vertices, hard-coded) at z0-14 against an empty store.
- 1M: a region of ~1,000,000 tiles (z6-16) applied from an MBTiles origin whose rows all point at
  one tiny MVT (the apply is timed too), then planned against the store that holds it (the diff).
- Planet: a planet bbox at z0-22 (23,456,248,059,221 tiles): the default limit refuses it; the
  time to that refusal is the time to count. With the limit raised, the plan enumerates and is
  stopped after a few seconds.
Process start-up is measured with `provision validate` of the same job, for reference.
"""
import json
import math
import os
import shutil
import sqlite3
import statistics
import subprocess

from bench import fresh_dir, log, run_measured
from make_fixture import cover, lat_of, lng_of
from pbwire import field_bytes, field_varint, varint

# France (metropolitan), simplified clockwise from Dunkirk: 50 distinct vertices, closed.
FRANCE = [
    (2.37, 51.07), (2.55, 50.81), (3.16, 50.77), (3.71, 50.33), (4.23, 49.96), (4.87, 50.15),
    (4.82, 49.79), (5.47, 49.50), (6.36, 49.47), (7.04, 49.18), (7.63, 49.05), (8.23, 48.96),
    (7.80, 48.58), (7.58, 48.12), (7.52, 47.66), (6.99, 47.50), (6.94, 47.29), (6.12, 46.58),
    (6.06, 46.40), (6.78, 46.16), (6.82, 45.84), (7.13, 45.26), (6.62, 45.11), (7.03, 44.83),
    (6.86, 44.53), (7.03, 44.23), (7.53, 43.79), (6.93, 43.43), (6.18, 43.10), (5.35, 43.21),
    (4.59, 43.38), (3.96, 43.54), (3.08, 43.06), (3.17, 42.44), (2.53, 42.33), (1.72, 42.51),
    (0.68, 42.84), (-0.31, 42.84), (-1.10, 43.02), (-1.78, 43.37), (-1.45, 43.97), (-1.25, 44.65),
    (-1.16, 45.83), (-1.81, 46.49), (-2.15, 47.11), (-2.96, 47.55), (-4.49, 47.96), (-4.77, 48.51),
    (-3.56, 48.81), (-1.37, 48.64),
]
PLANET_TILES = (4 ** 23 - 1) // 3

# The 1M region: an 866 x 866 rectangle at z16 (starting on a multiple of 2^10), zooms 6-16: 1,000,490 tiles.
M_MINZOOM, M_MAXZOOM, M_X0, M_Y0, M_SIDE = 6, 16, 33792, 22528, 866
M_VERSION = 1


def million_bbox():
    inset = 1e-7
    return [lng_of(M_X0, M_MAXZOOM) + inset, lat_of(M_Y0 + M_SIDE, M_MAXZOOM) + inset,
            lng_of(M_X0 + M_SIDE, M_MAXZOOM) - inset, lat_of(M_Y0, M_MAXZOOM) - inset]


def tiny_mvt():
    feature = field_bytes(2, field_varint(1, 1) + field_varint(3, 1) + field_bytes(4, varint(9) + varint(4096) + varint(4096)))
    layer = field_varint(15, 2) + field_bytes(1, b"one") + feature + field_varint(5, 4096)
    return field_bytes(3, layer)


def build_million_mbtiles(path):
    """An MBTiles file (map + images, tiles a view) with every tile of the 1M cover -> one blob."""
    box = million_bbox()
    stamp = path + ".json"
    key = {"version": M_VERSION, "bbox": box, "zooms": [M_MINZOOM, M_MAXZOOM]}
    if os.path.exists(path) and os.path.exists(stamp):
        with open(stamp) as f:
            meta = json.load(f)
        if all(meta.get(k) == v for k, v in key.items()):
            return meta["count"], 0.0
    import time
    started = time.monotonic()
    tmp = path + ".tmp"
    if os.path.exists(tmp):
        os.remove(tmp)
    db = sqlite3.connect(tmp)
    db.executescript("""
        PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
        CREATE TABLE metadata (name TEXT, value TEXT);
        CREATE TABLE map (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_id TEXT);
        CREATE TABLE images (tile_data BLOB, tile_id TEXT);
        CREATE VIEW tiles AS SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column,
            map.tile_row AS tile_row, images.tile_data AS tile_data
            FROM map JOIN images ON images.tile_id = map.tile_id;
    """)
    db.executemany("INSERT INTO metadata VALUES (?, ?)", [
        ("name", "one tile everywhere"), ("format", "pbf"), ("minzoom", str(M_MINZOOM)), ("maxzoom", str(M_MAXZOOM)),
        ("bounds", ",".join(repr(v) for v in box))])
    db.execute("INSERT INTO images VALUES (?, 'one')", (tiny_mvt(),))
    count = 0
    for z in range(M_MINZOOM, M_MAXZOOM + 1):
        tiles = cover(box, z)
        count += len(tiles)
        top = (1 << z) - 1
        db.executemany("INSERT INTO map VALUES (?, ?, ?, 'one')", ((z, x, top - y) for (_, x, y) in tiles))
    db.execute("CREATE UNIQUE INDEX map_index ON map (zoom_level, tile_column, tile_row)")
    db.execute("CREATE UNIQUE INDEX images_id ON images (tile_id)")
    db.commit()
    db.close()
    os.replace(tmp, path)
    key["count"] = count
    with open(stamp, "w") as f:
        json.dump(key, f)
    return count, time.monotonic() - started


def write_job(path, name, region, tilesets, maxtiles=None, origins=None):
    job = {"version": 1, "name": name, "regions": [dict(region, tilesets=tilesets)]}
    if origins:
        job["origins"] = origins
    if maxtiles:
        job["limits"] = {"maxTiles": maxtiles}
    with open(path, "w") as f:
        json.dump(job, f, indent=1)
    return path


def plan_json(stdout_path):
    try:
        with open(stdout_path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def measure_plan(provision, job, store, work, name, reps, timeout=120):
    runs = []
    doc = None
    for rep in range(reps):
        out = os.path.join(work, "logs", f"plan-{name}-{rep}.json")
        err = os.path.join(work, "logs", f"plan-{name}-{rep}.err")
        m = run_measured([provision, "plan", job, "--store", store, "--json", "--quiet"],
                         stdout_path=out, stderr_path=err, timeout=timeout)
        with open(err, errors="replace") as f:
            m["stderr"] = f.read().strip()[-400:]
        doc = plan_json(out) if m["rc"] == 0 else None
        runs.append(m)
    walls = [r["wall"] for r in runs]
    return {"seconds": statistics.median(walls), "runs": walls, "peakRSSMB": max(r["rssMB"] for r in runs),
            "cpuSeconds": statistics.median(r["cpu"] for r in runs), "rc": runs[-1]["rc"],
            "timedOut": runs[-1]["timedOut"], "stderr": runs[-1]["stderr"]}, doc


def run_plans(args):
    work = os.path.join(args.work, "plans")
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)
    prov = args.provision
    reps = 1 if args.quick else 3
    template = "https://tiles.bench.invalid/t/{z}/{x}/{y}.pbf"
    result = {}

    # start-up reference
    france = {"id": "france", "name": "France", "zoom": [0, 14],
              "geometry": {"type": "Polygon", "coordinates": [[list(p) for p in FRANCE + FRANCE[:1]]]}}
    france_job = write_job(os.path.join(work, "france.json"), "France z0-14", france, [template])
    startup = [run_measured([prov, "validate", france_job, "--quiet"])["wall"] for _ in range(5)]
    result["startupSeconds"] = statistics.median(startup)

    # France against an empty store
    empty = os.path.join(args.fs, "plans-empty-store")
    shutil.rmtree(empty, ignore_errors=True)
    m, doc = measure_plan(prov, france_job, empty, work, "france", reps)
    m["tiles"] = doc["summary"]["tilesToDownload"] if doc else None
    result["france"] = m
    log(f"plan France z0-14 (empty store): {m['tiles']} tiles in {m['seconds']:.3f} s, rss {m['peakRSSMB']:.0f} MB")

    # 1M region: build the origin, apply, then plan against the store holding it
    mbtiles = os.path.join(args.cache, "million.mbtiles")
    count, build_seconds = build_million_mbtiles(mbtiles)
    log(f"1M origin: {count} tiles in {mbtiles}" + (f" (built in {build_seconds:.1f} s)" if build_seconds else " (cached)"))
    region = {"id": "million", "name": "One million tiles", "bbox": million_bbox(), "zoom": [M_MINZOOM, M_MAXZOOM]}
    origin_prefix = "https://tiles.bench.invalid/t/"
    mjob = write_job(os.path.join(work, "million.json"), "1M tiles", region, [template], maxtiles=2_000_000,
                     origins={origin_prefix: "mbtiles:" + mbtiles})
    store = os.path.join(args.fs, "plans-million-store")
    fresh_dir(store)
    shutil.rmtree(store)
    report = os.path.join(work, "logs", "million-apply.report.json")
    apply_m = run_measured([prov, "apply", mjob, "--store", store, "--report", report, "--quiet"],
                           stdout_path=os.path.join(work, "logs", "million-apply.out"),
                           stderr_path=os.path.join(work, "logs", "million-apply.err"), timeout=900)
    stored = 0
    db = os.path.join(store, "offline.db")
    if apply_m["rc"] == 0 and os.path.exists(db):
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            stored = con.execute("SELECT count(*) FROM region_tiles").fetchone()[0]
    result["millionApply"] = {"tiles": count, "linkedTiles": stored, "seconds": apply_m["wall"],
                              "cpuSeconds": apply_m["cpu"], "peakRSSMB": apply_m["rssMB"], "rc": apply_m["rc"],
                              "storeBytes": os.path.getsize(db) if os.path.exists(db) else 0}
    if os.path.exists(report):
        with open(report) as f:
            result["millionApply"]["durations"] = json.load(f).get("durations")
    log(f"apply 1M region from MBTiles: rc {apply_m['rc']}, {stored} tiles linked in {apply_m['wall']:.1f} s, "
        f"cpu {apply_m['cpu']:.1f} s, rss {apply_m['rssMB']:.0f} MB")
    if apply_m["rc"] == 0:
        m, doc = measure_plan(prov, mjob, store, work, "million", reps)
        if doc:
            m["tiles"] = doc["summary"]["tiles"]
            m["hasChanges"] = doc["hasChanges"]
        result["millionPlan"] = m
        log(f"plan 1M region against the store holding it: {m['seconds']:.3f} s, rss {m['peakRSSMB']:.0f} MB, "
            f"{m.get('tiles')}, changes: {m.get('hasChanges')}")
    else:
        result["millionPlan"] = {"error": f"apply failed with {apply_m['rc']}"}
    shutil.rmtree(store, ignore_errors=True)

    # planet z0-22
    planet = {"id": "planet", "name": "Planet", "bbox": [-180, -85.0511, 180, 85.0511], "zoom": [0, 22]}
    pjob = write_job(os.path.join(work, "planet.json"), "planet z0-22", planet, [template])
    m, _ = measure_plan(prov, pjob, empty, work, "planet", 5)
    m["expectedTiles"] = PLANET_TILES
    result["planetRefusal"] = m
    log(f"plan planet z0-22 (default limit): exit {m['rc']} in {m['seconds'] * 1000:.1f} ms: {m['stderr'][:160]}")
    seconds = 5 if args.quick else 10
    hjob = write_job(os.path.join(work, "planet-unlimited.json"), "planet z0-22", planet, [template],
                     maxtiles=PLANET_TILES)
    m, doc = measure_plan(prov, hjob, empty, work, "planet-unlimited", 1, timeout=seconds)
    m["timeoutSeconds"] = seconds
    if doc:
        m["tiles"] = doc["summary"]["tilesToDownload"]
    result["planetUnlimited"] = m
    log(f"plan planet z0-22 (limits.maxTiles raised): " +
        (f"stopped after {seconds} s" if m["timedOut"] else f"exit {m['rc']} in {m['seconds']:.2f} s"))
    return result
