import Foundation

/// Tiles and resources with their bytes, summed per set of region rows that link them: the
/// raw material of a `Footprint`.
///
/// Why sets of rows: what removing a region frees, what it shares and with whom all follow
/// from one number per distinct set of rows holding content (the rows of a tile that London and
/// Paris both link are {london, paris}). There are few such sets however many tiles there are,
/// so a store of any size reduces to a handful of entries, read in one streaming pass.
///
/// A member is a region row id for a store, or the index of a desired row in `Plan.regions`
/// for a plan.
public struct ContentSharing: Equatable, Sendable {
    /// Which rows link some content, and what kind the content is.
    public struct Key: Hashable, Sendable {
        /// The members, ascending and distinct, never empty.
        public var members: [Int64]
        /// `.tile` for tiles, else the resources' kind.
        public var kind: ResourceKind

        public init(members: [Int64], kind: ResourceKind) {
            self.members = members
            self.kind = kind
        }
    }

    /// The content linked by exactly the members of each key.
    public private(set) var amounts: [Key: ContentAmount] = [:]

    public init() {}

    /// Adds `count` rows of `kind` linked by exactly `members` (any order, duplicates ignored),
    /// holding `bytes`; `estimated` when the bytes are not stored yet but expected.
    public mutating func add(_ members: [Int64], kind: ResourceKind, count: Int = 1, bytes: Int64, estimated: Bool = false) {
        guard !members.isEmpty, count > 0 || bytes > 0 else { return }
        var sorted = members.sorted()
        if sorted.count > 1 {
            var unique: [Int64] = []
            for member in sorted where unique.last != member { unique.append(member) }
            sorted = unique
        }
        let amount = kind == .tile ? ContentAmount(tiles: count, bytes: bytes, estimatedBytes: estimated ? bytes : 0)
            : ContentAmount(resources: count, bytes: bytes, estimatedBytes: estimated ? bytes : 0)
        amounts[Key(members: sorted, kind: kind), default: ContentAmount()] += amount
    }

    /// The keys in a stable order (by members, then kind), for output that does not depend on
    /// hashing.
    public var sortedKeys: [Key] {
        amounts.keys.sorted { a, b in
            a.members == b.members ? a.kind < b.kind : a.members.lexicographicallyPrecedes(b.members)
        }
    }

    /// Everything linked by any row.
    public var total: ContentAmount { amounts.values.reduce(ContentAmount(), +) }
}

/// Tiles, resources and the bytes they take in the store.
public struct ContentAmount: Equatable, Sendable {
    /// Tile rows.
    public var tiles: Int
    /// Resource rows.
    public var resources: Int
    /// Bytes as stored (the `data` column's length, compressed where the row is), estimated
    /// bytes included.
    public var bytes: Int64
    /// The part of `bytes` that is an estimate: content a plan would download. 0 for a store.
    public var estimatedBytes: Int64

    public init(tiles: Int = 0, resources: Int = 0, bytes: Int64 = 0, estimatedBytes: Int64 = 0) {
        self.tiles = tiles
        self.resources = resources
        self.bytes = bytes
        self.estimatedBytes = estimatedBytes
    }

    /// Whether nothing is counted.
    public var isZero: Bool { tiles == 0 && resources == 0 && bytes == 0 }

    /// Whether part of the bytes is an estimate.
    public var isEstimated: Bool { estimatedBytes > 0 }

    public static func + (a: ContentAmount, b: ContentAmount) -> ContentAmount {
        ContentAmount(tiles: a.tiles + b.tiles, resources: a.resources + b.resources, bytes: a.bytes + b.bytes,
                      estimatedBytes: a.estimatedBytes + b.estimatedBytes)
    }

    public static func += (a: inout ContentAmount, b: ContentAmount) { a = a + b }
}
