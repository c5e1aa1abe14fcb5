/// Walks several ascending sequences together: each distinct element once, ascending, with the
/// indices of the sequences that hold it.
///
/// Why: `SortedUnion` lists each tile of overlapping covers once; this also says whose covers
/// it is in (which regions share it), holding one element per input, never a set of tiles.
public struct SortedMembership<Base: Sequence> where Base.Element: Comparable {
    private var iterators: [Base.Iterator]
    private var heads: [Base.Element?]
    private var members: [Int] = []

    /// The walk over `sequences`, each of which must be ascending.
    public init(_ sequences: [Base]) {
        iterators = sequences.map { $0.makeIterator() }
        heads = []
        for i in iterators.indices { heads.append(iterators[i].next()) }
    }

    /// Calls `body` with each distinct element, ascending, and the ascending indices of the
    /// sequences holding it (an element repeated within one sequence is taken once).
    public mutating func forEach(_ body: (Base.Element, [Int]) throws -> Void) rethrows {
        while true {
            var least: Base.Element?
            for head in heads {
                guard let head else { continue }
                if let current = least, !(head < current) { continue }
                least = head
            }
            guard let value = least else { return }
            members.removeAll(keepingCapacity: true)
            for i in heads.indices where heads[i] == value {
                members.append(i)
                repeat { heads[i] = iterators[i].next() } while heads[i] == value
            }
            try body(value, members)
        }
    }
}
