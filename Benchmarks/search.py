"""Part six of Benchmarks/run: search packs (issue 23, point 7).

- **Fixture** (deterministic from a seed, built once and cached in BENCH_CACHE): an MBTiles origin of
  OpenMapTiles vector tiles (z6-14) of a made-up country strip in three regions side by side, an
  urban, a suburban and a rural one, each a third of the width. The named features are drawn once,
  in world coordinates, per cell of the tile grid (`FEATURES`: towns per z11 cell, POIs per z14 cell,
  streets per z13 cell ...), and every tile holds those of its cells that show at its zoom: a town
  is one point from z9 to z14, a street the same polyline in each tile it crosses at z12-14 (the
  index cuts it to each tile's square), a park the same polygon, so one real-world feature is one
  entry, as in real tiles. Each tile also carries an unnamed land-cover layer of the size its
  density gives (as part three's small tiles), gzip-wrapped. ~100,000 tiles, and ~200,000 (the
  same regions twice as wide) to show whether the build's memory grows with the tile count.
- **Runs** (each under GNU time; the TileJSON with its `vector_layers`, from which the pack tells
  the schema, is served from a directory origin, the tiles from the MBTiles):
  1. `provision apply` of a job with the three regions and one search pack `places` into a new
     store (`--progress json`: the `search-pack` event gives the index build's own seconds,
     entries, bytes and tiles);
  2. the index build alone: `search/places.db` deleted, the same job applied again (the plan
     keeps every tile and builds the pack: "file missing"), so the process's peak RSS is the
     build's (plus the plan of a store that holds everything); median of 3 at 100k (once with
     --quick), once at 200k;
  3. (100k) per region: the job with the pack on that region only (settings change: rebuilt from
     that region's tiles), its seconds, peak RSS, entries and bytes;
  4. (100k, the peer) the `sqlite3` shell loading the built pack's rows, dumped to CSV beforehand,
     into a fresh file with the pack's own schema (FTS4 and R*Tree included), filling the FTS and
     R*Tree indexes, optimizing and vacuuming as the writer does: the physical limit of writing
     those entries, without reading a tile.
"""
import csv
import functools
import json
import os
import random
import shutil
import sqlite3
import struct
import time
import zlib

from bench import log, run_measured, tail
from make_fixture import cover, lat_of, lng_of
from pbwire import field_bytes, field_varint, int_value, string_value, varint, zigzag
from scale import EPOCH, GZIP_HEADER, cached_fixture, count_rows, median_entry, new_mbtiles, small_tile

FIXTURE_VERSION = 1
SEED = 20261205
MINZOOM, MAXZOOM = 6, 14
# The strip at z14: columns X0 .. X0 + 3 * width, rows Y0 .. Y0 + HEIGHT (aligned to z6).
X0, Y0, HEIGHT = 8448, 5632, 274
WIDTHS = {"100k": 91, "200k": 182}   # columns per region at z14
DENSITIES = ["urban", "suburban", "rural"]
EXTENT = 4096
TEMPLATE = "https://tiles.search.invalid/t/{z}/{x}/{y}.pbf"
TILEJSON = "https://tiles.search.invalid/tiles.json"
PACK = "places"

# Named features: (layer, geometry, cell zoom, minzoom, mean count per cell by density, classes).
# Per z14 tile (urban / suburban / rural): POIs 24 / 6 / 0.8, streets 16 / 6 / 2, parks 0.5 / 0.25 /
# 0.08, neighbourhoods 0.75 / 0.25 / 0.03; a village per 32 / 16 / 27 z14 tiles, a town per 64 / 91 /
# 213, a lake per 213 / 107 / 64, a city per 256 / 2,048 / 10,240.
FEATURES = [
    ("place", "point", 9, 6, (4, 0.5, 0.1), ["city"]),
    ("place", "point", 11, 9, (1, 0.7, 0.3), ["town"]),
    ("place", "point", 12, 11, (0.5, 1, 0.6), ["village"]),
    ("place", "point", 13, 12, (3, 1, 0.1), ["suburb", "neighbourhood", "hamlet"]),
    ("water_name", "point", 11, 9, (0.3, 0.6, 1), ["lake"]),
    ("park", "polygon", 13, 12, (2, 1, 0.3), ["park", "nature_reserve"]),
    ("transportation_name", "line", 13, 12, (64, 24, 8),
     ["primary", "secondary", "tertiary", "minor", "minor", "minor", "service", "path"]),
    ("poi", "point", 14, 13, (24, 6, 0.8),
     ["restaurant", "cafe", "shop", "school", "pharmacy", "bank", "fuel", "lodging", "bus", "place_of_worship"]),
]
# The unnamed land-cover layer's raw size by density (bytes): what the decoder inflates besides the names.
FILLER = {"urban": 9_000, "suburban": 3_000, "rural": 800}
LAYERS = ["place", "poi", "transportation_name", "water_name", "park", "landcover", "transportation", "building",
          "water"]
SYLLABLES = ["ka", "lo", "mer", "vin", "sa", "tu", "ri", "hel", "an", "bor", "el", "na", "pe", "ros", "ta", "vik",
             "ul", "dor", "mi", "sten", "ko", "la", "ber", "fen", "gar", "is", "jo", "lin", "mar", "nor", "ost",
             "pra", "quel", "ru", "sil", "tor", "var", "wen", "ye", "zam"]
SUFFIXES = {"transportation_name": ["Street", "Road", "Avenue", "Lane", "Way", "katu", "tie", "gatan"],
            "park": ["Park", "Gardens", "Woods"], "water_name": ["Lake", "Pond", "järvi"],
            "poi": ["Café", "Market", "School", "Pharmacy", "Bank", "Station", "Hotel", "Bakery", "Church", ""],
            "place": [""]}


def region_box(k, width):
    """Region k's bbox (pulled 1e-7 degrees inside its z14 columns, as part three's)."""
    inset = 1e-7
    x0 = X0 + k * width
    return [lng_of(x0, MAXZOOM) + inset, lat_of(Y0 + HEIGHT, MAXZOOM) + inset,
            lng_of(x0 + width, MAXZOOM) - inset, lat_of(Y0, MAXZOOM) - inset]


def fixture_tiles(width):
    """Every tile of the three regions' covers, once each, in key order."""
    tiles = set()
    for k in range(len(DENSITIES)):
        box = region_box(k, width)
        for z in range(MINZOOM, MAXZOOM + 1):
            tiles.update(cover(box, z))
    return sorted(tiles)


def name_of(rng, layer):
    stem = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
    suffix = rng.choice(SUFFIXES[layer])
    if layer == "poi":
        return f"{suffix} {stem}".strip()
    if suffix in ("katu", "tie", "gatan", "järvi"):
        return stem + suffix
    return f"{stem} {suffix}".strip()


class World:
    """The named features of the strip, drawn per grid cell in world units (z14 pixels, 4096 a tile)."""

    def __init__(self, seed, width):
        self.seed, self.width = seed, width
        self.columns = len(DENSITIES) * width

    def density(self, col14):
        return min(max((col14 - X0) // self.width, 0), len(DENSITIES) - 1)

    @functools.lru_cache(maxsize=200_000)
    def cell(self, kind, cz, cx, cy):
        """The features of FEATURES[kind] drawn in cell (cz, cx, cy): [(class, rank, minzoom, name, points)]."""
        layer, shape, _, minzoom, means, classes = FEATURES[kind]
        span = 1 << (MAXZOOM - cz)  # z14 tiles per cell side
        col, row = cx * span, cy * span
        if col + span <= X0 or col >= X0 + self.columns or row + span <= Y0 or row >= Y0 + HEIGHT:
            return ()
        # a tuple of ints hashes the same in every process (PYTHONHASHSEED only salts str and bytes)
        rng = random.Random(hash((self.seed, kind, cz, cx, cy)) & 0xFFFFFFFF)
        mean = means[self.density(col)]
        n = int(mean) + (rng.random() < mean - int(mean))
        # world bounds of the cell, kept inside the strip and 64 units from the cell's edges
        left, top = max(col, X0) * EXTENT, max(row, Y0) * EXTENT
        right, bottom = min(col + span, X0 + self.columns) * EXTENT, min(row + span, Y0 + HEIGHT) * EXTENT
        out = []
        for i in range(n):
            cls = classes[i % len(classes)] if layer != "transportation_name" else rng.choice(classes)
            rank = rng.randint(1, 40) if layer == "poi" else rng.randint(1, 16)
            shown = minzoom
            if layer == "transportation_name":
                shown = {"primary": 12, "secondary": 12, "tertiary": 13, "minor": 14, "service": 14, "path": 14}[cls]
            elif layer == "poi":
                shown = 13 if rank <= 2 else 14  # the most important POIs show a zoom earlier
            x, y = rng.randrange(left + 64, right - 64), rng.randrange(top + 64, bottom - 64)
            if shape == "point":
                points = [(x, y)]
            elif shape == "polygon":
                w, h = rng.randrange(200, 3000), rng.randrange(200, 3000)
                x1, y1 = min(x + w, right - 64), min(y + h, bottom - 64)
                if x1 - x < 32 or y1 - y < 32:
                    continue
                points = [(x, y), (x1, y), (x1, y1), (x, y1)]
            else:
                points = [(x, y)]
                for _ in range(rng.randint(1, 5)):
                    x = min(max(x + rng.randint(-2500, 2500), left + 64), right - 64)
                    y = min(max(y + rng.randint(-2500, 2500), top + 64), bottom - 64)
                    if (x, y) != points[-1]:
                        points.append((x, y))
                if len(points) < 2:
                    continue
            out.append((cls, rank, shown, name_of(rng, layer), tuple(points)))
        return tuple(out)

    def tile_features(self, z, x, y):
        """{layer: [(class, rank, name, shape, local points)]} of the features tile (z, x, y) shows."""
        scale = 1 << (MAXZOOM - z)
        ox, oy = x * scale * EXTENT, y * scale * EXTENT
        size = scale * EXTENT
        layers = {}
        for kind, (layer, shape, cz, minzoom, _, _) in enumerate(FEATURES):
            if z < minzoom:
                continue
            if z <= cz:
                k = 1 << (cz - z)
                cells = [(x * k + i, y * k + j) for i in range(k) for j in range(k)]
            else:
                k = 1 << (z - cz)
                cells = [(x // k, y // k)]
            for cx, cy in cells:
                for cls, rank, shown, name, points in self.cell(kind, cz, cx, cy):
                    if z < shown:
                        continue
                    xs, ys = [p[0] for p in points], [p[1] for p in points]
                    if shape == "point":
                        if not (ox <= xs[0] < ox + size and oy <= ys[0] < oy + size):
                            continue
                    elif max(xs) < ox or min(xs) >= ox + size or max(ys) < oy or min(ys) >= oy + size:
                        continue
                    local = [((px - ox) // scale, (py - oy) // scale) for px, py in points]
                    layers.setdefault(layer, []).append((cls, rank, name, shape, local))
        return layers


_VARINTS = [varint(i) for i in range(1 << 16)]


def small_varint(v):
    """varint(v), from a table below 65,536 (most of a tile's numbers: the fixture is made in Python)."""
    return _VARINTS[v] if v < 65536 else varint(v)


def encode_geometry(shape, points):
    x, y = points[0]
    out = [b"\x09", small_varint(zigzag(x)), small_varint(zigzag(y))]
    if shape == "point":
        return b"".join(out)
    out.append(small_varint(((len(points) - 1) << 3) | 2))
    for px, py in points[1:]:
        out += [small_varint(zigzag(px - x)), small_varint(zigzag(py - y))]
        x, y = px, py
    if shape == "polygon":
        out.append(b"\x0f")
    return b"".join(out)


def encode_layer(name, features):
    """An MVT layer of named features: keys name, class, rank; values deduplicated."""
    keys = [b"name", b"class", b"rank"]
    values, index, body = [], {}, []

    def value(v):
        if v not in index:
            index[v] = len(values)
            values.append(int_value(v) if isinstance(v, int) else string_value(v))
        return index[v]

    kinds = {"point": 1, "line": 2, "polygon": 3}
    for fid, (cls, rank, label, shape, points) in enumerate(features, 1):
        tags = b"".join((b"\x00", small_varint(value(label)), b"\x01", small_varint(value(cls)), b"\x02",
                         small_varint(value(rank))))
        geometry = encode_geometry(shape, points)
        feature = b"".join((b"\x08", small_varint(fid), b"\x12", small_varint(len(tags)), tags, b"\x18",
                            bytes((kinds[shape],)), b"\x22", small_varint(len(geometry)), geometry))
        body.append(b"\x12" + small_varint(len(feature)) + feature)
    layer = field_varint(15, 2) + field_bytes(1, name.encode()) + b"".join(body) + \
        b"".join(field_bytes(3, k) for k in keys) + b"".join(field_bytes(4, v) for v in values) + field_varint(5, EXTENT)
    return field_bytes(3, layer)


def filler_bases(seed):
    """Per density, 8 land-cover layers (raw, deflate data ending in a sync flush, crc32)."""
    rng = random.Random(seed)
    bases = {}
    for density, size in FILLER.items():
        out = []
        for i in range(8):
            raw = small_tile(rng, int(size * (0.6 + 0.1 * i)))
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            out.append((raw, c.compress(raw) + c.flush(zlib.Z_SYNC_FLUSH), zlib.crc32(raw)))
        bases[density] = out
    return bases


def gzip_tile(base, extra):
    """base's land cover, then `extra` (the named layers) in stored deflate blocks, gzip-wrapped."""
    raw, deflated, crc = base
    blocks = []
    for i in range(0, max(len(extra), 1), 65535):
        chunk = extra[i:i + 65535]
        last = i + 65535 >= len(extra)
        blocks.append(bytes((1 if last else 0,)) + struct.pack("<HH", len(chunk), len(chunk) ^ 0xFFFF) + chunk)
    return b"".join((GZIP_HEADER, deflated, *blocks,
                     struct.pack("<II", zlib.crc32(extra, crc), (len(raw) + len(extra)) & 0xFFFFFFFF)))


def build_mbtiles(path, size, seed=SEED):
    """The MBTiles origin of the strip (cached with a stamp); returns its description."""
    stamp = path + ".json"
    width = WIDTHS[size]
    key = {"version": FIXTURE_VERSION, "seed": seed, "width": width, "height": HEIGHT, "x0": X0, "y0": Y0,
           "zooms": [MINZOOM, MAXZOOM]}
    meta = cached_fixture(path, key)
    if meta:
        return meta
    started = time.monotonic()
    tiles = fixture_tiles(width)
    log(f"search fixture: generating {len(tiles):,} tiles into {path} (once; cached)")
    world = World(seed, width)
    bases = filler_bases(seed)
    rng = random.Random(seed + 1)
    tmp = path + ".tmp"
    db = new_mbtiles(tmp, [("name", "search benchmark"), ("format", "pbf"), ("minzoom", str(MINZOOM)),
                           ("maxzoom", str(MAXZOOM)), ("compression", "gzip")])
    batch, stored, named = [], 0, 0
    per_layer = {}
    last = time.monotonic()
    for done, (z, x, y) in enumerate(tiles, 1):
        layers = world.tile_features(z, x, y)
        extra = b"".join(encode_layer(name, layers[name]) for name in sorted(layers))
        for name, features in layers.items():
            per_layer[name] = per_layer.get(name, 0) + len(features)
            named += len(features)
        density = DENSITIES[world.density(x << (MAXZOOM - z))]
        data = gzip_tile(bases[density][rng.randrange(8)], extra)
        stored += len(data)
        batch.append((z, x, (1 << z) - 1 - y, data))
        if len(batch) == 20_000:
            db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", batch)
            batch = []
            if time.monotonic() - last > 10:
                last = time.monotonic()
                log(f"search fixture: {done:,}/{len(tiles):,} tiles, {named:,} named features")
    if batch:
        db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", batch)
    db.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
    db.commit()
    db.close()
    os.replace(tmp, path)
    meta = dict(key)
    meta.update({"count": len(tiles), "bytes": stored, "namedFeatures": named, "namedFeaturesByLayer": per_layer})
    with open(stamp, "w") as f:
        json.dump(meta, f, indent=1)
    meta["buildSeconds"] = time.monotonic() - started
    log(f"search fixture: {len(tiles):,} tiles, {stored / 1e6:,.0f} MB, {named:,} named features in "
        f"{meta['buildSeconds']:.0f} s")
    return meta


def write_job(path, width, mbtiles, docs, pack_regions=None):
    """The job: the three regions (each naming the pack unless `pack_regions` picks some), one pack."""
    regions = []
    for k, density in enumerate(DENSITIES):
        regions.append({"id": density, "name": density.capitalize(), "bbox": region_box(k, width),
                        "zoom": [MINZOOM, MAXZOOM], "tilesets": [TILEJSON],
                        "searchPacks": [PACK] if pack_regions is None or density in pack_regions else []})
    job = {"version": 1, "name": "search bench", "regions": regions,
           "searchPacks": [{"id": PACK, "sources": [TILEJSON]}],
           "origins": {"https://tiles.search.invalid/t/": "mbtiles:" + mbtiles, "https://tiles.search.invalid/": docs},
           "limits": {"maxTiles": 2_000_000}}
    with open(path, "w") as f:
        json.dump(job, f, indent=1)
    return path


def write_docs(docs):
    """The directory origin's TileJSON: its `vector_layers` are what the pack tells the schema from."""
    os.makedirs(docs, exist_ok=True)
    with open(os.path.join(docs, "tiles.json"), "w") as f:
        json.dump({"tilejson": "3.0.0", "name": "search benchmark", "tiles": [TEMPLATE], "minzoom": MINZOOM,
                   "maxzoom": MAXZOOM, "attribution": "search benchmark fixture",
                   "vector_layers": [{"id": layer, "fields": {}} for layer in LAYERS]}, f)
    return docs


def search_event(path):
    """The last `search-pack` event of an apply's --progress json stderr, or {}."""
    event = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if '"search-pack"' in line:
                    try:
                        event = json.loads(line)
                    except ValueError:
                        pass
    except OSError:
        pass
    return event


class Search:
    def __init__(self, args):
        self.args = args
        self.work = os.path.join(args.work, "search")
        self.logs = os.path.join(self.work, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.fs = args.fs
        self.prov = args.provision
        self.env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH)
        self.docs = write_docs(os.path.join(self.work, "docs"))
        self.result = {"part": "search", "quick": bool(args.quick), "filesystem": args.fs_kind, "sizes": {}}

    def apply(self, name, job, store):
        """One measured apply with --progress json: GNU time's numbers and the search-pack event."""
        m = run_measured([self.prov, "apply", job, "--store", store, "--progress", "json"], env=self.env,
                         timeout=3600, stdout_path=os.path.join(self.logs, name + ".out"),
                         stderr_path=os.path.join(self.logs, name + ".err"))
        event = search_event(os.path.join(self.logs, name + ".err"))
        db = os.path.join(store, "search", PACK + ".db")
        e = {"seconds": m["wall"], "cpuSeconds": m["cpu"], "peakRSSMB": m["rssMB"], "rc": m["rc"],
             "timedOut": m["timedOut"], "built": event.get("built"), "buildSeconds": event.get("seconds"),
             "entries": event.get("entries"), "bytes": event.get("bytes"), "packTiles": event.get("tiles"),
             "tiles": count_rows(os.path.join(store, "offline.db")) if m["rc"] == 0 else 0,
             "fileBytes": os.path.getsize(db) if os.path.exists(db) else 0}
        if m["rc"] != 0 or not event:
            e["error"] = tail(os.path.join(self.logs, name + ".err"), 3)[-400:] or "no search-pack event"
        log(f"search {name}: rc {m['rc']}, {m['wall']:.1f} s (index build {event.get('seconds', '?')} s), "
            f"rss {m['rssMB']:.0f} MB, {event.get('entries', 0) or 0:,} entries, {event.get('bytes', 0) or 0:,} B, "
            f"{event.get('tiles', 0) or 0:,} tiles read" + (f": {e['error']}" if "error" in e else ""))
        return e

    def region_counts(self, db):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return dict(con.execute("SELECT region, count(*) FROM place_regions GROUP BY region"))
        finally:
            con.close()

    def size(self, size, reps, per_region):
        width = WIDTHS[size]
        mbtiles = os.path.join(self.args.cache, f"search-{size}.mbtiles")
        fx = build_mbtiles(mbtiles, size)
        out = {"fixture": {k: fx[k] for k in ("count", "bytes", "namedFeatures", "namedFeaturesByLayer", "seed",
                                                "buildSeconds")}}
        self.result["sizes"][size] = out
        job = write_job(os.path.join(self.work, f"job-{size}.json"), width, mbtiles, self.docs)
        store = os.path.join(self.fs, f"search-{size}")
        shutil.rmtree(store, ignore_errors=True)
        out["apply"] = self.apply(f"apply-{size}", job, store)
        if out["apply"]["rc"] != 0:
            return
        db = os.path.join(store, "search", PACK + ".db")
        out["regionEntries"] = self.region_counts(db)
        # the index build alone: the file deleted, the plan keeps every tile and builds it again
        rebuilds = []
        for rep in range(reps):
            os.remove(db)
            rebuilds.append(self.apply(f"rebuild-{size}-{rep}", job, store))
        out["rebuild"] = median_entry([dict(r, tiles=r["tiles"] if r["rc"] == 0 and r.get("built") else 0)
                                       for r in rebuilds])
        if per_region:
            out["sqlite3"] = self.guarded("sqlite3", lambda: self.sqlite3_peer(db))
            regions = {}
            for density in DENSITIES:
                one = write_job(os.path.join(self.work, f"job-{size}-{density}.json"), width, mbtiles, self.docs,
                                pack_regions=[density])
                regions[density] = self.apply(f"region-{size}-{density}", one, store)
            out["regions"] = regions
        shutil.rmtree(store, ignore_errors=True)

    def sqlite3_peer(self, db):
        """The sqlite3 shell writing the pack `db`'s own rows (from CSV) into its own schema."""
        csvdir = os.path.join(self.fs, "search-csv")
        shutil.rmtree(csvdir, ignore_errors=True)
        os.makedirs(csvdir)
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            schema = [sql for name, sql in con.execute(
                "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND type IN ('table', 'index') ORDER BY rowid")
                if not name.startswith(("names_fts_", "places_rtree_"))]
            page_size = con.execute("PRAGMA page_size").fetchone()[0]
            for table in ("metadata", "places", "names", "place_regions"):
                with open(os.path.join(csvdir, table + ".csv"), "w", newline="") as f:
                    csv.writer(f).writerows(con.execute(f"SELECT * FROM {table} ORDER BY rowid"))
            entries = con.execute("SELECT count(*) FROM places").fetchone()[0]
        finally:
            con.close()
        out = os.path.join(csvdir, "peer.db")
        script = os.path.join(self.work, "peer.sql")
        with open(script, "w") as f:
            f.write(f"PRAGMA page_size = {page_size};\nBEGIN;\n" + ";\n".join(schema) + ";\n")
            for table in ("metadata", "places", "names", "place_regions"):
                f.write(f".import --csv {os.path.join(csvdir, table + '.csv')} {table}\n")
            f.write("INSERT INTO names_fts (docid, name) SELECT id, name FROM names ORDER BY id;\n"
                    "INSERT INTO places_rtree SELECT id, lon, lon, lat, lat FROM places ORDER BY id;\n"
                    "INSERT INTO names_fts (names_fts) VALUES ('optimize');\nCOMMIT;\nVACUUM;\n")
        m = run_measured(["sqlite3", "-bail", out, ".read " + script], env=self.env, timeout=1800,
                         stdout_path=os.path.join(self.logs, "sqlite3.out"),
                         stderr_path=os.path.join(self.logs, "sqlite3.err"))
        got = count_rows(out, "places") if m["rc"] == 0 else 0
        e = {"seconds": m["wall"], "cpuSeconds": m["cpu"], "peakRSSMB": m["rssMB"], "rc": m["rc"],
             "timedOut": m["timedOut"], "entries": got, "expected": entries,
             "fileBytes": os.path.getsize(out) if os.path.exists(out) else 0}
        if m["rc"] != 0 or got != entries:
            e["error"] = tail(os.path.join(self.logs, "sqlite3.err"), 3)[-400:] or f"{got:,}/{entries:,} rows"
        log(f"search sqlite3 peer: rc {m['rc']}, {got:,} entries in {m['wall']:.1f} s, rss {m['rssMB']:.0f} MB, "
            f"{e['fileBytes']:,} B" + (f": {e['error']}" if "error" in e else ""))
        shutil.rmtree(csvdir, ignore_errors=True)
        return e

    @staticmethod
    def guarded(key, part):
        """Runs one case: its result, or an error row when it fails (never the end of the part)."""
        try:
            return part()
        except Exception as error:  # noqa: BLE001 - any failure of a case is reported, not raised
            log(f"search: the {key} case failed: {type(error).__name__}: {error}")
            return {"error": f"{type(error).__name__}: {error}"}

    def run(self):
        # The index build alone: median of 3 at 100k (once with --quick); once at 200k, whose build
        # takes minutes and is there for its memory.
        for size, reps, per_region in (("100k", 1 if self.args.quick else 3, True), ("200k", 1, False)):
            failed = self.guarded(size, lambda: self.size(size, reps, per_region))
            if failed:
                self.result["sizes"].setdefault(size, {})["error"] = failed["error"]
        return self.result


def run_search(args):
    return Search(args).run()
