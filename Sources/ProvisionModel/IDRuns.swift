/// Ascending row ids kept as runs of consecutive ids: 16 bytes a run instead of 8 an id.
///
/// Why: an apply holds every tile link of every region until it writes them at the end (links
/// follow tiles in the next file, so that its bytes do not depend on when tiles arrive).
/// Tile ids are positions in key order, so a region's ids come mostly in long runs: a one-region
/// job's links are one run whatever its size, where a list of them was 80 MB at 10M tiles.
public struct IDRuns: Sequence, Equatable, Sendable {
    /// Each run's first id and its length.
    private var runs: [(first: Int64, count: Int64)] = []
    /// How many ids the runs hold.
    public private(set) var count = 0

    public init() {}

    /// The ids of `ids`, which must ascend.
    public init<S: Sequence>(_ ids: S) where S.Element == Int64 {
        for id in ids { append(id) }
    }

    /// The last id appended.
    public var last: Int64? { runs.last.map { $0.first + $0.count - 1 } }

    /// How many runs hold the ids.
    public var runCount: Int { runs.count }

    /// Calls `body` with each run's first and last id, ascending.
    public func forEachRun(_ body: (_ first: Int64, _ last: Int64) throws -> Void) rethrows {
        for run in runs { try body(run.first, run.first + run.count - 1) }
    }

    /// Adds `id`, which must be above every id already added.
    public mutating func append(_ id: Int64) {
        if let last {
            precondition(id > last, "IDRuns takes ascending ids: \(id) after \(last)")
            if id == last + 1 {
                runs[runs.count - 1].count += 1
                count += 1
                return
            }
        }
        runs.append((id, 1))
        count += 1
    }

    public func makeIterator() -> Iterator { Iterator(runs: runs) }

    /// The ids in ascending order.
    public struct Iterator: IteratorProtocol {
        fileprivate let runs: [(first: Int64, count: Int64)]
        private var run = 0
        private var offset: Int64 = 0

        fileprivate init(runs: [(first: Int64, count: Int64)]) { self.runs = runs }

        public mutating func next() -> Int64? {
            guard run < runs.count else { return nil }
            let id = runs[run].first + offset
            offset += 1
            if offset == runs[run].count {
                run += 1
                offset = 0
            }
            return id
        }
    }

    public static func == (a: IDRuns, b: IDRuns) -> Bool {
        a.count == b.count && a.runs.elementsEqual(b.runs) { $0.first == $1.first && $0.count == $1.count }
    }
}
