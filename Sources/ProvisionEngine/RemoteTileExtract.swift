import Foundation
import ProvisionExecution
import ProvisionFoundation
import ProvisionModel
import ProvisionStore
import RoutingGraph

/// A routing pack's tile extract on an HTTP(S) server (`"extract": "https://…/graph.tar"`), read
/// with range requests through the session's HTTP fetcher: `index.bin` once (one request for the
/// tar's first 64 KiB, a second only when the index is longer), validated as a local extract's is,
/// then each tile's bytes with the member header before them, checked too.
///
/// Why one reader per session: the plan reads the index and the apply the tiles; the first answer
/// pins the file's version (ETag, else Last-Modified, and size), so a file replaced between the
/// index read and a tile read is `FetchFailure.changed`, which stops the apply (75) instead of
/// reading tiles the index does not describe.
final class RemoteTileExtract {
    let file: RemoteFile
    let index: TileExtractIndex

    /// The bytes the first request asks for: the tar header and an index of up to 4,064 tiles.
    static let headFetchSize: UInt64 = 64 << 10

    /// Reads and validates the index of the extract at `file`, for pack `id`.
    ///
    /// - Throws: `upstreamUnavailable` (69) when it cannot be read, `invalidJob` (65) when its index
    ///   is damaged or points past the file, naming the URL and the entry.
    init(_ file: RemoteFile, pack id: String) throws(ProvisionError) {
        self.file = file
        func read(_ range: ByteRange) throws(ProvisionError) -> [UInt8] {
            switch file.read(range) {
            case .success(let data): return [UInt8](data)
            case .failure(let failure):
                throw ProvisionError(.upstreamUnavailable, "routing pack '\(id)': cannot read the tile extract \(file.displayURL) "
                                     + "(\(range)): \(failure)")
            }
        }
        var head = try read(ByteRange(offset: 0, count: Self.headFetchSize))
        let size = file.size ?? UInt64(head.count)
        do {
            let needed = try TileExtractIndex.headSize(head, path: file.displayURL, fileSize: size)
            if head.count < needed { head += try read(ByteRange(offset: UInt64(head.count), count: UInt64(needed - head.count))) }
            index = try TileExtractIndex(head: head, path: file.displayURL, fileSize: size)
        } catch let error as TileExtractError {
            throw ProvisionError(.invalidJob, "routing pack '\(id)': the tile extract is damaged: \(error)", cause: error)
        } catch let error as ProvisionError {
            throw error
        } catch {
            throw ProvisionError(.failure, "routing pack '\(id)': \(describe(error))", cause: error)
        }
    }

    /// The tiles the extract holds (every other cell has no roads), with their sizes by its index.
    var tiles: [RoutingTile: Int] { RoutingPackPlanning.sizes(index.entries) }

    /// Fetches each request's tile (the request's URL is its path in the extract) by range, as the
    /// fetcher would deliver it: the tile's bytes, `.notFound` for a tile the index lacks, or why not.
    func fetchAll(_ requests: inout IndexingIterator<[FetchRequest]>,
                  onResult: (FetchRequest, Result<FetchedBody, FetchFailure>) -> Void) {
        var ranged: [(FetchRequest, ByteRange)] = []
        var entries: [String: (GraphTileID, TileExtractEntry)] = [:]
        while let request = requests.next() {
            // A URL that is no tile path, or a tile the index lacks: no such tile in the extract.
            guard let tile = try? GraphTileID.parse(path: request.url), let entry = index.entries[tile] else {
                onResult(request, .failure(.notFound))
                continue
            }
            let header = UInt64(TileExtractIndex.memberHeaderSize)
            entries[request.url] = (tile, entry)
            ranged.append((request, ByteRange(offset: entry.offset - header, count: UInt64(entry.size) + header)))
        }
        var iterator = ranged.makeIterator()
        file.fetchAll(&iterator) { request, result in
            guard let (tile, entry) = entries[request.url] else { return }
            onResult(request, result.flatMap { data in
                let bytes = [UInt8](data), header = TileExtractIndex.memberHeaderSize
                guard bytes.count == header + Int(entry.size) else {
                    return .failure(.invalidBody("\(bytes.count) bytes for a member of \(header + Int(entry.size))"))
                }
                do {
                    try TileExtractIndex.checkMember(Array(bytes[..<header]), tile: tile, entry: entry, path: file.displayURL)
                } catch {
                    return .failure(.invalidBody("\(error)"))
                }
                return .success(FetchedBody(data: Data(bytes[header...])))
            })
        }
    }
}
