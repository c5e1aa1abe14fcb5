import Foundation
import ProvisionExecution
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionStore
import RoutingGraph

extension PlanSession {
    /// The job's routing packs planned against the store: the graph tiles each region's geometry
    /// meets on each level, and what the apply adds, keeps and removes (judged by the lock's
    /// records and the extracts in the store); a source extract that cannot be read is missing
    /// input (66), naming the file and what is wrong with it. With `shard`, each pack is cut to
    /// that shard's share of its cells (`RoutingPackShards.share`).
    public func routingPackPlans(shard: Shard? = nil) throws(ProvisionError) -> [RoutingPackPlan] {
        guard !input.job.routingPacks.isEmpty else { return [] }
        do {
            let plans = try RoutingPackPlanning.plan(input.job, records: lock?.routingPacks ?? [], directory: store.url) { pack in
                switch try tileExtractSource(pack) {
                case nil: return nil
                case .local(let url)?: return try RoutingPackPlanning.tiles(ofExtract: url, pack: pack.id)
                case .remote(let extract)?: return extract.tiles
                }
            }
            let sized = plans.map(sizingFromDirectory)
            return shard.map { shard in sized.map { RoutingPackShards.share($0, shard: shard) } } ?? sized
        } catch let error as ProvisionError {
            throw error
        } catch {
            throw ProvisionError(.missingInput, "\(error)")
        }
    }

    /// `plan` with the size of each tile it adds when its `{tilePath}` template's prefix maps to a
    /// directory origin: a file's size is cheap to read there, where over HTTP only the fetch tells.
    /// Gzipped tiles stay unknown: the extract holds them inflated, a size their files do not give.
    /// Kept tiles are sized too, for a repair that fetches them again.
    func sizingFromDirectory(_ plan: RoutingPackPlan) -> RoutingPackPlan {
        guard plan.sourceBytes == nil, plan.pack.extract == nil, !plan.pack.gzip, !plan.add.isEmpty else { return plan }
        var sizes: [RoutingTile: Int] = [:]
        for tile in plan.add + plan.keep {
            guard let id = GraphTileID(tile) else { continue }
            let resolved = fetcher.resolve(plan.pack.url(path: id.path))
            guard case .directory(let prefix, let directory)? = resolved.route,
                  case .success(let file) = DirectoryOrigin(prefix: prefix, directory: directory).fileURL(for: resolved.url) else {
                return plan
            }
            // No file (or one that cannot be read): the fetch answers 404, a cell without roads, nothing fetched.
            guard let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)??.intValue else {
                continue
            }
            sizes[tile] = size
        }
        var sized = plan
        sized.sourceBytes = sizes
        return sized
    }

    /// Where `pack`'s tile extract is read from (nil for a URL template): its local file, a file of
    /// the directory origin its URL's prefix maps to, or the server, whose index is read once per
    /// session (its version pinned by that read for the rest of the run).
    func tileExtractSource(_ pack: RoutingPack) throws(ProvisionError) -> TileExtractSource? {
        guard let extract = pack.extract else { return nil }
        guard let url = pack.remoteExtract else { return .local(extract) }
        if let opened = tileExtracts[pack.id] { return opened }
        let source: TileExtractSource
        switch fetcher.file(at: url, noun: "the tile extract", consequence: "its index no longer describes its tiles") {
        case .local(let file): source = .local(file)
        case .remote(let file): source = .remote(try RemoteTileExtract(file, pack: pack.id))
        case .unsupported(let why):
            throw ProvisionError(.invalidJob, "routing pack '\(pack.id)': cannot read the tile extract \(url): \(why)")
        }
        tileExtracts[pack.id] = source
        return source
    }
}

/// Where a routing pack's tile extract is read from.
enum TileExtractSource {
    /// A local file (the job's path, or a directory origin's file).
    case local(URL)
    /// A server, with range requests.
    case remote(RemoteTileExtract)
}

/// The apply's routing step, after the database and search packs: each pack's new graph tiles
/// fetched through the session's fetcher (origins, HTTP, retries, per-host caps), each body's
/// header checked against the tile asked for, and the pack's extract written from the tiles kept
/// and fetched, then recorded in the lock.
struct RoutingPackStep {
    let session: PlanSession
    let progress: ProgressSink

    /// Brings every routing pack of `plan` (or, for a saved plan, of the job) up to date and records
    /// it in `lock`; extracts of packs the job no longer has are removed. Returns the error that
    /// stopped a pack (its previous record, if any, is kept, as is its file), after the others were done.
    func run(_ plan: Plan, lock: inout LockDocument) -> ProvisionError? {
        let packs: [RoutingPackPlan]
        do {
            packs = plan.routingPacks.isEmpty ? try session.routingPackPlans(shard: plan.shard?.share.shard) : plan.routingPacks
        } catch {
            return error
        }
        let previous = session.lock?.routingPacks ?? []
        for old in previous where !packs.contains(where: { $0.pack.id == old.id }) {
            // A file already gone is what removing it wants.
            try? FileManager.default.removeItem(at: session.store.url.appendingPathComponent(old.file))
        }
        removeStaleStaging(keeping: packs.map(\.pack))
        var failure: ProvisionError?
        for pack in packs {
            let record = previous.first { $0.id == pack.pack.id }
            if pack.action == .keep, var record {
                record.absent = pack.absent
                lock.routingPacks.append(record)
                emit(pack, record: record, built: false, fetched: 0, seconds: 0)
                continue
            }
            let (kept, error) = update(pack, previous: record)
            if let kept { lock.routingPacks.append(kept) }
            failure = failure ?? error
        }
        return failure
    }

    /// A fetch that reads each request's tile from the local tile extract at `url` (the request's
    /// URL is its path there), as the fetcher would deliver it: the bytes, or `.notFound`.
    static func reading(_ url: URL) -> (inout IndexingIterator<[FetchRequest]>, (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void) -> Void {
        { requests, onResult in
            let reader: TileExtractReader
            do {
                reader = try TileExtractReader(url: url)
            } catch {
                while let request = requests.next() { onResult(request, .failure(.unsupported("\(error)"))) }
                return
            }
            while let request = requests.next() {
                guard let tile = try? GraphTileID.parse(path: request.url) else {  // not a path: no tile of the extract
                    onResult(request, .failure(.notFound))
                    continue
                }
                guard reader.entries[tile] != nil else {
                    onResult(request, .failure(.notFound))
                    continue
                }
                do {
                    onResult(request, .success(FetchedBody(data: Data(try reader.read(tile)))))
                } catch {
                    onResult(request, .failure(.invalidBody("\(error)")))
                }
            }
        }
    }

    /// Removes the staging directories (`routing/.<id>.partial`) of packs the job no longer has:
    /// tiles an unfinished apply fetched for a pack that is gone.
    func removeStaleStaging(keeping packs: [RoutingPack]) {
        let directory = session.store.url.appendingPathComponent(StoreDirectory.routingDirectoryName)
        let wanted = Set(packs.map { URL(fileURLWithPath: $0.stagingDirectory).lastPathComponent })
        // No routing directory (or one that cannot be listed): nothing staged to remove.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasPrefix(".") && name.hasSuffix(".partial") && !wanted.contains(name) {
            let staged = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: staged.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            // Best effort: a staging directory left behind costs space, not correctness.
            try? FileManager.default.removeItem(at: staged)
        }
    }

    /// Fetches what `pack` adds and writes its extract: the new record, or the previous one (and
    /// its file, left as it was) with the error that stopped the pack.
    func update(_ pack: RoutingPackPlan, previous: RoutingPackRecord?) -> (RoutingPackRecord?, ProvisionError?) {
        let started = Date()
        do {
            let (absent, fetched, failed) = try fetch(pack)
            guard failed.isEmpty else {
                let named = failed.prefix(Self.namedFailures).joined(separator: "; ")
                    + (failed.count > Self.namedFailures ? "; and \(failed.count - Self.namedFailures) more" : "")
                return (previous, ProvisionError(.partial, "routing pack '\(pack.pack.id)': \(plural(failed.count, "graph tile"))"
                                                 + " failed to download (\(named)); \(pack.pack.file) is left as it was and "
                                                 + "the next apply fetches only what is missing"))
            }
            let staging = RoutingPackStaging(store: session.store.url, pack: pack.pack)
            let written = try RoutingPackBuild.write(pack, absent: absent, staging: staging, directory: session.store.url)
            // The extract is written: staged tiles left behind cost space, and the next apply removes them.
            try? staging.remove()
            emit(pack, record: written, built: true, fetched: fetched, seconds: Date().timeIntervalSince(started))
            return (written, nil)
        } catch {
            // The job's settings (65), a failure already named, or the store (73).
            return (previous, ProvisionError(store: error, context: "cannot write routing pack '\(pack.pack.id)'"))
        }
    }

    /// The failed URLs an error names; the rest are counted.
    static let namedFailures = 10

    private func emit(_ pack: RoutingPackPlan, record: RoutingPackRecord, built: Bool, fetched: Int, seconds: Double) {
        progress.emit(.routingPack(id: pack.pack.id, file: pack.pack.file, built: built, tiles: record.tiles.count,
                                   fetched: fetched, absent: record.absent.count, bytes: record.bytes,
                                   seconds: (seconds * 1000).rounded() / 1000))
    }

    /// Fetches the tiles `pack` adds that are not staged yet; each verified body is staged, each 404
    /// recorded as absent (a grid cell without roads), any other answer a failure of its URL.
    /// Returns the absent tiles (known before and found now), how many were fetched, and each
    /// failure as `<url>: <reason>` in completion order.
    func fetch(_ pack: RoutingPackPlan) throws -> (absent: [RoutingTile], fetched: Int, failed: [String]) {
        let staging = RoutingPackStaging(store: session.store.url, pack: pack.pack)
        let extractSource = try session.tileExtractSource(pack.pack)
        if case .remote(let extract)? = extractSource, let version = extract.file.versionText {
            // Tiles staged from another version of the extract are of a build its index does not describe.
            try staging.adopt(source: version)
        }
        var absent = pack.absent
        var requests: [FetchRequest] = []
        var tiles: [String: GraphTileID] = [:]
        for tile in pack.add {
            guard let id = GraphTileID(tile) else { continue }
            if staging.isAbsent(id) {
                absent.append(tile)
            } else if staging.staged(id) == nil {
                let url = pack.pack.url(path: id.path)
                tiles[url] = id
                requests.append(FetchRequest(url: url, kind: .unknown))
            }
        }
        guard !requests.isEmpty else { return (absent.sorted(), 0, []) }
        progress.emit(.phase("routing"))
        var fetched = 0, failed: [String] = []
        var iterator = requests.makeIterator()
        let fetchAll: (inout IndexingIterator<[FetchRequest]>, (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void) -> Void
        switch extractSource {
        case nil: fetchAll = session.fetcher.fetchAll
        case .local(let url)?: fetchAll = Self.reading(url)
        case .remote(let extract)?: fetchAll = extract.fetchAll
        }
        fetchAll(&iterator) { request, result in
            guard let tile = tiles[request.url] else { return }
            do {
                switch result {
                case .success(let body):
                    let bytes = [UInt8](body.data)
                    _ = try GraphTileHeader.check(bytes, expected: tile)
                    try staging.stage(tile, bytes: bytes)
                    fetched += 1
                case .failure(.notFound):
                    try staging.stageAbsent(tile)
                    absent.append(tile.routingTile)
                case .failure(let reason):
                    throw reason
                }
            } catch {
                let url = session.credentials.secrets.redact(request.url), reason = "graph tile \(tile.path): \(error)"
                failed.append("\(url): \(reason)")
                progress.emit(.failure(url: url, reason: reason))
            }
        }
        return (absent.sorted(), fetched, failed)
    }
}
