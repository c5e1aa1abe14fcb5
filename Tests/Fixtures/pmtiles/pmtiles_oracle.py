#!/usr/bin/env python3
"""PMTiles fixtures and the extract oracle for provision's tests, on independent implementations
from PyPI (see .ci/oracles.txt): the `pmtiles` package writes and reads the archives, `mercantile`
and `supermercado` compute tile covers.

  pmtiles_oracle.py make OUT.pmtiles [--maxzoom 7] [--compression gzip|none] [--variant N]
      A world archive z0..maxzoom written by pmtiles' Writer in tile-id order (clustered). Every
      tile is a Mapbox Vector Tile with one point whose "tile" value is "z/x/y" (and the variant)
      padded to a length that varies from tile to tile, except tiles south of 60°S, which all
      hold one shared "ice" tile, so the archive has runs and shared offsets. The varied lengths
      keep the directory from compressing into the 16 KiB root at maxzoom 7: the writer makes
      leaf directories. Prints the header and directory shape as JSON.

  pmtiles_oracle.py expect ARCHIVE (--bbox W,S,E,N | --polygon FILE.geojson) --minzoom A --maxzoom B
      What `pmtiles extract` cuts for that region and zoom range (go-pmtiles extract.go): the
      region's tile cover at the max zoom (mercantile for a bbox, supermercado's burn for a
      polygon), then every ancestor of those tiles down to the min zoom, each read from the
      archive with pmtiles' Reader. Prints {"z/x/y": sha256 of the tile's bytes after gzip is
      undone, or null when the archive has no such tile}.
"""
import argparse
import gzip
import hashlib
import json
import random
import string
import sys

import mercantile
from pmtiles.reader import MmapSource, Reader, all_tiles
from pmtiles.tile import Compression, TileType, zxy_to_tileid, tileid_to_zxy
from pmtiles.writer import Writer


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | 0x80 if v else b)
        if not v:
            return bytes(out)


def field(number, payload):
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def zigzag(v):
    return (v << 1) ^ (v >> 31)


def vector_tile(label):
    """One layer "pm" (version 2, extent 4096) with one point feature tagged tile=label."""
    geometry = varint(9) + varint(zigzag(2048)) + varint(zigzag(2048))  # MoveTo(1) 2048,2048
    feature = field_varint(1, 1) + field(2, varint(0) + varint(0)) + field_varint(3, 1) + field(4, geometry)
    value = field(1, label.encode())
    layer = (field_varint(15, 2) + field(1, b"pm") + field(2, feature) + field(3, b"tile")
             + field(4, value) + field_varint(5, 4096))
    return field(3, layer)


# Where 60°S falls on the Web Mercator grid, as a fraction of the rows from the north.
ICE_ROW = mercantile.tile(0, -60, 30).y / (1 << 30)


def make(args):
    gz = args.compression == "gzip"
    ice = vector_tile("ice")
    with open(args.out, "wb") as f:
        writer = Writer(f)
        last = zxy_to_tileid(args.maxzoom + 1, 0, 0)
        for tile_id in range(0, last):
            z, x, y = tileid_to_zxy(tile_id)
            # The tile's north edge is south of 60°S: y above that latitude's row.
            if y > ICE_ROW * (1 << z):
                data = ice
            else:
                rng = random.Random(tile_id)
                padding = "".join(rng.choices(string.ascii_lowercase, k=rng.randrange(400)))
                data = vector_tile(f"{z}/{x}/{y}{args.variant}{padding}")
            writer.write_tile(tile_id, gzip.compress(data, mtime=0) if gz else data)
        writer.finalize(
            {
                "tile_type": TileType.MVT,
                "tile_compression": Compression.GZIP if gz else Compression.NONE,
                "min_lon_e7": -1800000000, "min_lat_e7": -850000000,
                "max_lon_e7": 1800000000, "max_lat_e7": 850000000,
                "center_zoom": 0, "center_lon_e7": 0, "center_lat_e7": 0,
            },
            {"name": "provision test world", "vector_layers": [{"id": "pm", "fields": {"tile": "String"}}]},
        )
    with open(args.out, "rb") as f:
        header = Reader(MmapSource(f)).header()
    print(json.dumps({
        "root_length": header["root_length"],
        "leaf_directory_length": header["leaf_directory_length"],
        "tile_entries_count": header["tile_entries_count"],
        "addressed_tiles_count": header["addressed_tiles_count"],
        "tile_contents_count": header["tile_contents_count"],
        "clustered": header["clustered"],
    }))


def parents_down_to(tiles, minzoom):
    """The tiles and all their ancestors down to minzoom (go-pmtiles generalizeOr)."""
    result = set(tiles)
    level = set(tiles)
    while level:
        level = {mercantile.parent(t) for t in level if t.z > minzoom}
        result |= level
    return {t for t in result if t.z >= minzoom}


def cover(args):
    if args.bbox:
        w, s, e, n = (float(v) for v in args.bbox.split(","))
        return set(mercantile.tiles(w, s, e, n, [args.maxzoom]))
    from supermercado import burntiles
    with open(args.polygon) as f:
        geometry = json.load(f)
    feature = {"type": "Feature", "properties": {}, "geometry": geometry}
    return {mercantile.Tile(int(x), int(y), int(z)) for x, y, z in burntiles.burn([feature], args.maxzoom)}


def expect(args):
    with open(args.archive, "rb") as f:
        reader = Reader(MmapSource(f))
        out = {}
        for t in sorted(parents_down_to(cover(args), args.minzoom)):
            data = reader.get(t.z, t.x, t.y)
            if data is not None and data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            out[f"{t.z}/{t.x}/{t.y}"] = None if data is None else hashlib.sha256(data).hexdigest()
    json.dump(out, sys.stdout, sort_keys=True)


def dump(args):
    """Every tile of an archive as {"z/x/y": sha256 of its bytes, gzip undone}."""
    with open(args.archive, "rb") as f:
        out = {}
        for (z, x, y), data in all_tiles(MmapSource(f)):
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            out[f"{z}/{x}/{y}"] = hashlib.sha256(data).hexdigest()
    json.dump(out, sys.stdout, sort_keys=True)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("out")
    m.add_argument("--maxzoom", type=int, default=7)
    m.add_argument("--compression", choices=["gzip", "none"], default="gzip")
    m.add_argument("--variant", default="")
    e = sub.add_parser("expect")
    e.add_argument("archive")
    region = e.add_mutually_exclusive_group(required=True)
    region.add_argument("--bbox")
    region.add_argument("--polygon")
    e.add_argument("--minzoom", type=int, required=True)
    e.add_argument("--maxzoom", type=int, required=True)
    d = sub.add_parser("dump")
    d.add_argument("archive")
    args = parser.parse_args()
    {"make": make, "expect": expect, "dump": dump}[args.command](args)


if __name__ == "__main__":
    main()
