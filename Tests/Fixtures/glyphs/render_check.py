#!/usr/bin/env python3
"""Renders views of a job's regions from a provision store with MapLibre Native (mapli, offline)
and reports every glyph range the renderer asked for that the store does not hold.

    python3 render_check.py JOB.json STORE_DIR [--out DIR]

The store is served through a mapli scheme handler, never the network: every `https://` URL in
the style and TileJSONs becomes `store://`, and a request for `store://X` is answered with the
row the store holds for `https://X` (a resource by URL, a tile by its template's z/x/y), or
recorded as missing (a missing glyph range or tile is answered with no content, so the render
goes on and every missing one is seen). Views: each region's centre at every half zoom from its
first zoom to just below its last zoom + 1, 256 x 256 logical pixels.

Prints one JSON object (views, requests by kind, missing glyph URLs, missing tile URLs) and exits
1 when a glyph range is missing, 0 otherwise. Needs mapli (PyPI); set EGL_PLATFORM=surfaceless
to render headless.
"""

import json
import os
import re
import sqlite3
import sys
import threading
import zlib

import mapli


def main():
    job_path, store = sys.argv[1], sys.argv[2]
    out_dir = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    db_path = os.path.join(store, "offline.db")
    lock = threading.Lock()
    db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True, check_same_thread=False)
    templates = [row[0] for row in db.execute("SELECT DISTINCT url_template FROM tiles")]
    patterns = []
    for template in templates:
        regex = re.escape(template).replace(r"\{z\}", r"(?P<z>\d+)").replace(r"\{x\}", r"(?P<x>\d+)")
        regex = regex.replace(r"\{y\}", r"(?P<y>\d+)").replace(r"\{ratio\}", "(?:@2x)?")
        patterns.append((template, re.compile("^" + regex + "$")))

    seen = {"glyphs": 0, "tile": 0, "other": 0}
    missing = {"glyphs": set(), "tile": set(), "other": set()}

    def payload(data, compressed):
        return zlib.decompress(data) if compressed else data

    def answer(request):
        url = "https://" + request.url[len("store://"):]
        kind = request.kind if request.kind in ("glyphs", "tile") else "other"
        with lock:
            seen[kind] += 1
            row = db.execute("SELECT data, compressed FROM resources WHERE url = ?", (url,)).fetchone()
            if row is None and kind == "tile":
                for template, pattern in patterns:
                    m = pattern.match(url)
                    if m:
                        row = db.execute("SELECT data, compressed FROM tiles WHERE url_template = ? AND z = ? AND x = ? "
                                         "AND y = ? ORDER BY pixel_ratio LIMIT 1",
                                         (template, int(m["z"]), int(m["x"]), int(m["y"]))).fetchone()
                        break
            if row is None:
                missing[kind].add(url)
                return mapli.Response.no_content()
        data = payload(row[0] or b"", row[1])
        if request.kind in ("style", "source"):
            data = data.replace(b"https://", b"store://")
        return mapli.Response(data) if data else mapli.Response.no_content()

    mapli.register_scheme_handler("store", answer)
    pool = mapli.RenderPool(workers=1)
    for pack in job["stylePacks"]:
        pool.register_style(pack["id"], url=pack["style"].replace("https://", "store://", 1))
    views = 0
    for region in job["regions"]:
        west, south, east, north = region["bbox"]
        lon, lat = (west + east) / 2, (south + north) / 2
        low, high = region["zoom"]
        for pack in region.get("stylePacks", []):
            zoom = float(low)
            while zoom < high + 1:
                png = pool.render(pack, lon=lon, lat=lat, zoom=zoom, width=256, height=256)
                views += 1
                if out_dir:
                    os.makedirs(out_dir, exist_ok=True)
                    with open(os.path.join(out_dir, "%s-%s-z%.1f.png" % (region["id"], pack, zoom)), "wb") as f:
                        f.write(png)
                zoom += 0.5
    result = {"views": views, "requests": seen, "missingGlyphs": sorted(missing["glyphs"]),
              "missingTiles": len(missing["tile"]), "missingOther": sorted(missing["other"])}
    print(json.dumps(result, ensure_ascii=False, sort_keys=True))
    sys.exit(1 if missing["glyphs"] else 0)


if __name__ == "__main__":
    main()
