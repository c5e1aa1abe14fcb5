#!/usr/bin/env python3
"""Reads an exported archive with implementations independent of provision and compares it,
tile by tile, with the store it came from. Prints one JSON object.

    check_archive.py pmtiles ARCHIVE OFFLINE_DB TEMPLATE [--tms] [--regions 1,2]
    check_archive.py mbtiles ARCHIVE OFFLINE_DB TEMPLATE [--tms] [--regions 1,2]

- pmtiles: the `pmtiles` package (PyPI) walks every directory and reads every tile
  (pmtiles.reader.all_tiles), and looks each store tile up through Reader.get;
- mbtiles: Python's sqlite3 module reads the `tiles` view and `metadata`.

The store side is read with sqlite3 and zlib: every tile of TEMPLATE with content (linked to the
given region rows, if any), inflated when `compressed`, y flipped back for a TMS template. An
archive tile is gunzipped when it is gzip. The report counts both sides and lists the first
differences.
"""
import gzip
import json
import sqlite3
import sys
import zlib


def store_tiles(db_path, template, tms, regions):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    sql = ("SELECT z, x, y, data, compressed FROM tiles "
           "WHERE url_template = ? AND data IS NOT NULL AND length(data) > 0")
    args = [template]
    if regions:
        sql += " AND id IN (SELECT tile_id FROM region_tiles WHERE region_id IN (%s))" % ",".join("?" * len(regions))
        args += regions
    tiles = {}
    for z, x, y, data, compressed in db.execute(sql, args):
        payload = zlib.decompress(data) if compressed else bytes(data)
        if tms:
            y = (1 << z) - 1 - y
        tiles[(z, x, y)] = payload
    return tiles


def unwrap(data):
    data = bytes(data)
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def read_pmtiles(path):
    from pmtiles.reader import MmapSource, Reader, all_tiles
    with open(path, "rb") as f:
        source = MmapSource(f)
        reader = Reader(source)
        header = reader.header()
        metadata = reader.metadata()
        tiles = {}
        raw = {}
        for (z, x, y), data in all_tiles(source):
            raw[(z, x, y)] = bytes(data)
            tiles[(z, x, y)] = unwrap(data)
        looked_up = {key: reader.get(*key) for key in tiles}
    info = {k: (v.name if hasattr(v, "name") else v) for k, v in header.items()}
    gzipped = sum(1 for v in raw.values() if v[:2] == b"\x1f\x8b")
    lookups_equal = all(looked_up[key] is not None and bytes(looked_up[key]) == raw[key] for key in raw)
    return tiles, {"header": info, "metadata": metadata, "gzipped": gzipped, "lookupsEqual": lookups_equal,
                   "distinct": len(set(raw.values()))}


def read_mbtiles(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    metadata = dict(db.execute("SELECT name, value FROM metadata"))
    tiles = {}
    raw = []
    for z, x, row, data in db.execute("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles"):
        y = (1 << z) - 1 - row
        raw.append(bytes(data))
        tiles[(z, x, y)] = unwrap(data)
    kinds = {name: kind for name, kind in db.execute("SELECT name, type FROM sqlite_master")}
    images = db.execute("SELECT count(*) FROM images").fetchone()[0] if kinds.get("images") == "table" else None
    gzipped = sum(1 for v in raw if v[:2] == b"\x1f\x8b")
    return tiles, {"metadata": metadata, "objects": kinds, "images": images, "gzipped": gzipped,
                   "rows": len(raw), "integrity": db.execute("PRAGMA integrity_check").fetchone()[0],
                   "applicationId": db.execute("PRAGMA application_id").fetchone()[0]}


def main():
    kind, archive, db_path, template = sys.argv[1:5]
    rest = sys.argv[5:]
    tms = "--tms" in rest
    regions = []
    if "--regions" in rest:
        regions = [int(r) for r in rest[rest.index("--regions") + 1].split(",")]
    expected = store_tiles(db_path, template, tms, regions)
    tiles, info = read_pmtiles(archive) if kind == "pmtiles" else read_mbtiles(archive)
    differing = sorted(key for key in expected if key in tiles and tiles[key] != expected[key])
    missing = sorted(key for key in expected if key not in tiles)
    extra = sorted(key for key in tiles if key not in expected)
    info.update({
        "storeTiles": len(expected), "archiveTiles": len(tiles), "equalTiles": len(expected) - len(differing) - len(missing),
        "differing": ["%d/%d/%d" % k for k in differing[:5]], "missing": ["%d/%d/%d" % k for k in missing[:5]],
        "extra": ["%d/%d/%d" % k for k in extra[:5]],
        "zooms": sorted({k[0] for k in tiles}),
    })
    print(json.dumps(info, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
