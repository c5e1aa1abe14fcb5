import Foundation
import ProvisionFoundation
import ProvisionModel

extension LockDocument {
    /// A routing pack's entry of the lock: its file, source, build, and each tile as
    /// `"<path> <bytes> <sha256 hex>"` (one string a tile keeps a large pack's lock compact);
    /// absent cells as their paths' level and index, `"<level>/<index>"`.
    static func routingPackJSON(_ record: RoutingPackRecord) -> JSONValue {
        [
            "id": .string(record.id), "file": .string(record.file), "source": .string(record.source),
            "gzip": .bool(record.gzip), "digest": .string(record.digest), "bytes": .int(Int(record.bytes)),
            "build": record.datasetID.map { ["datasetId": .string(String($0)), "version": .string(record.version ?? "")] } ?? .null,
            "tiles": .array(record.tiles.map { tile in
                .string("\(tile.path) \(tile.bytes) \(tile.digest.replacingOccurrences(of: "sha256:", with: ""))")
            }),
            "absent": .array(record.absent.map { .string("\($0.level)/\($0.index)") }),
        ]
    }

    /// The record of a lock's routing pack entry; nil when it is not one this version wrote.
    static func routingPackRecord(_ json: JSONValue) -> RoutingPackRecord? {
        guard let id = json["id"]?.stringValue, let file = json["file"]?.stringValue,
              let source = json["source"]?.stringValue, let digest = json["digest"]?.stringValue,
              let bytes = json["bytes"]?.intValue else { return nil }
        var tiles: [RoutingPackRecord.Tile] = []
        for line in json["tiles"]?.arrayValue ?? [] {
            let parts = (line.stringValue ?? "").split(separator: " ").map(String.init)
            guard parts.count == 3, let size = Int(parts[1]), let tile = routingTile(path: parts[0]) else { return nil }
            tiles.append(RoutingPackRecord.Tile(tile: tile, path: parts[0], bytes: size, digest: "sha256:" + parts[2]))
        }
        var absent: [RoutingTile] = []
        for text in json["absent"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
            let parts = text.split(separator: "/")
            guard parts.count == 2, let level = Int(parts[0]), let index = Int(parts[1]) else { return nil }
            absent.append(RoutingTile(level: level, index: index))
        }
        let build = json["build"]
        return RoutingPackRecord(id: id, file: file, source: source, gzip: json["gzip"] == .bool(true), digest: digest,
                                 bytes: Int64(bytes), datasetID: build?["datasetId"]?.stringValue.flatMap { UInt64($0) },
                                 version: build?["version"]?.stringValue, tiles: tiles, absent: absent)
    }

    /// The level and index of a graph tile path (`2/000/864/819.gph`): its first digit, then every
    /// other digit; nil for a path of another shape (the extract's reader checks paths fully).
    static func routingTile(path: String) -> RoutingTile? {
        guard path.hasSuffix(".gph"), let level = path.first?.wholeNumberValue else { return nil }
        let digits = path.dropFirst().dropLast(4).filter { $0 != "/" }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let index = Int(digits) else { return nil }
        return RoutingTile(level: level, index: index)
    }
}
