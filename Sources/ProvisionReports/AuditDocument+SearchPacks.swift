import Foundation
import ProvisionFoundation
import ProvisionModel

/// What an audit found of the store's search packs (`search/<pack>.db`): each file the lock
/// records checked against it, and with `--verify --manifest` against the tiles it comes from.
extension AuditDocument {
    /// One search pack the lock records, as the audit found it.
    public struct SearchPack: Equatable, Sendable {
        public var id: String
        /// `search/<id>.db`.
        public var file: String
        /// Entries and bytes as the lock records them.
        public var entries: Int
        public var bytes: Int64
        /// Whether the file was read and checked: present, opens, is a search pack, its digest.
        public var fileChecked = false
        /// Whether it was rebuilt from the stored tiles and compared (`--verify --manifest`).
        public var tilesChecked = false
        /// What is wrong with it, one sentence each; empty when nothing was found.
        public var problems: [String] = []

        public init(id: String, file: String, entries: Int, bytes: Int64) {
            self.id = id
            self.file = file
            self.entries = entries
            self.bytes = bytes
        }

        /// Whether it was checked and nothing was found: a pack the audit could not read is never whole.
        public var isWhole: Bool { fileChecked && problems.isEmpty }

        /// `✓` whole, `✗` something found wrong.
        var mark: String { isWhole ? "✓" : "✗" }
    }

    /// Whether the store has search packs to speak of: the lock records some or files are there.
    var hasSearchPacks: Bool { !searchPacks.isEmpty || !unknownSearchPackFiles.isEmpty || searchPackFilesUnchecked }

    /// The problems of the search packs, one sentence each.
    var searchPackProblems: [String] {
        searchPacks.flatMap { pack in pack.problems.map { "search pack \(pack.id) (\(pack.file)): \($0)" } }
            + unknownSearchPackFiles.map {
                "\($0) is in the store's search/ but the lock records no pack of it (left by a build that failed, or put "
                    + "there by hand): remove it, or apply the job whose pack it is"
            }
    }

    /// The JSON of `searchPacks`.
    var searchPacksJSON: JSONValue {
        .array(searchPacks.map { pack in
            ["id": .string(pack.id), "file": .string(pack.file), "whole": .bool(pack.isWhole), "entries": .int(pack.entries),
             "bytes": .int(Int(pack.bytes)), "fileChecked": .bool(pack.fileChecked), "tilesChecked": .bool(pack.tilesChecked),
             "problems": .array(pack.problems.map { .string($0) })]
        })
    }

    /// The text of the search packs: one line each, marked.
    var searchPacksText: String {
        guard !searchPacks.isEmpty || !unknownSearchPackFiles.isEmpty else { return "" }
        var out = "\nSearch packs:\n"
        for pack in searchPacks {
            out += "    \(pack.mark) \(pack.id): \(pack.file), \(plural(pack.entries, "place")), \(ByteFormat.string(pack.bytes))"
            out += pack.problems.isEmpty ? (pack.tilesChecked ? ", equal to a rebuild from its tiles\n" : "\n")
                : " (\(plural(pack.problems.count, "problem")))\n"
        }
        for file in unknownSearchPackFiles { out += "    ✗ \(file): not in the lock\n" }
        return out
    }
}
