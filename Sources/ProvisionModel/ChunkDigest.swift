import TileMath

/// The key of a stored row, in the order the content digest reads rows: resources by URL, then
/// tiles by template, pixel ratio, zoom, x and y (SQLite's binary order for the text).
public enum ChunkKey: Hashable, Sendable, Comparable {
    case resource(url: String)
    case tile(TileKey)

    /// The section a chunk never leaves: all resources, or one template, ratio and zoom.
    public var section: String {
        switch self {
        case .resource: return "R"
        case .tile(let key): return "T \(key.urlTemplate) \(key.pixelRatio) \(key.tile.z)"
        }
    }

    public static func < (a: ChunkKey, b: ChunkKey) -> Bool {
        switch (a, b) {
        case (.resource, .tile): return true
        case (.tile, .resource): return false
        case (.resource(let x), .resource(let y)): return Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8))
        case (.tile(let x), .tile(let y)):
            if x.urlTemplate != y.urlTemplate {
                return Array(x.urlTemplate.utf8).lexicographicallyPrecedes(Array(y.urlTemplate.utf8))
            }
            return (x.pixelRatio, x.tile.z, x.tile.x, x.tile.y) < (y.pixelRatio, y.tile.z, y.tile.x, y.tile.y)
        }
    }
}

/// The digest of one chunk of stored rows (see the lock's `store.chunks`).
public struct ChunkDigest: Equatable, Sendable {
    /// The key of the chunk's first row.
    public var start: ChunkKey
    /// How many rows it held.
    public var rows: Int
    /// The chunk's `ChunkSums` as 32 hex digits (`ChunkSums.hex`); in a lock older than version 5,
    /// the first 16 hex digits of the SHA-256 of its rows as the content digest reads them.
    public var digest: String

    public init(start: ChunkKey, rows: Int, digest: String) {
        self.start = start
        self.rows = rows
        self.digest = digest
    }
}

/// The two weighted sums a lock records per chunk of rows, over one 61-bit value per row.
///
/// Why sums and not one hash of the chunk: a single hash tells only that something in the chunk
/// changed, so a repair had to fetch every row of it again even when the damage showed in one
/// row (a tile that does not decode, a row deleted). With `first` = Σ vᵢ and `second` =
/// Σ (i+1)·vᵢ (mod the Mersenne prime 2⁶¹−1, vᵢ the row's value, i its place in the chunk), one
/// row whose damage shows in itself (unusable, missing, or one extra) is an unknown the two sums
/// can solve for, and the second sum then still checks every other row of the chunk: the
/// damaged row costs one download, and its neighbours are known intact. Only damage nothing but
/// the digest shows (valid bytes that are not the ones the build wrote), or two damaged rows in
/// one chunk, widens to the chunk's rows.
public struct ChunkSums: Equatable, Sendable {
    /// 2⁶¹ − 1.
    public static let modulus: UInt64 = (1 << 61) - 1

    /// Σ vᵢ.
    public var first: UInt64 = 0
    /// Σ (i+1)·vᵢ.
    public var second: UInt64 = 0
    /// Rows added.
    public var count = 0

    /// Empty sums.
    public init() {}

    /// Sums with these values (as a lock records them).
    public init(first: UInt64, second: UInt64, count: Int) {
        self.first = first
        self.second = second
        self.count = count
    }

    /// The row value of a row digest: its first eight bytes, big-endian, reduced.
    ///
    /// `@inlinable` so the caller's module specialises it: unspecialised, every row of an apply
    /// looked up the prefix iterator's metadata at run time (with `SortedUnion.next()`, 3.4% of
    /// a 200,080-tile apply's CPU, perf).
    @inlinable
    public static func value<C: Collection>(ofDigest digest: C) -> UInt64 where C.Element == UInt8 {
        var value: UInt64 = 0
        for byte in digest.prefix(8) { value = value << 8 | UInt64(byte) }
        return reduce(value)
    }

    /// Adds the next row's value.
    public mutating func add(_ value: UInt64) {
        count += 1
        first = Self.add(first, value)
        second = Self.add(second, Self.multiply(value, UInt64(count)))
    }

    /// The 32 hex digits a lock records: `first` then `second`, 16 each.
    public var hex: String {
        func sixteen(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return sixteen(first) + sixteen(second)
    }

    /// Reads `hex` (with `count` rows); nil when it is not 32 hex digits of two reduced values.
    public init?(hex: String, count: Int) {
        guard hex.utf8.count == 32, let a = UInt64(hex.prefix(16), radix: 16), let b = UInt64(hex.suffix(16), radix: 16),
              a < Self.modulus, b < Self.modulus else { return nil }
        self.init(first: a, second: b, count: count)
    }

    /// What explains the difference between these sums (the lock's) and the rows a chunk holds now.
    public enum Explanation: Equatable, Sendable {
        /// The rows are the ones the build wrote.
        case intact
        /// Every other row is intact; the one unusable row (its index in `rows`) is the damage.
        case unusableRow(Int)
        /// Every row held is intact; one row the build wrote is missing.
        case missingRow
        /// Every other row is intact; the row at this index in `rows` was not written by the build.
        case extraRow(Int)
        /// The damage cannot be pinned on one row: every row of the chunk is suspect.
        case unexplained
    }

    /// Explains the chunk's rows now (their values, in key order, and whether each is unusable in
    /// itself) against these sums. One unusable, missing or extra row is solved for; anything else
    /// that differs is `unexplained`.
    public func explain(_ rows: [(value: UInt64, isUnusable: Bool)]) -> Explanation {
        let unusable = rows.indices.filter { rows[$0].isUnusable }
        if rows.count == count, sums(rows.map(\.value)) == (first, second) { return .intact }
        switch (rows.count - count, unusable.count) {
        case (0, 1):
            // The unusable row's value is what the first sum lacks; the second sum checks the rest.
            let u = unusable[0]
            var values = rows.map(\.value)
            values[u] = 0
            let (a, b) = sums(values)
            let solved = Self.subtract(first, a)
            return Self.add(b, Self.multiply(solved, UInt64(u + 1))) == second ? .unusableRow(u) : .unexplained
        case (-1, 0):
            // A missing row at place j: rows from j on moved one place down.
            let values = rows.map(\.value)
            let solved = Self.subtract(first, sums(values).0)
            for j in 0...rows.count {
                var b = Self.multiply(solved, UInt64(j + 1))
                for (i, value) in values.enumerated() { b = Self.add(b, Self.multiply(value, UInt64(i < j ? i + 1 : i + 2))) }
                if b == second { return .missingRow }
            }
            return .unexplained
        case (1, 0), (1, 1):
            for e in rows.indices where unusable.isEmpty || unusable == [e] {
                var values = rows.map(\.value)
                values.remove(at: e)
                if sums(values) == (first, second) { return .extraRow(e) }
            }
            return .unexplained
        default:
            return .unexplained
        }
    }

    private func sums(_ values: [UInt64]) -> (UInt64, UInt64) {
        var sums = ChunkSums()
        for value in values { sums.add(value) }
        return (sums.first, sums.second)
    }

    @usableFromInline
    static func reduce(_ value: UInt64) -> UInt64 {
        let folded = (value & modulus) + (value >> 61)
        return folded >= modulus ? folded - modulus : folded
    }

    private static func add(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let sum = a + b  // both below 2⁶¹: no overflow
        return sum >= modulus ? sum - modulus : sum
    }

    private static func subtract(_ a: UInt64, _ b: UInt64) -> UInt64 {
        a >= b ? a - b : a + modulus - b
    }

    private static func multiply(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (high, low) = a.multipliedFullWidth(by: b)
        return reduce((low & modulus) + ((high << 3) | (low >> 61)))
    }
}
