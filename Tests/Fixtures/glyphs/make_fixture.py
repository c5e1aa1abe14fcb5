#!/usr/bin/env python3
"""The glyphs fixture: labels in Latin, CJK (kanji and kana), Arabic, Cyrillic and Greek.

    python3 make_fixture.py            # (re)write the committed files beside this script
                                       # (needs mapbox-vector-tile, an independent MVT encoder)
    python3 make_fixture.py --fonts D  # write synthetic glyph PBFs for the style's font stacks
                                       # into D/{fontstack}/{range}.pbf (standard library only)
    python3 make_fixture.py --fonts D --light   # the same with 1-byte bitmaps (fast, for tests)

Committed: labels.mbtiles (gzip tiles, z10-14 over four small regions), style.json,
tilejson.json, sample.mvt / sample.json (one tile and its features as mapbox-vector-tile
decodes it) and expected.json (per region and font stack, the glyph ranges its labels need,
derived here from the data and the style's rules, written out by hand below).

The glyph PBFs are generated, not committed: one glyph per code point of the blocks a
Noto-like font covers (Latin, Greek, Cyrillic, Arabic and its presentation forms, kana, CJK,
Hangul, symbols), each with a pseudo-random SDF-sized bitmap (20x24 plus a 3 px border), so a
range weighs about what a real one does and zlib cannot shrink it to nothing.
"""

import gzip
import json
import math
import os
import random
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Benchmarks"))
from pbwire import field_bytes, field_varint  # noqa: E402  (the repository's protobuf wire helpers)

HERE = os.path.dirname(os.path.abspath(__file__))
HOST = "https://glyphs.example.com/"
MINZOOM, MAXZOOM = 10, 14
EXTENT = 4096

# (west, south, east, north)
REGIONS = {
    "tokyo": (139.74, 35.67, 139.78, 35.70),
    "cairo": (31.22, 30.03, 31.26, 30.06),
    "moscow": (37.60, 55.74, 37.64, 55.76),
    "paris": (2.33, 48.85, 2.37, 48.87),
}

# layer, region, lon, lat, properties. Which label each one makes is in LABELS below.
FEATURES = [
    ("places", "tokyo", 139.76, 35.68, {"name": "東京", "name:en": "Tokyo", "class": "city", "rank": 1}),
    ("places", "tokyo", 139.75, 35.69, {"name": "しぶや", "name:en": "Shibuya", "class": "suburb", "rank": 2}),
    ("places", "tokyo", 139.77, 35.675, {"name:en": "Ginza", "class": "suburb", "rank": 2}),
    ("places", "tokyo", 139.765, 35.685, {"name": "서울", "class": "city", "rank": 99}),
    ("places", "cairo", 31.24, 30.04, {"name": "القاهرة", "name:en": "Cairo", "class": "city", "rank": 1}),
    ("places", "moscow", 37.62, 55.75, {"name": "Москва", "name:en": "Moscow", "class": "city", "rank": 1}),
    ("places", "moscow", 37.61, 55.745, {"name": "Арбат", "class": "suburb", "rank": 2}),
    ("places", "paris", 2.35, 48.86, {"name": "Paris", "class": "city", "rank": 1}),
    ("places", "paris", 2.345, 48.855, {"name": "Île de la Cité", "class": "suburb", "rank": 2}),
    ("roads", "tokyo", 139.755, 35.695, {"ref": "C1", "class": "primary"}),
    ("roads", "moscow", 37.63, 55.755, {"ref": "М10", "class": "primary"}),
    ("roads", "paris", 2.36, 48.865, {"ref": "a1", "name": "Straße", "class": "primary"}),
    ("roads", "cairo", 31.25, 30.05, {"class": "minor"}),
    ("water", "tokyo", 139.775, 35.69, {"name": "隅田川"}),
    ("water", "cairo", 31.23, 30.045, {"name": "النيل"}),
    ("water", "moscow", 37.615, 55.755, {"name": "река"}),
    ("water", "paris", 2.34, 48.865, {"name": "seine"}),
    ("pois", "tokyo", 139.745, 35.675, {"class": "cafe", "name": "カフェ"}),
    ("pois", "paris", 2.355, 48.858, {"class": "bank", "name": "Banque"}),
    ("housenumbers", "paris", 2.352, 48.862, {"number": "Αθήνα 7"}),
]

FONTS = ["Noto Sans Regular", "Noto Sans Bold", "Noto Sans Italic"]


def style():
    return {
        "version": 8,
        "name": "Glyphs fixture",
        "glyphs": HOST + "fonts/{fontstack}/{range}.pbf",
        "sources": {"labels": {"type": "vector", "url": HOST + "tilejson.json"}},
        "layers": [
            {"id": "background", "type": "background", "paint": {"background-color": "#f8f4f0"}},
            {"id": "water", "type": "fill", "source": "labels", "source-layer": "water",
             "paint": {"fill-color": "#a0c8f0"}},
            {"id": "roads", "type": "line", "source": "labels", "source-layer": "roads",
             "paint": {"line-color": "#888", "line-width": 2}},
            # Expression filter over rank and zoom; coalesce over two properties.
            {"id": "place-labels", "type": "symbol", "source": "labels", "source-layer": "places",
             "filter": ["all", ["==", ["geometry-type"], "Point"], ["<=", ["get", "rank"], ["step", ["zoom"], 1, 11, 2, 12, 3]]],
             "layout": {"text-field": ["coalesce", ["get", "name"], ["get", "name:en"]],
                        "text-font": ["Noto Sans Regular"], "text-size": 14}},
            # Legacy filter and a legacy token string, upper-cased.
            {"id": "road-labels", "type": "symbol", "source": "labels", "source-layer": "roads", "minzoom": 11,
             "filter": ["all", ["==", "$type", "LineString"], ["has", "ref"]],
             "layout": {"text-field": "{ref}", "text-font": ["Noto Sans Bold"], "text-transform": "uppercase",
                        "symbol-placement": "line", "text-size": 12}},
            {"id": "water-labels", "type": "symbol", "source": "labels", "source-layer": "water",
             "layout": {"text-field": ["format", ["upcase", ["get", "name"]], {"font-scale": 0.9}],
                        "text-font": ["Noto Sans Italic"], "text-size": 12}},
            {"id": "poi-labels", "type": "symbol", "source": "labels", "source-layer": "pois", "minzoom": 12,
             "layout": {"text-field": ["match", ["get", "class"], "cafe", ["concat", "☕ ", ["get", "name"]],
                                       ["to-string", ["get", "name"]]],
                        "text-font": ["Noto Sans Regular"], "text-size": 11}},
            # Drawn from z13.5 only: no tile of z10-12 (nor of z13, below the source's maxzoom) shows it.
            {"id": "housenumbers", "type": "symbol", "source": "labels", "source-layer": "housenumbers",
             "minzoom": 13.5, "layout": {"text-field": ["get", "number"], "text-font": ["Noto Sans Regular"]}},
        ],
    }


def ranges_of(text):
    out = set()
    for ch in text:
        cp = ord(ch)
        if cp > 0xFFFF:
            continue
        out.add(cp >> 8)
        if 0x0600 <= cp <= 0x06FF:
            out.update([0xFB, 0xFC, 0xFD, 0xFE])  # Arabic presentation forms
    return out


def expected(zooms):
    """Per region and font stack: the glyph ranges (start code points) the labels need when the
    region holds tiles of `zooms` (a tile at z is laid out at z only: the source's maxzoom is 14)."""
    out = {}
    for region in REGIONS:
        stacks = {font: {0} for font in FONTS}
        for layer, where, _, _, props in FEATURES:
            if where != region:
                continue
            if layer == "places" and props["rank"] <= (1 if max(zooms) < 11 else 2 if max(zooms) < 12 else 3):
                stacks["Noto Sans Regular"] |= ranges_of(props.get("name", props.get("name:en", "")))
            if layer == "roads" and "ref" in props and max(zooms) >= 11:
                ref = props["ref"]
                stacks["Noto Sans Bold"] |= ranges_of(ref) | ranges_of(ref.upper()) | ranges_of(ref.lower())
            if layer == "water":
                stacks["Noto Sans Italic"] |= ranges_of(props["name"].upper())
            if layer == "pois" and max(zooms) >= 12:
                text = ("☕ " + props["name"]) if props["class"] == "cafe" else props["name"]
                stacks["Noto Sans Regular"] |= ranges_of(text)
            # housenumbers: never at z <= 13
        out[region] = {font: sorted(r * 256 for r in found) for font, found in stacks.items()}
    return out


# -- tiles -----------------------------------------------------------------------------------

def merc(lon, lat):
    x = (lon + 180.0) / 360.0
    s = math.sin(math.radians(lat))
    y = 0.5 - math.log((1 + s) / (1 - s)) / (4 * math.pi)
    return x, y


def tile_range(bbox, z):
    n = 2 ** z
    x0, y1 = merc(bbox[0], bbox[1])
    x1, y0 = merc(bbox[2], bbox[3])
    return range(int(x0 * n), int(x1 * n) + 1), range(int(y0 * n), int(y1 * n) + 1)


def local(lon, lat, z, x, y):
    mx, my = merc(lon, lat)
    n = 2 ** z
    return (mx * n - x) * EXTENT, (my * n - y) * EXTENT


def tile_layers(z, x, y):
    layers = {}
    for layer, _, lon, lat, props in FEATURES:
        px, py = local(lon, lat, z, x, y)
        if not (0 <= px < EXTENT and 0 <= py < EXTENT):
            continue
        px, py = int(px), int(py)
        if layer == "roads":
            geometry = "LINESTRING (%d %d, %d %d)" % (max(px - 300, 0), py, min(px + 300, EXTENT - 1), py)
        elif layer == "water":
            a, b = max(px - 200, 0), min(px + 200, EXTENT - 1)
            c, d = max(py - 200, 0), min(py + 200, EXTENT - 1)
            geometry = "POLYGON ((%d %d, %d %d, %d %d, %d %d, %d %d))" % (a, c, b, c, b, d, a, d, a, c)
        else:
            geometry = "POINT (%d %d)" % (px, py)
        layers.setdefault(layer, []).append({"geometry": geometry, "properties": props})
    return [{"name": name, "features": feats} for name, feats in sorted(layers.items())]


def encode(layers):
    import mapbox_vector_tile
    return mapbox_vector_tile.encode(layers, default_options={"y_coord_down": True, "extents": EXTENT})


def write_tiles():
    path = os.path.join(HERE, "labels.mbtiles")
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE metadata (name TEXT, value TEXT)")
    db.execute("CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)")
    db.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
    db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "glyphs fixture"), ("format", "pbf"),
                                                          ("minzoom", str(MINZOOM)), ("maxzoom", str(MAXZOOM))])
    rows = set()
    for bbox in REGIONS.values():
        for z in range(MINZOOM, MAXZOOM + 1):
            xs, ys = tile_range(bbox, z)
            for x in xs:
                for y in ys:
                    rows.add((z, x, y))
    sample = None
    for z, x, y in sorted(rows):
        layers = tile_layers(z, x, y)
        data = encode(layers) if layers else b""
        if (z, x, y) == (12, 3638, 1612):
            sample = data
        db.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)",
                   (z, x, 2 ** z - 1 - y, gzip.compress(data, mtime=0) if data else data))
    db.commit()
    db.execute("VACUUM")
    db.close()
    return sample


def write_json(name, value):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")


# -- glyphs ----------------------------------------------------------------------------------

COVERED = [(0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x600, 0x6FF), (0x2000, 0x206F),
           (0x20A0, 0x20BF), (0x2190, 0x21FF), (0x2600, 0x26FF), (0x3000, 0x30FF), (0x4E00, 0x9FFF),
           (0xAC00, 0xD7A3), (0xFB50, 0xFDFF), (0xFE30, 0xFE4F), (0xFE70, 0xFEFF), (0xFF00, 0xFFEF)]


def glyph_range(font, start, light):
    body = field_bytes(1, font.encode()) + field_bytes(2, ("%d-%d" % (start, start + 255)).encode())
    rng = random.Random(start * 7 + len(font))
    for cp in range(start, start + 256):
        if not any(lo <= cp <= hi for lo, hi in COVERED):
            continue
        w, h = (1, 1) if light else (20, 24)
        bitmap = bytes(rng.randrange(256) for _ in range((w + 6) * (h + 6)))
        g = field_varint(1, cp) + field_bytes(2, bitmap) + field_varint(3, w) + field_varint(4, h)
        g += field_varint(5, 2) + field_varint(6, 2 * 18) + field_varint(7, w + 2)
        body += field_bytes(3, g)
    return field_bytes(1, body)


def write_fonts(out, light):
    for font in FONTS:
        folder = os.path.join(out, font)
        os.makedirs(folder, exist_ok=True)
        for start in range(0, 65536, 256):
            with open(os.path.join(folder, "%d-%d.pbf" % (start, start + 255)), "wb") as f:
                f.write(glyph_range(font, start, light))


def main():
    if "--fonts" in sys.argv:
        write_fonts(sys.argv[sys.argv.index("--fonts") + 1], "--light" in sys.argv)
        return
    import mapbox_vector_tile
    sample = write_tiles()
    with open(os.path.join(HERE, "sample.mvt"), "wb") as f:
        f.write(sample)
    decoded = mapbox_vector_tile.decode(sample)
    write_json("sample.json", {name: [{"type": feat["geometry"]["type"], "properties": feat["properties"]}
                                      for feat in layer["features"]] for name, layer in sorted(decoded.items())})
    write_json("style.json", style())
    bounds = [min(b[0] for b in REGIONS.values()), min(b[1] for b in REGIONS.values()),
              max(b[2] for b in REGIONS.values()), max(b[3] for b in REGIONS.values())]
    write_json("tilejson.json", {"tilejson": "3.0.0", "tiles": [HOST + "tiles/{z}/{x}/{y}.pbf"], "minzoom": MINZOOM,
                                 "maxzoom": MAXZOOM, "bounds": bounds,
                                 "vector_layers": [{"id": n, "fields": {}} for n in
                                                   ["housenumbers", "places", "pois", "roads", "water"]]})
    write_json("regions.json", {name: list(bbox) for name, bbox in REGIONS.items()})
    write_json("expected.json", {"z10-12": expected(range(10, 13)), "z10-10": expected(range(10, 11))})


if __name__ == "__main__":
    main()
