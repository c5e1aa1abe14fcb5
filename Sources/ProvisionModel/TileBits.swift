/// A set of tile positions within one tile group (their index in the group's ascending tile
/// order), one bit each.
///
/// Why bits: an apply must remember which of a group's tiles it downloads (the work list sends
/// them, the key-order walk takes them from memory) while it walks the group twice. A list of
/// tile ids costs 24 bytes a tile; a bit per tile of the group keeps a 10-million-tile apply
/// to about a megabyte.
public struct TileBits: Sendable, Equatable {
    private var words: [UInt64] = []
    /// How many positions are in the set.
    public private(set) var count = 0

    public init() {}

    /// Adds `position` (positions are added in any order; the storage grows to the largest).
    public mutating func insert(_ position: Int) {
        let word = position >> 6, bit = UInt64(1) << UInt64(position & 63)
        if word >= words.count { words.append(contentsOf: repeatElement(0, count: word - words.count + 1)) }
        if words[word] & bit == 0 {
            words[word] |= bit
            count += 1
        }
    }

    /// Whether `position` is in the set.
    public func contains(_ position: Int) -> Bool {
        let word = position >> 6
        return word < words.count && words[word] & (UInt64(1) << UInt64(position & 63)) != 0
    }

    /// Whether the set is empty.
    public var isEmpty: Bool { count == 0 }
}
