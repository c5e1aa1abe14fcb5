import Foundation
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// The checks that every input of a merge is a finished shard of one sharded apply, and that
/// together they hold every tile of the job once: each refusal is `invalidJob` (65) naming the
/// input and why, a missing store `missingInput` (66), before anything is written.
extension MergeRun {
    /// Reads the store `name` names and the shard its lock records.
    static func read(_ name: String) throws(ProvisionError) -> Input {
        let path = StorePath(url: URL(fileURLWithPath: name))
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path.url.path, isDirectory: &isDirectory) else {
            throw ProvisionError(.missingInput, "no store at \(name): the directory does not exist")
        }
        guard isDirectory.boolValue else {
            throw ProvisionError(.invalidJob, "\(name) is a file, not a store directory; give the directory of a shard's store")
        }
        guard path.hasDatabase else {
            throw ProvisionError(.missingInput, "no store at \(name): \(StoreDirectory.databaseName) is missing")
        }
        let (lock, problem) = PlanSession.readLock(path)
        guard let lock else {
            let why = problem.map { "its \(StoreDirectory.lockName) cannot be read (\($0))" } ?? "it has no \(StoreDirectory.lockName)"
            throw ProvisionError(.invalidJob, "\(name) is not the store of a sharded apply: \(why)")
        }
        guard let entry = lock.shard else {
            throw ProvisionError(.invalidJob, "\(name) is not the store of a sharded apply: its lock records no shard "
                                 + "(it holds a whole job; 'apply --shard I/N' writes shards)")
        }
        return Input(name: name, path: path, lock: lock, entry: entry)
    }

    /// Checks that the inputs are the finished shards of one job, each once, all of them, whose
    /// tiles tile the job's; returns them in shard order.
    static func order(_ inputs: [Input]) throws(ProvisionError) -> [Input] {
        guard let first = inputs.first else { throw ProvisionError(.usage, "merge needs at least one store") }
        for input in inputs.dropFirst() { try checkSameJob(input, first) }
        var byIndex: [Int: Input] = [:]
        for input in inputs {
            if let other = byIndex[input.entry.shard.index] {
                throw ProvisionError(.invalidJob, "shard \(input.entry.shard) is given twice: \(other.name) and \(input.name); "
                                     + "give each shard once")
            }
            byIndex[input.entry.shard.index] = input
        }
        let count = first.entry.shard.count
        let missing = (0..<count).filter { byIndex[$0] == nil }
        if !missing.isEmpty {
            let names = missing.map { "\($0)/\(count)" }.joined(separator: ", ")
            throw ProvisionError(.invalidJob, "\(missing.count == 1 ? "shard" : "shards") \(names) \(missing.count == 1 ? "is" : "are") "
                                 + "missing: the job is split \(count) ways and \(plural(inputs.count, "store")) "
                                 + "\(inputs.count == 1 ? "was" : "were") given (\(inputs.map(\.label).joined(separator: ", ")))")
        }
        let ordered = (0..<count).compactMap { byIndex[$0] }
        for input in ordered {
            if let region = input.lock.regions.first(where: { !$0.isComplete }) {
                throw ProvisionError(.invalidJob, "\(input.label) is incomplete: region \(region.key) lacks tiles or resources "
                                     + "of its share; run 'provision apply --shard \(input.entry.shard)' into it again")
            }
        }
        var next = 0
        for input in ordered {
            let tiles = input.entry.tiles
            guard tiles.lowerBound == next else {
                throw ProvisionError(.invalidJob, "\(input.label) holds tiles \(tiles.lowerBound)..<\(tiles.upperBound), but the "
                                     + "shards before it end at \(next): the shards' tiles do not tile 0..<\(first.entry.totalTiles)")
            }
            guard input.lock.tileCount == tiles.count else {
                throw ProvisionError(.invalidJob, "\(input.label) holds \(plural(input.lock.tileCount, "tile")) but its share "
                                     + "\(tiles.lowerBound)..<\(tiles.upperBound) has \(grouped(tiles.count))")
            }
            next = tiles.upperBound
        }
        guard next == first.entry.totalTiles else {
            throw ProvisionError(.invalidJob, "the shards' tiles end at \(next), not at the job's \(first.entry.totalTiles) "
                                 + "(\(ordered.last?.label ?? "")): the shards' tiles do not tile 0..<\(first.entry.totalTiles)")
        }
        return ordered
    }

    /// Refuses `input` unless it is a shard of the same apply as `first`: the same job, build
    /// time, split, plan (style packs, regions) and resources.
    private static func checkSameJob(_ input: Input, _ first: Input) throws(ProvisionError) {
        func refuse(_ why: String) -> ProvisionError {
            ProvisionError(.invalidJob, "\(input.label) and \(first.label) are not shards of one apply: \(why); "
                           + "merge the shards of one 'apply --shard' run")
        }
        let a = input.lock, b = first.lock
        if a.jobDigest != b.jobDigest {
            throw refuse("they are of different jobs (\(a.jobName) \(a.jobDigest.prefix(19))…, \(b.jobName) \(b.jobDigest.prefix(19))…)")
        }
        if a.epoch != b.epoch { throw refuse("they were built at different times (epoch \(a.epoch) and \(b.epoch))") }
        if input.entry.shard.count != first.entry.shard.count {
            throw refuse("the job is split \(input.entry.shard.count) ways in one and \(first.entry.shard.count) in the other")
        }
        if input.entry.totalTiles != first.entry.totalTiles {
            throw refuse("they count \(grouped(input.entry.totalTiles)) and \(grouped(first.entry.totalTiles)) tiles in the job")
        }
        if a.stylePacks != b.stylePacks || a.regions.map(Self.planned) != b.regions.map(Self.planned) || a.jobName != b.jobName
            || input.entry.searchPacks != first.entry.searchPacks {
            throw refuse("their plans differ (a style, TileJSON or region resolved differently)")
        }
        if a.resourceCount != b.resourceCount || Self.resourceChunks(a) != Self.resourceChunks(b) {
            throw refuse("their resources differ (\(plural(a.resourceCount, "resource")) and \(plural(b.resourceCount, "resource")))")
        }
    }

    /// A region entry without what depends on the shard's share.
    private static func planned(_ region: LockDocument.RegionEntry) -> LockDocument.RegionEntry {
        var region = region
        region.isComplete = true
        return region
    }

    /// The lock's digests of the resource rows.
    private static func resourceChunks(_ lock: LockDocument) -> [ChunkDigest] {
        lock.chunks.filter { if case .resource = $0.start { return true } else { return false } }
    }
}
