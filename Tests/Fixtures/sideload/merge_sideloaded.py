#!/usr/bin/env python3
"""MapLibre Native's side-load merge (merge_sideloaded.sql), run by Python's sqlite3.

Written from the documented rules of `OfflineDatabase::mergeDatabase` (the offline database fact
sheet, "Merge / side-load"), independently of provision's own merge; no MapLibre code is copied.

    merge_sideloaded.py merge MAIN SIDE   merges SIDE into MAIN (in place), prints counts as JSON
    merge_sideloaded.py dump DB           prints every tile, resource and region link by key and
                                          bytes (sha256 of the stored data, compressed flag) as JSON

The rules:
- SIDE is attached; its user_version must be at least 6 and equal MAIN's.
- The tile-limit pre-check counts the distinct side tiles that regions link, that MAIN lacks and
  whose template starts with mapbox://; over 6000 with MAIN's own, the merge is refused.
- In one transaction: side regions whose (definition, description) pair MAIN lacks are inserted
  (definition compared with =, description with IS; equal side regions collapse into one); side
  region ids are mapped to the main regions with the same pair; the distinct side tiles a side
  region links are written with REPLACE (by column position, keeping the main row's id) where MAIN
  lacks their key or the side's modified is newer (a NULL never is); the mapped regions are linked
  to them (INSERT OR IGNORE); the same for resources, keyed by url.
"""
import hashlib
import json
import sqlite3
import sys

TILE_KEY = ("url_template", "pixel_ratio", "z", "x", "y")
TILE_LIMIT = 6000


def same_key(key, main="m", side="s"):
    return " AND ".join(f"{main}.{column} = {side}.{column}" for column in key)


def merge_table(db, table, links, link_column, key, columns):
    """REPLACE the linked side rows that are missing or newer, then link them to the mapped regions."""
    selected = ", ".join(f"s.{column}" for column in columns)
    main_id = f"(SELECT m.id FROM main.{table} m WHERE {same_key(key)})"
    db.execute(f"""
        REPLACE INTO main.{table}
        SELECT {main_id}, {selected} FROM side.{table} s
        WHERE s.id IN (SELECT {link_column} FROM side.{links})
          AND NOT EXISTS (SELECT 1 FROM main.{table} m WHERE {same_key(key)} AND NOT coalesce(s.modified > m.modified, 0))
        ORDER BY s.id
    """)
    replaced = db.execute("SELECT changes()").fetchone()[0]
    db.execute(f"""
        INSERT OR IGNORE INTO main.{links} (region_id, {link_column})
        SELECT DISTINCT rm.main_region_id, m.id
        FROM side.{links} sl
        JOIN temp.region_mapping rm ON rm.side_region_id = sl.region_id
        JOIN side.{table} s ON s.id = sl.{link_column}
        JOIN main.{table} m ON {same_key(key)}
    """)
    return replaced


def merge(main_path, side_path):
    db = sqlite3.connect(main_path, isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("ATTACH DATABASE ? AS side", (side_path,))
    main_version = db.execute("PRAGMA main.user_version").fetchone()[0]
    side_version = db.execute("PRAGMA side.user_version").fetchone()[0]
    if side_version < 6 or side_version != main_version:
        raise SystemExit(f"Merge database has incorrect user_version: side {side_version}, main {main_version}")
    new_tiles = db.execute(f"""
        SELECT count(DISTINCT s.id) FROM side.tiles s JOIN side.region_tiles l ON l.tile_id = s.id
        WHERE s.url_template LIKE 'mapbox://%'
          AND NOT EXISTS (SELECT 1 FROM main.tiles m WHERE {same_key(TILE_KEY)})
    """).fetchone()[0]
    stored = db.execute("SELECT count(*) FROM main.tiles WHERE url_template LIKE 'mapbox://%'").fetchone()[0]
    if new_tiles + stored > TILE_LIMIT:
        raise SystemExit(f"tile limit exceeded: {new_tiles} + {stored} > {TILE_LIMIT}")
    content = ["expires", "modified", "etag", "data", "compressed", "accessed", "must_revalidate"]
    db.execute("BEGIN")
    db.execute("""
        INSERT INTO main.regions (definition, description)
        SELECT DISTINCT sr.definition, sr.description FROM side.regions sr
        WHERE NOT EXISTS (SELECT 1 FROM main.regions r WHERE r.definition = sr.definition AND r.description IS sr.description)
        ORDER BY sr.id
    """)
    regions = db.execute("SELECT changes()").fetchone()[0]
    db.execute("""
        CREATE TEMP TABLE region_mapping AS
        SELECT sr.id AS side_region_id, r.id AS main_region_id FROM side.regions sr
        JOIN main.regions r ON r.definition = sr.definition AND r.description IS sr.description
    """)
    tiles = merge_table(db, "tiles", "region_tiles", "tile_id", TILE_KEY, list(TILE_KEY) + content)
    resources = merge_table(db, "resources", "region_resources", "resource_id", ("url",), ["url", "kind"] + content)
    db.execute("DROP TABLE temp.region_mapping")
    db.execute("COMMIT")
    db.execute("DETACH DATABASE side")
    db.close()
    print(json.dumps({"regions": regions, "tiles": tiles, "resources": resources}))


def digest(data):
    return None if data is None else hashlib.sha256(bytes(data)).hexdigest()


def dump(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    region = "r.definition || ' ' || coalesce(hex(r.description), 'NULL')"
    tiles = [
        [f"{t}|{ratio}|{z}/{x}/{y}", digest(data), compressed]
        for t, ratio, z, x, y, data, compressed in db.execute(
            "SELECT url_template, pixel_ratio, z, x, y, data, compressed FROM tiles")
    ]
    resources = [[url, kind, digest(data), compressed]
                 for url, kind, data, compressed in db.execute("SELECT url, kind, data, compressed FROM resources")]
    tile_links = [list(row) for row in db.execute(f"""
        SELECT {region}, t.url_template || '|' || t.pixel_ratio || '|' || t.z || '/' || t.x || '/' || t.y
        FROM region_tiles l JOIN regions r ON r.id = l.region_id JOIN tiles t ON t.id = l.tile_id""")]
    resource_links = [list(row) for row in db.execute(f"""
        SELECT {region}, s.url FROM region_resources l JOIN regions r ON r.id = l.region_id
        JOIN resources s ON s.id = l.resource_id""")]
    regions = [row[0] for row in db.execute(f"SELECT {region} FROM regions r")]
    print(json.dumps({"tiles": sorted(tiles), "resources": sorted(resources), "regions": sorted(regions),
                      "tileLinks": sorted(tile_links), "resourceLinks": sorted(resource_links)}, sort_keys=True))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "merge":
        merge(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "dump":
        dump(sys.argv[2])
    else:
        raise SystemExit(__doc__)
