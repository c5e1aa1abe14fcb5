"""Merges the parts Benchmarks/run measured into one JSON document and prints the tables."""
import json
import platform
import os
import time

from bench import CASES, TOOL_LABELS

PEER_ORDER = ["wrk", "curl", "aria2c", "download-tiles", "provision"]


def fmt_rate(v):
    return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"


def peers_table(peers):
    tools = peers["tools"]
    prov = tools.get("provision", {})
    fx = peers["fixture"]
    lines = [
        f"{fx['count']:,} tiles ({fx['bytes'] / 1e6:.0f} MB, median {fx['medianBytes'] / 1000:.1f} KB) from nginx on "
        f"127.0.0.1, every tool writing to {peers.get('filesystem', 'one file system')}; tiles/s median of "
        f"{peers['reps']}; ×: provision's tiles/s ÷ that tool's",
        "",
        "| tool | " + " | ".join(label for _, label, _, _ in CASES) + " | CPU s per 10k tiles | peak RSS MB |",
        "|---|" + "---|" * (len(CASES) + 2),
    ]
    for tool in PEER_ORDER:
        if tool not in tools:
            continue
        cells, cpus, rss = [], [], []
        for case, _, _, _ in CASES:
            entry = tools[tool].get(case)
            if not entry:
                cells.append("—")
                continue
            if "tilesPerSecond" not in entry:
                cells.append("failed")
                continue
            cell = fmt_rate(entry["tilesPerSecond"])
            p = prov.get(case, {}).get("tilesPerSecond")
            if tool != "provision" and p:
                cell += f" (×{p / entry['tilesPerSecond']:.2f})"
            if tool in ("aria2c", "download-tiles") and entry.get("tiles") != fx["count"]:
                cell += f" [{entry['tiles']:,} tiles]"
            cells.append(cell)
            cpus.append(entry["cpuPer10k"])
            rss.append(entry["peakRSSMB"])
        cpu = f"{min(cpus):.1f}–{max(cpus):.1f}" if cpus else "—"
        lines.append(f"| {TOOL_LABELS[tool]} | " + " | ".join(cells) + f" | {cpu} | {max(rss) if rss else 0:.0f} |")
        if tool == "provision" and any("tilesPhaseTilesPerSecond" in e for e in tools[tool].values()):
            phase = []
            for case, _, _, _ in CASES:
                e = tools[tool].get(case, {})
                if "tilesPhaseTilesPerSecond" in e:
                    phase.append(f"{fmt_rate(e['tilesPhaseTilesPerSecond'])} (+{e['finishSeconds']:.1f} s to finish)")
                else:
                    phase.append("—")
            lines.append("| ↳ provision, download-and-write phase only | " + " | ".join(phase) + " | | |")
    notes = sorted({e["note"] for t in tools.values() for e in t.values() if e.get("note")})
    notes += peers.get("notes", [])
    if notes:
        lines.append("")
        lines += [f"- {n}" for n in notes]
    return lines


def plans_table(plans):
    lines = ["| plan | result | seconds | peak RSS MB |", "|---|---|---|---|"]
    f = plans.get("france")
    if f:
        lines.append(f"| France outline (50 vertices) z0–14, empty store | {f.get('tiles') or 0:,} tiles to add "
                     f"| {f['seconds']:.3f} | {f['peakRSSMB']:.0f} |")
    a = plans.get("millionApply")
    if a:
        d = a.get("durations") or {}
        lines.append(f"| apply of the 1M-tile region from an MBTiles origin | {a['linkedTiles']:,} tiles, "
                     f"{a['storeBytes'] / 1e6:.0f} MB offline.db (report: applySeconds {d.get('applySeconds', '?')}) "
                     f"| {a['seconds']:.1f} | {a['peakRSSMB']:.0f} |")
    m = plans.get("millionPlan")
    if m and "seconds" in m:
        t = m.get("tiles") or {}
        lines.append(f"| plan of that region against the store holding it | keep {t.get('keep', 0):,}, add "
                     f"{t.get('add', 0):,}, changes: {m.get('hasChanges')} | {m['seconds']:.3f} | {m['peakRSSMB']:.0f} |")
    elif m:
        lines.append(f"| plan of the 1M-tile region | {m.get('error')} | — | — |")
    p = plans.get("planetRefusal")
    if p:
        lines.append(f"| planet z0–22 ({p['expectedTiles']:,} tiles), default limit | exit {p['rc']} (refused: counted "
                     f"past the limit) | {p['seconds']:.4f} (process start-up {plans['startupSeconds']:.4f}) "
                     f"| {p['peakRSSMB']:.0f} |")
    u = plans.get("planetUnlimited")
    if u:
        result = f"not finished after {u['timeoutSeconds']} s (enumerates every tile)" if u["timedOut"] \
            else f"exit {u['rc']}, {u.get('tiles')} tiles"
        lines.append(f"| planet z0–22, limits.maxTiles raised | {result} | {u['seconds']:.1f} | {u['peakRSSMB']:.0f} |")
    return lines


def targets(peers, plans):
    """The targets of issue 5, each with what was measured."""
    rows = []

    def add(name, value, ok, shown):
        rows.append({"target": name, "value": value, "met": ok, "shown": shown})

    tools = (peers or {}).get("tools", {})
    prov = tools.get("provision", {})

    def rate(tool, case):
        return tools.get(tool, {}).get(case, {}).get("tilesPerSecond")

    p0 = rate("provision", "plain16")
    for peer, case, want, name in [("curl", "plain16", 0.8, "≥ 0.8× curl --parallel, no latency, 16 conns"),
                                   ("download-tiles", "plain16", 10.0, "≥ 10× download-tiles, no latency"),
                                   ("wrk", "delay16", 0.95, "≥ 95% of wrk, 20 ms, 16 conns"),
                                   ("wrk", "delay64", 0.90, "≥ 90% of wrk, 20 ms, 64 conns")]:
        p, q = rate("provision", case), rate(peer, case)
        if p and q:
            add(name, p / q, p / q >= want, f"{p / q:.2f}×")
    c = prov.get("plain16", {}).get("cpuPer10k")
    if c is not None:
        add("≤ 1.5 CPU s per 10k tiles, no latency", c, c <= 1.5, f"{c:.2f} s")
    r = prov.get("plain16", {}).get("peakRSSMB")
    if r is not None:
        add("peak RSS ≤ 80 MB, no latency", r, r <= 80, f"{r:.0f} MB")
    m = (plans or {}).get("millionPlan", {})
    if "seconds" in m:
        add("plan of 1M tiles against a store holding them < 3 s", m["seconds"], m["seconds"] < 3, f"{m['seconds']:.2f} s")
        add("… and < 300 MB peak RSS", m["peakRSSMB"], m["peakRSSMB"] < 300, f"{m['peakRSSMB']:.0f} MB")
    p = (plans or {}).get("planetRefusal")
    if p:
        net = p["seconds"] - plans["startupSeconds"]
        # Start-up varies by a few ms from run to run, so the difference can come out below 0.
        shown = f"{net * 1000:.1f} ms" if net > 0 else f"under the start-up's own noise ({net * 1000:.1f} ms)"
        add("planet z0–22 count < 10 ms (process start-up subtracted)", net, net < 0.010,
            f"{shown} (no count is printed: refused at the limit)")
    return rows


def merge_and_print(parts, out_path):
    doc = {"schemaVersion": 1, "kind": "benchmark", "machine": {
        "cpus": os.cpu_count(), "system": platform.platform(), "python": platform.python_version()},
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    peers = plans = None
    for path in parts:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            part = json.load(f)
        if "tools" in part:
            peers = part
            doc["peers"] = part
        else:
            plans = part
            doc["plans"] = part
    doc["targets"] = targets(peers, plans)
    lines = []
    if peers:
        lines += ["## Downloads", ""] + peers_table(peers) + [""]
    if plans:
        lines += ["## Plans", ""] + plans_table(plans) + [""]
    if doc["targets"]:
        lines += ["## Targets (issue 5)", "", "| target | measured | met |", "|---|---|---|"]
        lines += [f"| {t['target']} | {t['shown']} | {'yes' if t['met'] else 'NO'} |" for t in doc["targets"]]
    doc["table"] = "\n".join(lines)
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=2)
    print("\n".join(lines))
