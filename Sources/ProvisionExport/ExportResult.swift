import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// What `provision export` wrote: the document `--json` prints
/// (`Jobs/schema/export-report.schema.json`) and its text view.
public struct ExportResult: Equatable, Sendable {
    /// Bumped on every change to the JSON shape (2: a bundle's `searchPacks`, a patch's `patch`;
    /// 3: a patch's `directory`, `packs` and `droppedPacks`, a bundle's `routingPacks`).
    public static let schemaVersion = 3

    /// One archive written.
    public struct File: Equatable, Sendable {
        public var path: String
        /// The tileset's name (`--source`).
        public var source: String
        public var urlTemplate: String
        /// `mbtiles` or `pmtiles`.
        public var format: String
        /// `pbf`, `png`, `jpg` or `webp`.
        public var tileFormat: String
        public var tileCount: Int
        /// Distinct tile contents (stored once each).
        public var contentCount: Int
        /// Tiles the store holds as "no content", left out.
        public var emptyCount: Int
        public var byteCount: UInt64
        public var minZoom: Int
        public var maxZoom: Int
        /// `west,south,east,north`.
        public var bounds: String
        /// `lon,lat,zoom`.
        public var center: String
    }

    /// What a bundle holds besides its archives.
    public struct Bundle: Equatable, Sendable {
        public var directory: String
        /// The style files, relative to the directory.
        public var styles: [String]
        public var spriteFiles: Int
        public var glyphFiles: Int
        /// Style sources left pointing at the network (not tiles, or no tiles stored), as `pack: source`.
        public var onlineSources: [String]
        /// The search packs carried, in the lock's order.
        public var searchPacks: [SearchPackFile] = []
        /// The routing packs carried, in the lock's order.
        public var routingPacks: [RoutingPackFile] = []
    }

    /// A routing pack's tile extract a bundle carries.
    public struct RoutingPackFile: Equatable, Sendable {
        /// Relative to the bundle: `routing/<pack>.tar`.
        public var path: String
        /// The pack's id.
        public var pack: String
        /// Its graph tiles, as the lock records them.
        public var tiles: Int
        public var bytes: Int64
    }

    /// A search pack a bundle carries.
    public struct SearchPackFile: Equatable, Sendable {
        /// Relative to the bundle: `search/<pack>.db`.
        public var path: String
        /// The pack's id.
        public var pack: String
        /// Its places, as the lock records them.
        public var entries: Int
        public var bytes: Int64
    }

    /// What a patch (`--format patch`) holds against the store devices have.
    public struct Patch: Equatable, Sendable {
        /// The patch file.
        public var path: String
        /// `--since`: the store devices have, as named.
        public var since: String
        /// The patch file's bytes.
        public var byteCount: UInt64
        /// The current store's `offline.db` bytes: what shipping it whole costs.
        public var fullByteCount: UInt64
        /// Tile and resource rows in the patch.
        public var tiles: Int
        public var resources: Int
        /// Region rows in the patch: every region of the store.
        public var regions: Int
        /// Regions a device adds as new (their definition or description changed), by lock key
        /// (row id when the lock does not name it); the patch holds every row they link.
        public var newRegions: [String]
        /// Regions of the old store no region of the current one equals: a device keeps them.
        public var droppedRegions: [String]
        /// Rows of the old store the current store lacks: a merge cannot delete them.
        public var dropped: [PatchDroppedRow]
        /// The directory beside the patch (`PatchFiles`): its attribution and the packs shipped whole.
        public var directory = ""
        /// The search and routing packs new or changed since OLD, shipped whole in `directory`.
        public var packs: [PatchPack] = []
        /// The packs OLD has that the store no longer has: devices delete their files.
        public var droppedPacks: [PatchPack] = []
    }

    /// A search or routing pack a patch ships whole (or lists as dropped): a pack is replaced
    /// whole, never patched, as Valhalla's graph ids are not stable from one build to the next.
    public struct PatchPack: Equatable, Sendable {
        public enum Kind: String, Sendable { case search, routing }
        public enum Change: String, Sendable { case new, changed, dropped }
        public var kind: Kind
        /// The pack's id.
        public var pack: String
        /// Relative to the store and to the patch's directory: `search/<pack>.db`, `routing/<pack>.tar`.
        public var path: String
        public var change: Change
        /// The new file's bytes and SHA-256 (lower-case hex, the lock's digest without its `sha256:`);
        /// 0 and empty for a dropped pack.
        public var bytes: Int64
        public var sha256: String

        public init(kind: Kind, pack: String, path: String, change: Change, bytes: Int64 = 0, sha256: String = "") {
            self.kind = kind
            self.pack = pack
            self.path = path
            self.change = change
            self.bytes = bytes
            self.sha256 = sha256
        }
    }

    public var store: String
    /// `mbtiles`, `pmtiles`, `bundle` or `patch`.
    public var format: String
    public var files: [File]
    public var bundle: Bundle?
    /// The patch; nil for other formats.
    public var patch: Patch?
    /// What the store's documents could not tell, and what that left out or guessed
    /// (`ExportCatalog.warnings`), one sentence each.
    public var warnings: [String]
    /// Why the archives hold only part of the job (the store is one shard's, or an apply did
    /// not finish), one sentence; nil when the store is whole or unknown (no lock).
    public var partial: String?

    public init(store: String, format: String, files: [File], bundle: Bundle? = nil, warnings: [String] = []) {
        self.store = store
        self.format = format
        self.files = files
        self.bundle = bundle
        self.warnings = warnings
    }

    /// The JSON document.
    public var json: JSONValue {
        var document: JSONValue = [
            "schemaVersion": .int(Self.schemaVersion),
            "kind": "export",
            "store": .string(store),
            "format": .string(format),
            "files": .array(files.map { file in
                [
                    "path": .string(file.path), "source": .string(file.source), "template": .string(file.urlTemplate),
                    "format": .string(file.format), "tileFormat": .string(file.tileFormat), "tiles": .int(file.tileCount),
                    "distinctTiles": .int(file.contentCount), "emptyTiles": .int(file.emptyCount),
                    "bytes": .int(Int(file.byteCount)), "minzoom": .int(file.minZoom), "maxzoom": .int(file.maxZoom),
                    "bounds": .string(file.bounds), "center": .string(file.center),
                ]
            }),
            "bundle": bundle.map { bundle in
                [
                    "directory": .string(bundle.directory), "styles": .array(bundle.styles.map { .string($0) }),
                    "spriteFiles": .int(bundle.spriteFiles), "glyphFiles": .int(bundle.glyphFiles),
                    "onlineSources": .array(bundle.onlineSources.map { .string($0) }),
                    "searchPacks": .array(bundle.searchPacks.map { pack in
                        ["path": .string(pack.path), "pack": .string(pack.pack), "entries": .int(pack.entries),
                         "bytes": .int(Int(pack.bytes))]
                    }),
                    "routingPacks": .array(bundle.routingPacks.map { pack in
                        ["path": .string(pack.path), "pack": .string(pack.pack), "tiles": .int(pack.tiles),
                         "bytes": .int(Int(pack.bytes))]
                    }),
                ]
            } ?? .null,
            "warnings": .array(warnings.map { .string($0) }),
        ]
        if let partial, case .object(var object) = document {
            object["partial"] = .string(partial)
            document = .object(object)
        }
        if let patch, case .object(var object) = document {
            object["patch"] = patch.json
            document = .object(object)
        }
        return document
    }

    /// The text view.
    public var text: String {
        var out = ""
        for file in files {
            out += "\(file.path): source '\(file.source)', \(plural(file.tileCount, "tile")) (\(grouped(file.contentCount)) distinct"
                + "\(file.emptyCount > 0 ? ", \(grouped(file.emptyCount)) empty left out" : "")), z\(file.minZoom)–\(file.maxZoom), "
                + "\(file.tileFormat), \(ByteFormat.string(Int64(file.byteCount)))\n"
        }
        if let bundle {
            out += "Bundle \(bundle.directory): \(plural(bundle.styles.count, "style")) (\(bundle.styles.joined(separator: ", "))), "
                + "\(plural(files.count, "PMTiles archive")), \(plural(bundle.spriteFiles, "sprite file")), "
                + "\(plural(bundle.glyphFiles, "glyph range"))"
                + (bundle.searchPacks.isEmpty ? "" : ", \(plural(bundle.searchPacks.count, "search pack")) "
                    + "(\(bundle.searchPacks.map { "\($0.path), \(plural($0.entries, "place"))" }.joined(separator: "; ")))")
                + (bundle.routingPacks.isEmpty ? "" : ", \(plural(bundle.routingPacks.count, "routing pack")) "
                    + "(\(bundle.routingPacks.map { "\($0.path), \(plural($0.tiles, "graph tile"))" }.joined(separator: "; ")))")
                + "; README.txt says how to open it.\n"
            for source in bundle.onlineSources {
                out += "  note: \(source) is not in the bundle and still points at the network\n"
            }
        }
        if let patch { out += patch.text }
        for warning in warnings { out += "warning: \(warning)\n" }
        if let partial { out += "warning: the export is partial: \(partial)\n" }
        return out
    }

    /// Why an export of the store with `lock` (of `regions` rows, nil: all) holds only part of
    /// its job; nil when the lock says the store is whole, or there is no lock to tell.
    public static func partiality(lock: LockDocument?, regions: [Int64]?) -> String? {
        guard let lock else { return nil }
        if let shard = lock.shard {
            return "the store is shard \(shard.shard) of its job, holding tiles \(grouped(shard.tiles.lowerBound))–"
                + "\(grouped(max(shard.tiles.lowerBound, shard.tiles.upperBound - 1))) of its \(grouped(shard.totalTiles)) "
                + "(\(plural(shard.tiles.count, "tile"))); merge the \(shard.shard.count) shards' stores with 'provision merge' "
                + "and export the merged store for the whole job"
        }
        let incomplete = lock.regions.filter { !$0.isComplete && (regions?.contains($0.rowID) ?? true) }.map(\.key)
        guard !incomplete.isEmpty else { return nil }
        return "the store is incomplete: \(incomplete.count == 1 ? "region" : "regions") \(incomplete.joined(separator: ", ")) "
            + "\(incomplete.count == 1 ? "lacks" : "lack") tiles or resources (the last apply did not finish); run "
            + "'provision apply' to complete it"
    }
}


extension ExportResult.Patch {
    /// The bytes of the dropped rows.
    public var droppedByteCount: Int { dropped.map(\.byteCount).reduce(0, +) }

    /// The `patch` member of the JSON document.
    var json: JSONValue {
        [
            "path": .string(path), "since": .string(since), "bytes": .int(Int(byteCount)), "fullBytes": .int(Int(fullByteCount)),
            "tiles": .int(tiles), "resources": .int(resources), "regions": .int(regions),
            "newRegions": .array(newRegions.map { .string($0) }), "droppedRegions": .array(droppedRegions.map { .string($0) }),
            "droppedBytes": .int(droppedByteCount),
            "dropped": .array(dropped.map { ["url": .string($0.url), "tile": .bool($0.isTile), "bytes": .int($0.byteCount)] }),
            "directory": .string(directory),
            "packs": .array(packs.map { ["kind": .string($0.kind.rawValue), "pack": .string($0.pack), "path": .string($0.path),
                                         "change": .string($0.change.rawValue), "bytes": .int(Int($0.bytes)),
                                         "sha256": .string($0.sha256)] }),
            "droppedPacks": .array(droppedPacks.map { ["kind": .string($0.kind.rawValue), "pack": .string($0.pack),
                                                       "path": .string($0.path)] }),
        ]
    }

    /// The text view: sizes, then what a merge of the patch cannot do.
    var text: String {
        let share = fullByteCount == 0 ? "" : String(format: " (%.1f%%)", Double(byteCount) * 100 / Double(fullByteCount))
        var out = "\(path): patch since \(since), \(plural(tiles, "tile")) and \(plural(resources, "resource")) in "
            + "\(plural(regions, "region")), \(ByteFormat.string(Int64(byteCount))) against \(ByteFormat.string(Int64(fullByteCount)))"
            + " for the whole offline.db\(share)\n"
        if !newRegions.isEmpty {
            out += "  \(plural(newRegions.count, "region")) changed and \(newRegions.count == 1 ? "comes" : "come") whole, "
                + "added as new on devices: \(newRegions.joined(separator: ", "))\n"
        }
        if !droppedRegions.isEmpty {
            out += "  note: devices keep \(plural(droppedRegions.count, "region")) the store no longer has (a merge deletes "
                + "nothing): \(droppedRegions.joined(separator: ", "))\n"
        }
        if !dropped.isEmpty {
            let named = dropped.prefix(3).map(\.url).joined(separator: ", ")
            out += "  note: \(plural(dropped.count, "row")) (\(ByteFormat.string(Int64(droppedByteCount)))) the store dropped stay on "
                + "devices, as a merge deletes nothing: \(named)\(dropped.count > 3 ? " and \(grouped(dropped.count - 3)) more" : "")\n"
        }
        let shipped = packs.map { "\($0.path) (\($0.change.rawValue), \(ByteFormat.string($0.bytes)))" }
        out += "  \(directory): attribution" + (packs.isEmpty ? "" : ", and \(plural(packs.count, "pack")) changed or new, to replace "
            + "whole on devices (graph ids are not stable across Valhalla builds): " + shipped.joined(separator: ", ")) + "\n"
        if !droppedPacks.isEmpty {
            out += "  note: the store no longer has \(plural(droppedPacks.count, "pack")); delete \(droppedPacks.count == 1 ? "its file" : "their files") "
                + "on devices: \(droppedPacks.map(\.path).joined(separator: ", "))\n"
        }
        return out
    }
}
