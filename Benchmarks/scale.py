"""Part three of Benchmarks/run: provision at scale (issue 12, point 4).

- **Apply**: a region of 1,000,490 tiles (z6-16; `--quick`: 200,080 tiles) applied from an MBTiles
  origin of distinct tiles of a realistic size mix (gzip-wrapped MVT: most 100-2,000 bytes, a few
  2-20 KB, a tail of 20-60 KB city tiles; ~1.7 GB for 1M; deterministic from a seed, cached in
  BENCH_CACHE), against the `sqlite3` shell copying the same rows into a fresh file with the schema
  of a store provision wrote (`ATTACH` the MBTiles, `INSERT INTO tiles SELECT ...`, the region links,
  one transaction): the physical limit of the store write.
- **Shards**: the same job applied as `--shard I/4` into four stores one after another (the sum is
  the wall time of one machine, the max that of four), then `provision merge` of the four, compared
  byte for byte with the single apply (offline.db and provision.lock.json).
- **10M plan**: a region of ~10,000,000 tiles planned against an empty store and against the store
  of the apply above.
- **HTTPS + HTTP/2**: the 20,460-tile fixture of part one from nginx over TLS with HTTP/2 on
  loopback (a CA the run makes, passed through CURL_CA_BUNDLE): provision against
  `curl --parallel --http2` (multiplexed, writes files) and `h2load` (the ceiling, writes nothing).

Every tool runs under GNU time (wall, CPU, peak RSS) and writes into the run's fresh file system.

SCALE_CASES (environment; words of `apply shards plan h2`, default all) runs only some cases, e.g.
`SCALE_CASES="apply shards" Benchmarks/run --scale-only` for the apply, the shards and the merge; the
apply and its sqlite3 peer always run (the merge and the plan against a store compare with them).
"""
import gzip
import json
import os
import re
import random
import shutil
import sqlite3
import statistics
import struct
import subprocess
import sys
import time
import zlib

from bench import fresh_dir, log, run_measured, tail
from make_fixture import LayerBuilder, cover, lat_of, lng_of, make_tile
from pbwire import field_bytes, field_varint, int_value, string_value, varint, zigzag

FIXTURE_VERSION = 1
SEED = 20261202
EPOCH = "1767225600"  # SOURCE_DATE_EPOCH of every apply here (2026-01-01), so stores can be compared
TEMPLATE = "https://tiles.scale.invalid/t/{z}/{x}/{y}.pbf"
ORIGIN_PREFIX = "https://tiles.scale.invalid/t/"

# Regions: a SIDE x SIDE rectangle at z16 starting on a multiple of 2^10 (as plans.py's 1M region),
# zooms 6-16; the cover at every zoom is what provision's half-open rule gives.
MINZOOM, MAXZOOM, X0, Y0 = 6, 16, 33792, 22528
SIDES = {"full": 866, "quick": 387}        # 1,000,490 and 200,080 tiles
PLAN_SIDE = 2738                           # 9,997,158 tiles (plan only)

# Size classes of the stored (gzip) bytes: (name, share of tiles, low, high, bases, spread)
CLASSES = [
    ("small", 0.925, 100, 2_000, 48, "log"),    # ocean, fields, forest: a few polygons
    ("mid", 0.06, 2_000, 20_000, 24, "log"),    # villages, suburbs
    ("city", 0.015, 20_000, 60_000, 24, "lin"),  # city centres
]


def region_bbox(side):
    inset = 1e-7
    return [lng_of(X0, MAXZOOM) + inset, lat_of(Y0 + side, MAXZOOM) + inset,
            lng_of(X0 + side, MAXZOOM) - inset, lat_of(Y0, MAXZOOM) - inset]


def region_tiles(side):
    box = region_bbox(side)
    for z in range(MINZOOM, MAXZOOM + 1):
        yield from cover(box, z)


def region_count(side):
    box = region_bbox(side)
    return sum(len(cover(box, z)) for z in range(MINZOOM, MAXZOOM + 1))


# --- tile bodies ---------------------------------------------------------------------------------

def small_tile(rng, target):
    """A sparse tile (ocean, fields): one layer of a tile-wide polygon and seeded random rings."""
    values = [string_value(v) for v in (b"water", b"land", b"grass", b"sand", b"wood")]
    features = [field_bytes(2, field_varint(1, 1) + field_bytes(2, varint(0) + varint(0)) + field_varint(3, 3) +
                            field_bytes(4, varint(9) + varint(zigzag(-64)) + varint(zigzag(-64)) + varint((3 << 3) | 2) +
                                        varint(zigzag(4224)) + varint(0) + varint(0) + varint(zigzag(4224)) +
                                        varint(zigzag(-4224)) + varint(0) + varint(15)))]
    size = len(features[0])
    fid = 2
    from make_fixture import DELTAS
    while size < target:
        points = rng.randint(4, 40)
        geometry = varint(9) + varint(zigzag(rng.randrange(4096))) + varint(zigzag(rng.randrange(4096))) + \
            varint(((points - 1) << 3) | 2) + rng.randbytes(2 * (points - 1)).translate(DELTAS) + varint(15)
        feature = field_bytes(2, field_varint(1, fid) + field_bytes(2, varint(0) + varint(rng.randrange(len(values)))) +
                              field_varint(3, 3) + field_bytes(4, geometry))
        features.append(feature)
        size += len(feature)
        fid += 1
    layer = field_varint(15, 2) + field_bytes(1, b"landcover") + b"".join(features) + field_bytes(3, b"class") + \
        b"".join(field_bytes(4, v) for v in values) + field_varint(5, 4096)
    return field_bytes(3, layer)


def base_tiles(seed):
    """Per class, bases at evenly spread sizes: (raw MVT, deflate data ending in a sync flush, crc32)."""
    rng = random.Random(seed)
    names = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 14))).capitalize()
             + b" " + rng.choice([b"Street", b"Avenue", b"Road", b"Lane"]) for _ in range(200)]
    bases = {}
    for name, _, low, high, count, spread in CLASSES:
        out = []
        for i in range(count):
            f = (i + 0.5) / count
            want = low * (high / low) ** f if spread == "log" else low + (high - low) * f
            # gzip keeps ~70% of these bodies: ask for the raw size that gives the stored size wanted
            raw_target = max(int(want / 0.72) - 60, 40)
            raw = small_tile(rng, raw_target) if name == "small" else make_tile(rng, raw_target, names)
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            deflated = c.compress(raw) + c.flush(zlib.Z_SYNC_FLUSH)
            out.append((raw, deflated, zlib.crc32(raw)))
        bases[name] = out
    return bases


GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"


_LAYER_HEAD = field_varint(15, 2) + field_bytes(1, b"tile")
_LAYER_TAIL = field_bytes(3, b"id")
_EXTENT = field_varint(5, 4096)
_FEATURE_TAGS = field_bytes(2, varint(0) + varint(0)) + field_varint(3, 1)


def distinct_tile(base, ordinal, z, x, y):
    """base's tile plus a layer of its own (a point whose id and attribute are the tile's ordinal
    and key), gzip-wrapped: base's deflate data, then a final stored block with the new layer;
    every tile differs, and none is compressed again."""
    raw, deflated, crc = base
    geometry = b"\x09" + varint(zigzag(x & 4095)) + varint(zigzag(y & 4095))
    feature = b"\x08" + varint(ordinal + 1) + _FEATURE_TAGS + b"\x22" + bytes((len(geometry),)) + geometry
    value = b"\x20" + varint((z << 40) | (x << 20) | y)
    layer = b"".join((_LAYER_HEAD, b"\x12", varint(len(feature)), feature, _LAYER_TAIL,
                      b"\x22", bytes((len(value),)), value, _EXTENT))
    extra = b"\x1a" + varint(len(layer)) + layer
    n = len(extra)
    return b"".join((GZIP_HEADER, deflated, b"\x01", struct.pack("<HH", n, n ^ 0xFFFF), extra,
                     struct.pack("<II", zlib.crc32(extra, crc), (len(raw) + n) & 0xFFFFFFFF)))


def cached_fixture(path, key):
    """The description of the MBTiles fixture at `path` when its stamp matches `key`, else None."""
    stamp = path + ".json"
    if os.path.exists(path) and os.path.exists(stamp):
        with open(stamp) as f:
            meta = json.load(f)
        if all(meta.get(k) == v for k, v in key.items()):
            meta["buildSeconds"] = 0.0
            return meta
    return None


def new_mbtiles(tmp, metadata):
    """A new MBTiles file at `tmp` (any left-over one removed) with `metadata` rows and an empty
    `tiles` table, written without a journal or syncs (a fixture is renamed into place when whole)."""
    for p in (tmp, tmp + "-journal"):
        if os.path.exists(p):
            os.remove(p)
    db = sqlite3.connect(tmp)
    db.executescript("""
        PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
        CREATE TABLE metadata (name TEXT, value TEXT);
        CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
    """)
    db.executemany("INSERT INTO metadata VALUES (?, ?)", metadata)
    return db


def build_mbtiles(path, side, seed=SEED):
    """The MBTiles origin of a region (cached with a stamp); returns its description."""
    stamp = path + ".json"
    key = {"version": FIXTURE_VERSION, "seed": seed, "side": side, "zooms": [MINZOOM, MAXZOOM], "x0": X0, "y0": Y0}
    meta = cached_fixture(path, key)
    if meta:
        return meta
    started = time.monotonic()
    total = region_count(side)
    log(f"scale fixture: generating {total:,} distinct tiles into {path} (once; cached)")
    bases = base_tiles(seed)
    rng = random.Random(seed + 1)
    tmp = path + ".tmp"
    db = new_mbtiles(tmp, [
        ("name", "scale benchmark"), ("format", "pbf"), ("minzoom", str(MINZOOM)), ("maxzoom", str(MAXZOOM)),
        ("bounds", ",".join(repr(v) for v in region_bbox(side))), ("compression", "gzip")])
    thresholds = []
    acc = 0.0
    for name, share, *_ in CLASSES:
        acc += share
        thresholds.append((acc, bases[name]))
    sizes = {name: [0, 0] for name, *_ in CLASSES}
    names = [name for name, *_ in CLASSES]
    batch, done, stored, largest, smallest = [], 0, 0, 0, 1 << 30
    last = time.monotonic()
    # Rows go in key order (z, x, then y from the north), the order provision writes its store in.
    for (z, x, y) in region_tiles(side):
        r = rng.random()
        for ci, (limit, pool) in enumerate(thresholds):
            if r < limit or ci == len(thresholds) - 1:
                break
        data = distinct_tile(pool[rng.randrange(len(pool))], done, z, x, y)
        sizes[names[ci]][0] += 1
        sizes[names[ci]][1] += len(data)
        stored += len(data)
        largest, smallest = max(largest, len(data)), min(smallest, len(data))
        batch.append((z, x, (1 << z) - 1 - y, data))
        done += 1
        if len(batch) == 20_000:
            db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", batch)
            batch = []
            if time.monotonic() - last > 5:
                last = time.monotonic()
                log(f"scale fixture: {done:,}/{total:,} tiles, {stored / 1e6:,.0f} MB")
    if batch:
        db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", batch)
    db.commit()
    log("scale fixture: indexing")
    db.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
    db.commit()
    db.close()
    # a sample is checked here (the apply checks every tile): gzip, and the base plus its own layer
    with sqlite3.connect(f"file:{tmp}?mode=ro", uri=True) as con:
        for (blob,) in con.execute("SELECT tile_data FROM tiles WHERE rowid % 99991 = 1"):
            gzip.decompress(blob)
    os.replace(tmp, path)
    meta = dict(key)
    meta.update({"count": done, "bytes": stored, "minBytes": smallest, "maxBytes": largest,
                 "classes": {n: {"tiles": c, "bytes": b} for n, (c, b) in sizes.items()}})
    with open(stamp, "w") as f:
        json.dump(meta, f, indent=1)
    meta["buildSeconds"] = time.monotonic() - started
    log(f"scale fixture: {done:,} tiles, {stored / 1e9:.2f} GB in {meta['buildSeconds']:.0f} s")
    return meta


def build_ocean_mbtiles(source, path, share=0.6, seed=SEED):
    """`source` (a fixture of build_mbtiles) with a `share` of its tiles, picked at random, replaced
    by one of three small tiles (cached with a stamp): what open ocean and unbroken land do to a
    real tileset, where a few small tiles repeat thousands of times. Returns its description."""
    stamp = path + ".json"
    key = {"version": FIXTURE_VERSION, "seed": seed, "source": os.path.basename(source), "share": share}
    meta = cached_fixture(path, key)
    if meta:
        return meta
    started = time.monotonic()
    rng = random.Random(seed + 2)
    oceans = [gzip.compress(small_tile(rng, target), mtime=0) for target in (80, 120, 160)]
    tmp = path + ".tmp"
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as con:
        db = new_mbtiles(tmp, con.execute("SELECT name, value FROM metadata").fetchall())
        count = repeated = 0
        batch = []
        for z, x, y, data in con.execute("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY rowid"):
            if rng.random() < share:
                data = oceans[rng.randrange(len(oceans))]
                repeated += 1
            batch.append((z, x, y, data))
            count += 1
            if len(batch) == 20_000:
                db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", batch)
                batch = []
        db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", batch)
    db.commit()
    db.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
    db.commit()
    db.close()
    os.replace(tmp, path)
    meta = dict(key)
    meta.update({"count": count, "repeated": repeated, "repeatedBytes": [len(o) for o in oceans]})
    with open(stamp, "w") as f:
        json.dump(meta, f, indent=1)
    meta["buildSeconds"] = time.monotonic() - started
    log(f"ocean fixture: {count:,} tiles, {repeated:,} of them one of three small tiles, in {meta['buildSeconds']:.0f} s")
    return meta


# --- jobs, runs ---------------------------------------------------------------------------------

def write_job(path, side, mbtiles=None, region_id="scale", maxtiles=20_000_000):
    job = {"version": 1, "name": f"scale {side}",
           "regions": [{"id": region_id, "name": "Scale", "bbox": region_bbox(side), "zoom": [MINZOOM, MAXZOOM],
                        "tilesets": [TEMPLATE]}],
           "limits": {"maxTiles": maxtiles}}
    if mbtiles:
        job["origins"] = {ORIGIN_PREFIX: "mbtiles:" + mbtiles}
    with open(path, "w") as f:
        json.dump(job, f, indent=1)
    return path


def median_entry(entries):
    """The run of median time among `entries` (runs that failed count as the slowest), with every
    run's seconds and the highest peak RSS of all."""
    ranked = sorted(entries, key=lambda e: (0 if e.get("tiles") else 1, e.get("seconds", 0)))
    chosen = dict(ranked[(len(ranked) - 1) // 2] if all(e.get("tiles") for e in entries) else ranked[-1])
    chosen["runs"] = [round(e.get("seconds", 0), 2) for e in entries]
    chosen["peakRSSMB"] = max(e.get("peakRSSMB", 0) for e in entries)
    return chosen


def warm(path):
    """Reads a file once so that every tool starts from the same (warm) page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def count_rows(db, table="tiles"):
    if not os.path.exists(db):
        return 0
    # closed at once: `with` on a connection only ends a transaction, and a connection left open
    # keeps a deleted store's blocks allocated (three turns of the 1M apply filled the disk)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        con.close()


def store_bytes(store):
    db = os.path.join(store, "offline.db")
    return os.path.getsize(db) if os.path.exists(db) else 0


def same_bytes(a, b):
    if not (os.path.exists(a) and os.path.exists(b)):
        return False
    return subprocess.run(["cmp", "-s", a, b]).returncode == 0


class Scale:
    def __init__(self, args):
        self.args = args
        self.work = os.path.join(args.work, "scale")
        self.logs = os.path.join(self.work, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.fs = args.fs
        self.prov = args.provision
        self.env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH)
        self.result = {"part": "scale", "epoch": int(EPOCH), "filesystem": args.fs_kind}

    def measure(self, name, cmd, env=None, timeout=1800):
        m = run_measured(cmd, env=env or self.env, timeout=timeout,
                         stdout_path=os.path.join(self.logs, name + ".out"),
                         stderr_path=os.path.join(self.logs, name + ".err"))
        m["stderr"] = tail(os.path.join(self.logs, name + ".err"), 3)[-400:]
        return m

    def entry(self, m, tiles, **extra):
        e = {"tiles": tiles, "seconds": m["wall"], "tilesPerSecond": tiles / m["wall"] if tiles and m["wall"] > 0 else 0,
             "cpuSeconds": m["cpu"], "peakRSSMB": m["rssMB"], "rc": m["rc"], "timedOut": m["timedOut"]}
        if m["rc"] != 0:
            e["error"] = m["stderr"]
        e.update(extra)
        return e

    # 1. the apply and its raw sqlite3 peer
    def apply_part(self):
        side = SIDES["quick" if self.args.quick else "full"]
        mbtiles = os.path.join(self.args.cache, f"scale-{side}.mbtiles")
        fx = build_mbtiles(mbtiles, side)
        self.result["fixture"] = {k: fx[k] for k in ("count", "bytes", "minBytes", "maxBytes", "classes", "seed",
                                                     "buildSeconds")}
        count = fx["count"]
        job = write_job(os.path.join(self.work, "apply.json"), side, mbtiles)
        self.mbtiles, self.count, self.job, self.side = mbtiles, count, job, side

        # the schema and pragmas of a store provision wrote: a one-tile apply of the same origin
        tiny = os.path.join(self.work, "schema.json")
        with open(tiny, "w") as f:
            json.dump({"version": 1, "name": "schema", "origins": {ORIGIN_PREFIX: "mbtiles:" + mbtiles},
                       "regions": [{"id": "schema", "name": "Schema", "bbox": region_bbox(side),
                                    "zoom": [MINZOOM, MINZOOM], "tilesets": [TEMPLATE]}]}, f)
        schema_store = os.path.join(self.fs, "scale-schema")
        shutil.rmtree(schema_store, ignore_errors=True)
        m = self.measure("schema-apply", [self.prov, "apply", tiny, "--store", schema_store, "--quiet"])
        if m["rc"] != 0:
            raise SystemExit(f"scale: the one-tile apply failed ({m['rc']}): {m['stderr']}")
        db = os.path.join(schema_store, "offline.db")
        schema = subprocess.run(["sqlite3", db, ".schema"], capture_output=True, text=True, check=True).stdout
        schema = "\n".join(line for line in schema.splitlines() if "sqlite_sequence" not in line)
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            page_size = con.execute("PRAGMA page_size").fetchone()[0]
            auto_vacuum = con.execute("PRAGMA auto_vacuum").fetchone()[0]
            cols = [r[1] for r in con.execute("PRAGMA table_info(tiles)")]
        shutil.rmtree(schema_store, ignore_errors=True)
        self.result["storeSchema"] = {"pageSize": page_size, "autoVacuum": auto_vacuum}

        warm(mbtiles)
        # provision's apply and the sqlite3 copy take turns, SCALE_REPS times (default 3, 1 with
        # --quick): this VM has slow spells that move one run by up to a fifth; the medians hold.
        reps = 1 if self.args.quick else max(1, int(os.environ.get("SCALE_REPS", "3")))
        # sqlite3: the same rows into the same schema, in the same order, one transaction
        raw_dir = os.path.join(self.fs, "scale-sqlite3")
        raw_db = os.path.join(raw_dir, "offline.db")
        values = {"url_template": f"'{TEMPLATE}'", "pixel_ratio": "1", "z": "zoom_level", "x": "tile_column",
                  "y": "(1 << zoom_level) - 1 - tile_row", "expires": "NULL", "modified": EPOCH, "etag": "NULL",
                  "data": "tile_data", "compressed": "1", "accessed": EPOCH, "must_revalidate": "0"}
        insert_cols = [c for c in cols if c in values]
        script = f"""PRAGMA page_size = {page_size};
PRAGMA auto_vacuum = {auto_vacuum};
PRAGMA journal_mode = DELETE;
PRAGMA synchronous = FULL;
{schema}
ATTACH DATABASE '{mbtiles}' AS origin;
BEGIN;
INSERT INTO regions (id, definition, description) VALUES (1, '{{}}', NULL);
INSERT INTO tiles ({", ".join(insert_cols)})
  SELECT {", ".join(values[c] for c in insert_cols)} FROM origin.tiles ORDER BY rowid;
INSERT INTO region_tiles (region_id, tile_id) SELECT 1, id FROM tiles ORDER BY id;
COMMIT;
"""
        script_path = os.path.join(self.work, "copy.sql")
        with open(script_path, "w") as f:
            f.write(script)
        applies, copies = [], []
        single = os.path.join(self.fs, "scale-single")
        report = os.path.join(self.logs, "apply.report.json")
        for rep in range(reps):
            # provision, one apply (the store of the last one is kept for the shards' comparison)
            fresh_dir(single)
            shutil.rmtree(single)
            m = self.measure("apply", [self.prov, "apply", job, "--store", single, "--report", report, "--quiet"])
            linked = count_rows(os.path.join(single, "offline.db"), "region_tiles") if m["rc"] == 0 else 0
            e = self.entry(m, linked, storeBytes=store_bytes(single))
            if os.path.exists(report):
                with open(report) as f:
                    e["durations"] = json.load(f).get("durations")
            applies.append(e)
            log(f"scale apply {rep + 1}/{reps}: rc {m['rc']}, {linked:,}/{count:,} tiles in {m['wall']:.1f} s "
                f"({e['tilesPerSecond']:,.0f}/s), cpu {m['cpu']:.1f} s, rss {m['rssMB']:.0f} MB")
            # sqlite3: the same rows into the same schema, in the same order, one transaction
            fresh_dir(raw_dir)
            m = self.measure("sqlite3-copy", ["sqlite3", "-bail", raw_db, ".read " + script_path])
            got = count_rows(raw_db, "region_tiles") if m["rc"] == 0 else 0
            copies.append(self.entry(m, got, storeBytes=os.path.getsize(raw_db) if os.path.exists(raw_db) else 0))
            log(f"scale sqlite3 copy {rep + 1}/{reps}: rc {m['rc']}, {got:,} tiles in {m['wall']:.1f} s, "
                f"rss {m['rssMB']:.0f} MB" + (f": {m['stderr']}" if m["rc"] else ""))
            shutil.rmtree(raw_dir, ignore_errors=True)
        self.result["apply"] = median_entry(applies)
        self.result["sqlite3"] = median_entry(copies)
        self.single = single

    # 2. four shards and their merge
    def shard_part(self, shards=4):
        runs = []
        stores = []
        for i in range(shards):
            store = os.path.join(self.fs, f"scale-shard-{i}")
            shutil.rmtree(store, ignore_errors=True)
            m = self.measure(f"shard-{i}", [self.prov, "apply", self.job, "--shard", f"{i}/{shards}", "--store", store,
                                            "--quiet"])
            got = count_rows(os.path.join(store, "offline.db")) if m["rc"] == 0 else 0
            runs.append(self.entry(m, got, storeBytes=store_bytes(store)))
            stores.append(store)
            log(f"scale shard {i}/{shards}: rc {m['rc']}, {got:,} tiles in {m['wall']:.1f} s, rss {m['rssMB']:.0f} MB"
                + (f": {m['stderr']}" if m["rc"] else ""))
        ok = all(r["rc"] == 0 for r in runs)
        walls = [r["seconds"] for r in runs]
        self.result["shards"] = {"count": shards, "runs": runs, "ok": ok, "sumSeconds": sum(walls),
                                 "maxSeconds": max(walls), "tiles": sum(r["tiles"] for r in runs),
                                 "peakRSSMB": max(r["peakRSSMB"] for r in runs),
                                 "cpuSeconds": sum(r["cpuSeconds"] for r in runs)}
        usage = subprocess.run([self.prov, "merge", "--help"], capture_output=True, text=True)
        if usage.returncode != 0:
            log("merge: not available in this build")
            self.result["merge"] = {"available": False, "note": "merge: not available in this build"}
        elif not ok:
            self.result["merge"] = {"available": True, "error": "a shard failed"}
        else:
            merged = os.path.join(self.fs, "scale-merged")
            shutil.rmtree(merged, ignore_errors=True)
            m = self.measure("merge", [self.prov, "merge", *stores, "--store", merged, "--quiet"])
            got = count_rows(os.path.join(merged, "offline.db")) if m["rc"] == 0 else 0
            db_same = same_bytes(os.path.join(merged, "offline.db"), os.path.join(self.single, "offline.db"))
            lock_same = same_bytes(os.path.join(merged, "provision.lock.json"),
                                   os.path.join(self.single, "provision.lock.json"))
            self.result["merge"] = self.entry(m, got, available=True, storeBytes=store_bytes(merged),
                                              offlineDbIdentical=db_same, lockIdentical=lock_same,
                                              byteIdentical=db_same and lock_same)
            log(f"scale merge: rc {m['rc']}, {got:,} tiles in {m['wall']:.1f} s, rss {m['rssMB']:.0f} MB; "
                f"byte-identical: offline.db {'yes' if db_same else 'no'}, lock {'yes' if lock_same else 'no'}"
                + (f": {m['stderr']}" if m["rc"] else ""))
            shutil.rmtree(merged, ignore_errors=True)
        for store in stores:
            shutil.rmtree(store, ignore_errors=True)

    # 3. a 10M-tile plan
    def plan_part(self):
        count = region_count(PLAN_SIDE)
        plans = {}
        for name, store, region_id in (("empty", os.path.join(self.fs, "scale-empty-store"), "ten-million"),
                                       ("store", self.single, "scale")):
            if name == "store" and not os.path.exists(os.path.join(store, "offline.db")):
                continue
            if name == "empty":
                shutil.rmtree(store, ignore_errors=True)
            job = write_job(os.path.join(self.work, f"plan-{name}.json"), PLAN_SIDE, self.mbtiles,
                            region_id=region_id, maxtiles=20_000_000)
            # the empty-store plan is short: the median of 3 (1 with --quick); the diff runs once
            reps = 1 if self.args.quick or name == "store" else 3
            ms = [self.measure(f"plan10m-{name}", [self.prov, "plan", job, "--store", store, "--json", "--quiet"],
                               timeout=300) for _ in range(reps)]
            m = sorted(ms, key=lambda r: r["wall"])[len(ms) // 2]
            m["rssMB"] = max(r["rssMB"] for r in ms)
            e = self.entry(m, count, runs=[r["wall"] for r in ms])
            try:
                with open(os.path.join(self.logs, f"plan10m-{name}.out")) as f:
                    e["summary"] = json.load(f).get("summary")
            except (OSError, ValueError):
                pass
            plans[name] = e
            log(f"scale plan 10M ({name}): rc {m['rc']}, {count:,} tiles in {m['wall']:.2f} s, rss {m['rssMB']:.0f} MB"
                + (f": {m['stderr']}" if m["rc"] else ""))
        self.result["plan10M"] = plans

    # 4. HTTPS + HTTP/2
    def h2_part(self):
        """HTTPS with HTTP/2 (one multiplexed connection) and, from the same nginx, HTTPS with
        HTTP/1.1 only (a connection per request in flight): provision, curl and h2load."""
        self.guarded("h2", lambda: self.tls_part("h2", self.args.h2_port, http2=True))
        self.guarded("h1s", lambda: self.tls_part("h1s", self.args.h1s_port, http2=False))

    def tls_part(self, key, port, http2):
        a = self.args
        if not port:
            self.result[key] = {"note": "HTTPS server not started"}
            return
        with open(os.path.join(a.fixture, "fixture.json")) as f:
            fixture = json.load(f)
        with open(os.path.join(a.fixture, "paths.txt")) as f:
            paths = [line.strip() for line in f if line.strip()]
        base = f"https://127.0.0.1:{port}"
        conns = 16
        out_curl = os.path.join(self.fs, f"{key}-curl")
        curl_list = os.path.join(self.work, f"{key}-curl.list")
        uris = os.path.join(self.work, f"{key}-uris.txt")
        with open(curl_list, "w") as f:
            for p in paths:
                f.write(f'url = "{base}{p}"\noutput = "{out_curl}/{p[len("/tiles/"):]}"\n')
        with open(uris, "w") as f:
            f.write("".join(f"{base}{p}\n" for p in paths))
        job = os.path.join(self.work, f"{key}-job.json")
        with open(job, "w") as f:
            json.dump({"version": 1, "name": f"https {key}",
                       "regions": [{"id": "fixture", "name": "Fixture", "bbox": fixture["bbox"],
                                    "zoom": [fixture["minzoom"], fixture["maxzoom"]],
                                    "tilesets": ["https://tiles.h2.invalid/tiles/{z}/{x}/{y}.pbf"]}],
                       "origins": {"https://tiles.h2.invalid/": base + "/"},
                       "download": {"concurrency": conns, "retries": 3, "timeoutSeconds": 30}}, f)
        env = dict(self.env, CURL_CA_BUNDLE=a.h2_ca)
        reps = 1 if a.quick else 3
        tools = ["h2load", "curl", "provision"]
        runs = {t: [] for t in tools}
        n = len(paths)
        for rep in range(reps):  # round the tools, as part one does
            for tool in tools:
                name = f"{key}-{tool}-{rep}"
                if tool == "h2load":
                    # HTTP/2: one connection with `conns` streams; HTTP/1.1: `conns` connections.
                    shape = ["-c", "1", "-m", str(conns)] if http2 else ["--h1", "-c", str(conns)]
                    m = self.measure(name, ["h2load", "-n", str(n), *shape, "-i", uris], env=env)
                    got = 0
                    with open(os.path.join(self.logs, name + ".out"), errors="replace") as f:
                        for line in f:
                            if line.startswith("requests:"):
                                parts = line.replace(",", "").split()
                                got = int(parts[parts.index("succeeded") - 1]) if "succeeded" in parts else 0
                            if line.startswith("finished in"):
                                # h2load's own duration, without its start-up (as wrk's in part one)
                                m["wall"] = h2load_seconds(line.split()[2])
                    ok = got == n
                elif tool == "curl":
                    fresh_dir(out_curl)
                    # Multiplexed as provision and h2load are: --parallel-immediate would open a
                    # connection per transfer instead (measured: no faster, curl is CPU-bound here).
                    m = self.measure(name, ["curl", "-sS", "--fail", "--http2" if http2 else "--http1.1", "--parallel",
                                            "--parallel-max", str(conns), "--cacert", a.h2_ca, "--create-dirs",
                                            "-K", curl_list], env=env)
                    got = sum(len(files) for _, _, files in os.walk(out_curl))
                    ok = m["rc"] == 0 and got == n
                    shutil.rmtree(out_curl, ignore_errors=True)
                else:
                    store = os.path.join(self.fs, f"{key}-provision")
                    fresh_dir(store)
                    shutil.rmtree(store)
                    m = self.measure(name, [self.prov, "apply", job, "--store", store, "--quiet"], env=env)
                    got = count_rows(os.path.join(store, "offline.db")) if m["rc"] == 0 else 0
                    ok = m["rc"] == 0 and got == n
                    shutil.rmtree(store, ignore_errors=True)
                e = self.entry(m, got if ok else 0)
                if not ok:
                    e["error"] = f"rc {m['rc']}, {got}/{n}: {m['stderr']}"
                runs[tool].append(e)
                log(f"{key} {tool:9} rep {rep + 1}/{reps}: {got:,} tiles in {m['wall']:.2f} s = "
                    f"{e['tilesPerSecond']:,.0f}/s, cpu {m['cpu']:.2f} s, rss {m['rssMB']:.0f} MB"
                    + (f"  [{e['error']}]" if not ok else ""))
        summary = {"tiles": n, "bytes": fixture["bytes"], "connections": conns, "reps": reps, "http2": http2,
                   "tools": {}}
        for tool in tools:
            ok = [r for r in runs[tool] if r["tiles"]]
            t = {"runs": runs[tool], "ok": len(ok) == len(runs[tool])}
            if ok:
                t["tilesPerSecond"] = statistics.median(r["tilesPerSecond"] for r in ok)
                t["seconds"] = statistics.median(r["seconds"] for r in ok)
                t["peakRSSMB"] = max(r["peakRSSMB"] for r in ok)
                t["cpuSeconds"] = statistics.median(r["cpuSeconds"] for r in ok)
                t["tiles"] = n
            else:
                t["error"] = runs[tool][-1].get("error", "failed")
            summary["tools"][tool] = t
        self.result[key] = summary

    def run(self):
        self.result["quick"] = bool(self.args.quick)
        if self.args.https_only:
            self.h2_part()
            return self.result
        cases = set(os.environ.get("SCALE_CASES", " ".join(CASES)).replace(",", " ").split())
        unknown = cases - set(CASES)
        if unknown:
            raise SystemExit(f"scale: unknown SCALE_CASES {' '.join(sorted(unknown))} (known: {' '.join(CASES)})")
        self.result["cases"] = [c for c in CASES if c in cases]
        self.guarded("apply", self.apply_part)  # always: the shards' merge and the plan against a store compare with it
        if "shards" in cases:
            self.guarded("merge", self.shard_part)
        if "plan" in cases:
            self.guarded("plan10M", self.plan_part)
        shutil.rmtree(self.single, ignore_errors=True)
        if "h2" in cases:
            self.h2_part()
        return self.result

    def guarded(self, key, part):
        """Runs one case; a case that fails is an error row of the table under `key`, never the end
        of the run (the other cases and the table are kept)."""
        try:
            part()
        except Exception as error:  # noqa: BLE001 - any failure of a case is reported, not raised
            log(f"scale: the {key} case failed: {type(error).__name__}: {error}")
            entry = self.result.get(key)
            entry = entry if isinstance(entry, dict) else {}
            entry["error"] = f"{type(error).__name__}: {error}"
            self.result[key] = entry


def h2load_seconds(text):
    """h2load's duration ("1.42s,", "998.14ms,", "850us,") in seconds: under a second it prints
    milliseconds or microseconds, which a plain float() of the number took for seconds or failed on."""
    match = re.match(r"^([0-9]+(?:\.[0-9]+)?)(us|ms|s|m|h)", text.strip().rstrip(","))
    if not match:
        raise ValueError(f"h2load duration not understood: {text!r}")
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}[match.group(2)]
    return float(match.group(1)) * scale


# The cases of this part, in the order they run (SCALE_CASES picks some; the apply always runs).
CASES = ("apply", "shards", "plan", "h2")


def run_scale(args):
    return Scale(args).run()
