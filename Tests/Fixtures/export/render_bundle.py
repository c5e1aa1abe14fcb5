#!/usr/bin/env python3
"""Renders a view of an exported bundle with MapLibre Native (the `mapli` package, headless:
EGL_PLATFORM=surfaceless) and prints one JSON object about the image.

    render_bundle.py BUNDLE STYLE OUT.png LON LAT ZOOM [--source NAME=URL]... [--no-source NAME]...

The style's relative URLs are made absolute as the bundle's README.txt tells an app to:
BASE = file://BUNDLE/; "pmtiles://NAME" -> "pmtiles://" + BASE + NAME; "sprite" (or each sprite's
"url") and "glyphs" -> BASE + value. --source replaces a source's url (e.g. mbtiles:///a.mbtiles,
to render the same view from the MBTiles export); --no-source drops a source and its layers (a
render without the tiles). Nothing is served: every URL left is a file, pmtiles or mbtiles one.

The report: the image size, the count of each colour (the 12 most common, as #rrggbb), a SHA-256
of the decoded pixels, and the URLs the style referred to after the rewrite.
"""
import hashlib
import json
import os
import struct
import sys
import zlib


def absolute(style, base):
    for source in style.get("sources", {}).values():
        url = source.get("url", "")
        if url.startswith("pmtiles://") and "://" not in url[len("pmtiles://"):]:
            source["url"] = "pmtiles://" + base + url[len("pmtiles://"):]
    sprite = style.get("sprite")
    if isinstance(sprite, str) and "://" not in sprite:
        style["sprite"] = base + sprite
    elif isinstance(sprite, list):
        for entry in sprite:
            if "://" not in entry["url"]:
                entry["url"] = base + entry["url"]
    if "glyphs" in style and "://" not in style["glyphs"]:
        style["glyphs"] = base + style["glyphs"]
    return style


def urls(style):
    found = [s.get("url") for s in style.get("sources", {}).values() if s.get("url")]
    found += [t for s in style.get("sources", {}).values() for t in s.get("tiles", [])]
    sprite = style.get("sprite")
    found += [sprite] if isinstance(sprite, str) else [e["url"] for e in sprite or []]
    if "glyphs" in style:
        found.append(style["glyphs"])
    return found


def decode_png(data):
    """8-bit RGB or RGBA, not interlaced: returns (width, height, channels, rows of bytes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, idat, width = 8, b"", None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for r in range(height):
        line = raw[r * (stride + 1):(r + 1) * (stride + 1)]
        kind, row = line[0], bytearray(line[1:])
        for i in range(stride):
            a = row[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                row[i] = (row[i] + a) & 255
            elif kind == 2:
                row[i] = (row[i] + b) & 255
            elif kind == 3:
                row[i] = (row[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(row))
        previous = row
    return width, height, channels, rows


def main():
    bundle, style_name, out, lon, lat, zoom = sys.argv[1:7]
    rest = sys.argv[7:]
    base = "file://" + os.path.abspath(bundle) + "/"
    with open(os.path.join(bundle, style_name)) as f:
        style = absolute(json.load(f), base)
    for i, arg in enumerate(rest):
        if arg == "--source":
            name, url = rest[i + 1].split("=", 1)
            style["sources"][name] = {"type": style["sources"][name]["type"], "url": url}
        elif arg == "--no-source":
            name = rest[i + 1]
            del style["sources"][name]
            style["layers"] = [l for l in style["layers"] if l.get("source") != name]
    import mapli
    pool = mapli.RenderPool(workers=1)
    pool.register_style("bundle", json=style)
    png = pool.render("bundle", lon=float(lon), lat=float(lat), zoom=float(zoom), width=512, height=512)
    with open(out, "wb") as f:
        f.write(png)
    width, height, channels, rows = decode_png(png)
    counts = {}
    for row in rows:
        for i in range(0, len(row), channels):
            key = "#%02x%02x%02x" % (row[i], row[i + 1], row[i + 2])
            counts[key] = counts.get(key, 0) + 1
    top = dict(sorted(counts.items(), key=lambda kv: -kv[1])[:12])
    print(json.dumps({"width": width, "height": height, "colors": top, "distinctColors": len(counts),
                      "pixels": hashlib.sha256(b"".join(rows)).hexdigest(), "urls": urls(style)}, sort_keys=True))


if __name__ == "__main__":
    main()
