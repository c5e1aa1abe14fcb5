import Foundation
import ProvisionCodecs
import ProvisionFoundation
import ProvisionModel
import RoutingGraph

/// A routing pack's extract checked against the lock's record of it: what `audit` says of it and
/// what `--repair` fetches again.
public enum RoutingPackCheck {
    /// One thing wrong with one tile of the pack.
    public struct TileProblem: Equatable, Sendable {
        public var tile: RoutingTile
        /// Its path in the extract (`2/000/864/819.gph`).
        public var path: String
        /// What is wrong, in a few words.
        public var what: String
    }

    /// Why the extract cannot be used as the lock records it without reading its tiles: missing,
    /// an `index.bin` that fails validation, other tiles than the lock's, another size (empty when
    /// none of that is so); and whether it was opened and its index validated at all.
    public static func fileProblems(_ record: RoutingPackRecord, directory: URL) -> (opened: Bool, problems: [String]) {
        let url = directory.appendingPathComponent(record.file)
        guard FileManager.default.fileExists(atPath: url.path) else { return (false, ["the file is missing"]) }
        let reader: TileExtractReader
        do {
            reader = try TileExtractReader(url: url)
        } catch {
            return (false, ["its index.bin cannot be trusted: \(error)"])
        }
        var out: [String] = []
        let held = Set(reader.tiles.map(\.routingTile)), recorded = Set(record.tiles.map(\.tile))
        let missing = record.tiles.filter { !held.contains($0.tile) }.map(\.path)
        let extra = reader.tiles.filter { !recorded.contains($0.routingTile) }.map(\.path)
        if !missing.isEmpty { out.append("its index.bin lacks \(plural(missing.count, "recorded tile")): \(missing.joined(separator: ", "))") }
        if !extra.isEmpty { out.append("its index.bin has \(plural(extra.count, "tile")) the lock does not record: \(extra.joined(separator: ", "))") }
        if reader.fileSize != UInt64(record.bytes) {
            out.append("it is \(reader.fileSize) bytes, the lock says \(record.bytes)")
        }
        return (true, out)
    }

    /// Reads every tile the lock records from the extract by walking its members (a damaged
    /// `index.bin` or a cut-off end hides nothing that can still be read), checks each one's header
    /// against its place and the pack's build and its SHA-256 against the lock's, and hands each
    /// good tile's bytes to `good`. Returns the recorded tiles that are missing or damaged, in order.
    public static func tiles(_ record: RoutingPackRecord, directory: URL,
                             good: (GraphTileID, [UInt8]) throws -> Void = { _, _ in }) throws -> [TileProblem] {
        let url = directory.appendingPathComponent(record.file)
        let members = FileManager.default.fileExists(atPath: url.path) ? try TileExtractScan.members(url) : []
        let handle = FileManager.default.fileExists(atPath: url.path) ? try FileHandle(forReadingFrom: url) : nil
        defer { try? handle?.close() }  // best effort: closing a file only read
        var byTile: [GraphTileID: [TileExtractScan.Member]] = [:]
        for member in members { byTile[member.tile, default: []].append(member) }
        var problems: [TileProblem] = []
        for tile in record.tiles {
            guard let id = GraphTileID(tile.tile) else { continue }
            var found: String? = "missing from the tar"
            for member in byTile[id] ?? [] {
                guard let handle else { break }
                try handle.seek(toOffset: member.offset)
                let bytes = [UInt8](try handle.read(upToCount: member.size) ?? Data())
                found = problem(bytes, tile: tile, id: id, record: record)
                if found == nil {
                    try good(id, bytes)
                    break
                }
            }
            if let found { problems.append(TileProblem(tile: tile.tile, path: tile.path, what: found)) }
        }
        return problems
    }

    /// What is wrong with `bytes` as the recorded `tile`, or nil.
    static func problem(_ bytes: [UInt8], tile: RoutingPackRecord.Tile, id: GraphTileID, record: RoutingPackRecord) -> String? {
        let header: GraphTileHeader
        do {
            header = try GraphTileHeader.check(bytes, expected: id)
        } catch {
            return "fails the header check: \(error)"
        }
        if let datasetID = record.datasetID, let version = record.version,
           header.buildIdentity != GraphBuildIdentity(datasetID: datasetID, version: version) {
            return "is of another build (\(header.buildIdentity)) than the pack's (dataset \(datasetID), Valhalla \(version))"
        }
        let digest = "sha256:" + SHA256.hex(Data(bytes))
        guard digest == tile.digest else {
            return "its SHA-256 (\(digest.prefix(19))…, \(bytes.count) bytes) differs from the lock's (\(tile.digest.prefix(19))…, \(tile.bytes) bytes)"
        }
        return nil
    }
}
