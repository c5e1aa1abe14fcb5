#!/usr/bin/env python3
"""Deterministic fixture for Benchmarks/run: ~20,000 valid Mapbox Vector Tiles (MVT 2.1).

Writes DIR/tiles/z/x/y.pbf for every tile of a tile-aligned rectangle at zooms 10-14 (the
cover of fixture.json's bbox under provision's half-open rule), DIR/paths.txt (one
/tiles/z/x/y.pbf per line, in z/x/y order) and DIR/fixture.json (bbox, zooms, count, sizes).

Tile sizes follow a log-normal law (median ~15 KB) clipped to 2-60 KB; each tile holds four
layers (roads, buildings, water, pois) of seeded random geometry and attributes, raw (not
gzipped). Geometry deltas are drawn from a Laplace-like law so the bytes compress about as
well as real tiles do. Re-running with the same arguments gives byte-identical files and is
skipped when DIR/fixture.json already matches.

Usage: make_fixture.py DIR [--seed N]
"""
import argparse
import hashlib
import json
import math
import os
import random
import statistics
import sys

from pbwire import field_bytes, field_varint, int_value, string_value, varint, zigzag

VERSION = 4
# Tile-aligned rectangle at the maximum zoom (aligned to 2^(MAXZOOM-MINZOOM) so every lower zoom
# is whole): columns X0..X0+WIDTH-1, rows Y0..Y0+HEIGHT-1 at z14, around Paris.
MINZOOM, MAXZOOM = 10, 14
X0, Y0, WIDTH, HEIGHT = 8272, 5632, 160, 96
INSET = 1e-6  # degrees the bbox is pulled inside the rectangle, so no edge lies on a boundary


def lng_of(x, z):
    return x / (1 << z) * 360.0 - 180.0


def lat_of(y, z):
    n = math.pi * (1.0 - 2.0 * y / (1 << z))
    return math.degrees(math.atan(math.sinh(n)))


def tile_x(lng, z):
    return (180.0 + lng) / 360.0 * (1 << z)


def tile_y(lat, z):
    lat = min(max(lat, -85.0511287798066), 85.0511287798066)
    merc = math.log(math.tan(math.pi / 4.0 + lat * math.pi / 360.0)) * 180.0 / math.pi
    return min(max((180.0 - merc) / 360.0 * (1 << z), 0.0), float(1 << z))


def bbox():
    return [lng_of(X0, MAXZOOM) + INSET, lat_of(Y0 + HEIGHT, MAXZOOM) + INSET,
            lng_of(X0 + WIDTH, MAXZOOM) - INSET, lat_of(Y0, MAXZOOM) - INSET]


def cover(box, z):
    """provision's bbox cover: columns floor(xW)..<ceil(xE), rows floor(yN)..<ceil(yS)."""
    west, south, east, north = box
    n = 1 << z
    first_row = min(max(math.floor(tile_y(north, z)), 0), n - 1)
    end_row = min(max(math.ceil(tile_y(south, z)), first_row + 1), n)
    first_col = math.floor(tile_x(west, z))
    end_col = max(math.ceil(tile_x(east, z)), first_col + 1)
    return [(z, x, y) for x in range(first_col, end_col) for y in range(first_row, end_row)]


# --- protobuf writer (the wire primitives are in pbwire.py) ----------------------------------

# byte -> zigzag(delta) for a Laplace(0, 9) delta clipped to -63..63 (one-byte varints)
def _delta_table():
    table = bytearray()
    for i in range(256):
        u = (i + 0.5) / 256.0
        d = 9.0 * math.log(2 * u) if u < 0.5 else -9.0 * math.log(2 * (1 - u))
        d = max(-63, min(63, int(round(d))))
        table.append(zigzag(d))
    return bytes(table)


DELTAS = _delta_table()

CLASSES = [b"motorway", b"primary", b"secondary", b"tertiary", b"residential", b"service",
           b"path", b"track", b"rail", b"river", b"lake", b"park", b"school", b"shop"]


class LayerBuilder:
    def __init__(self, name, rng, names):
        self.name = name
        self.rng = rng
        self.names = names
        self.keys = [b"class", b"name", b"rank", b"height"]
        self.values = [string_value(c) for c in CLASSES] + [string_value(n) for n in names] + \
            [int_value(i) for i in range(1, 31)]
        self.n_classes = len(CLASSES)
        self.n_names = len(names)
        self.features = []
        self.overhead = len(self.encode_body())
        self.size = 0
        self.next_id = 1

    def tags(self):
        rng = self.rng
        t = [0, rng.randrange(self.n_classes)]
        if rng.random() < 0.5:
            t += [1, self.n_classes + rng.randrange(self.n_names)]
        if rng.random() < 0.6:
            t += [2, self.n_classes + self.n_names + rng.randrange(30)]
        return b"".join(varint(v) for v in t)

    def geometry(self, kind, points):
        rng = self.rng
        start = varint(9) + varint(zigzag(rng.randrange(4096))) + varint(zigzag(rng.randrange(4096)))
        if kind == 1:  # point
            return start
        line = varint(((points - 1) << 3) | 2) + rng.randbytes(2 * (points - 1)).translate(DELTAS)
        if kind == 3:  # polygon ring
            return start + line + varint(15)
        return start + line

    def add(self, kind, points):
        body = field_varint(1, self.next_id) + field_bytes(2, self.tags()) + field_varint(3, kind) + \
            field_bytes(4, self.geometry(kind, points))
        self.next_id += 1
        feature = field_bytes(2, body)
        self.features.append(feature)
        self.size += len(feature)

    def encode(self):
        return field_bytes(3, self.encode_body())

    def encode_body(self):
        return field_varint(15, 2) + field_bytes(1, self.name) + b"".join(self.features) + \
            b"".join(field_bytes(3, k) for k in self.keys) + b"".join(field_bytes(4, v) for v in self.values) + \
            field_varint(5, 4096)


LAYERS = [  # name, share of the tile, geometry kind, points per feature
    (b"roads", 0.45, 2, (8, 90)),
    (b"buildings", 0.30, 3, (6, 24)),
    (b"water", 0.15, 3, (30, 200)),
    (b"pois", 0.10, 1, (1, 1)),
]


def make_tile(rng, target, names):
    parts = []
    for name, share, kind, (lo, hi) in LAYERS:
        layer = LayerBuilder(name, rng, rng.sample(names, 12))
        budget = max(share * target - layer.overhead, 40)
        while layer.size < budget:
            layer.add(kind, rng.randint(lo, hi))
        parts.append(layer.encode())
    return b"".join(parts)


def target_size(rng):
    return int(min(max(rng.lognormvariate(math.log(15000), 0.6), 2100), 60000))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args()
    out = args.dir
    box = bbox()
    tiles = [t for z in range(MINZOOM, MAXZOOM + 1) for t in cover(box, z)]
    meta_path = os.path.join(out, "fixture.json")
    key = {"version": VERSION, "seed": args.seed, "bbox": box, "minzoom": MINZOOM, "maxzoom": MAXZOOM}
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if all(meta.get(k) == v for k, v in key.items()) and meta.get("count") == len(tiles):
            print(f"fixture: {out} is up to date ({meta['count']} tiles)", file=sys.stderr)
            return
    # sanity: the rectangle at every zoom, as expected
    for z in range(MINZOOM, MAXZOOM + 1):
        s = 1 << (MAXZOOM - z)
        assert len(cover(box, z)) == (WIDTH // s) * (HEIGHT // s), z
    rng = random.Random(args.seed)
    names = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 14))).capitalize()
             + b" " + rng.choice([b"Street", b"Avenue", b"Road", b"Lane", b"Park", b"Square"]) for _ in range(200)]
    sizes = []
    digest = hashlib.sha256()
    os.makedirs(out, exist_ok=True)
    paths = []
    made_dirs = set()
    for (z, x, y) in tiles:
        data = make_tile(rng, target_size(rng), names)
        d = os.path.join(out, "tiles", str(z), str(x))
        if d not in made_dirs:
            os.makedirs(d, exist_ok=True)
            made_dirs.add(d)
        with open(os.path.join(d, f"{y}.pbf"), "wb") as f:
            f.write(data)
        sizes.append(len(data))
        digest.update(data)
        paths.append(f"/tiles/{z}/{x}/{y}.pbf")
    with open(os.path.join(out, "paths.txt"), "w") as f:
        f.write("\n".join(paths) + "\n")
    meta = dict(key)
    meta.update({
        "count": len(tiles),
        "perZoom": {str(z): len(cover(box, z)) for z in range(MINZOOM, MAXZOOM + 1)},
        "bytes": sum(sizes), "minBytes": min(sizes), "maxBytes": max(sizes),
        "medianBytes": int(statistics.median(sizes)), "sha256": digest.hexdigest(),
    })
    with open(meta_path + ".tmp", "w") as f:
        json.dump(meta, f, indent=2)
    os.replace(meta_path + ".tmp", meta_path)
    print(f"fixture: {len(tiles)} tiles, {sum(sizes) / 1e6:.1f} MB, median {meta['medianBytes']} B, "
          f"{min(sizes)}-{max(sizes)} B in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
