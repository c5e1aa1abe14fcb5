import Foundation
import ProvisionFoundation
import ProvisionModel

/// What an audit found of the store's routing packs (`routing/<pack>.tar`): each extract the lock
/// records checked against it (its index), and with `--verify` every tile re-read.
extension AuditDocument {
    /// One routing pack the lock records, as the audit found it.
    public struct RoutingPack: Equatable, Sendable {
        public var id: String
        /// `routing/<id>.tar`.
        public var file: String
        /// Tiles and bytes as the lock records them.
        public var tiles: Int
        public var bytes: Int64
        /// Whether the extract was opened and its `index.bin` validated against the lock.
        public var fileChecked = false
        /// Whether every tile was re-read: header and SHA-256 against the lock (`--verify`).
        public var tilesChecked = false
        /// What is wrong with the file as a whole, one sentence each.
        public var problems: [String] = []
        /// The tiles found missing or damaged (`--verify`), each with what is wrong.
        public var damagedTiles: [DamagedTile] = []

        public init(id: String, file: String, tiles: Int, bytes: Int64) {
            self.id = id
            self.file = file
            self.tiles = tiles
            self.bytes = bytes
        }

        /// Whether it was checked and nothing was found: an extract the audit could not open is never whole.
        public var isWhole: Bool { fileChecked && problems.isEmpty && damagedTiles.isEmpty }

        var mark: String { isWhole ? "✓" : "✗" }
    }

    /// A graph tile of a pack that `--verify` found missing from the tar or damaged.
    public struct DamagedTile: Equatable, Sendable {
        /// Its path in the extract (`2/000/807/142.gph`).
        public var path: String
        /// What is wrong with it.
        public var problem: String

        public init(path: String, problem: String) {
            self.path = path
            self.problem = problem
        }
    }

    /// Whether the store has routing packs to speak of: the lock records some or files are there.
    var hasRoutingPacks: Bool { !routingPacks.isEmpty || !unknownRoutingPackFiles.isEmpty || routingPackFilesUnchecked }

    /// The problems of the routing packs, one sentence each.
    var routingPackProblems: [String] {
        routingPacks.flatMap { pack in
            pack.problems.map { "routing pack \(pack.id) (\(pack.file)): \($0); 'apply --repair' writes it again" }
                + pack.damagedTiles.map { "routing pack \(pack.id) (\(pack.file)): graph tile \($0.path) \($0.problem); "
                    + "'apply --repair' fetches it again" }
        } + unknownRoutingPackFiles.map {
            "\($0) is in the store's routing/ but the lock records no pack of it (left by an apply that failed, or put "
                + "there by hand): remove it, or apply the job whose pack it is"
        }
    }

    /// The JSON of `routingPacks`.
    var routingPacksJSON: JSONValue {
        .array(routingPacks.map { pack in
            ["id": .string(pack.id), "file": .string(pack.file), "whole": .bool(pack.isWhole), "tiles": .int(pack.tiles),
             "bytes": .int(Int(pack.bytes)), "fileChecked": .bool(pack.fileChecked), "tilesChecked": .bool(pack.tilesChecked),
             "problems": .array(pack.problems.map { .string($0) }),
             "damagedTiles": .array(pack.damagedTiles.map { ["path": .string($0.path), "problem": .string($0.problem)] })]
        })
    }

    /// The text of the routing packs: one line each, marked.
    var routingPacksText: String {
        guard !routingPacks.isEmpty || !unknownRoutingPackFiles.isEmpty else { return "" }
        var out = "\nRouting packs:\n"
        for pack in routingPacks {
            out += "    \(pack.mark) \(pack.id): \(pack.file), \(plural(pack.tiles, "graph tile")), \(ByteFormat.string(pack.bytes))"
            let count = pack.problems.count + pack.damagedTiles.count
            out += count == 0 ? (pack.tilesChecked ? ", every tile equal to the lock's\n" : "\n") : " (\(plural(count, "problem")))\n"
        }
        for file in unknownRoutingPackFiles { out += "    ✗ \(file): not in the lock\n" }
        return out
    }
}
