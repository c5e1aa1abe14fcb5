import Foundation
import ProvisionCodecs
import ProvisionModel
import TileMath

/// The directories of one PMTiles v3 archive, local or remote: the header and root directory,
/// read once when the archive is opened, and the leaf directories read so far, which it keeps
/// up to a byte budget (the least recently used ones are dropped first, and read again if a
/// tile needs them). It turns a tile into the bytes of the archive that hold it, or into the
/// leaf directory it must read first.
///
/// Not thread-safe: its owner serialises calls.
final class PMTilesIndex {
    /// What an archive holds for a tile.
    enum Lookup: Equatable {
        /// The tile's bytes; nil for an entry of length 0 (an empty tile).
        case tile(ByteRange?)
        /// The archive has no such tile.
        case absent
        /// The leaf directory to read before the tile can be found.
        case leaf(ByteRange)
    }

    /// The archive's header.
    let header: PMTiles.Header
    /// The archive as messages name it (a path, or a redacted URL).
    let name: String
    private let root: [PMTiles.Entry]
    private var leaves: [UInt64: CachedLeaf] = [:]
    private var cachedBytes = 0
    private var tick: UInt64 = 0
    /// The most bytes of decoded leaf entries kept.
    let cacheBudget: Int


    private struct CachedLeaf {
        var entries: [PMTiles.Entry]
        var lastUse: UInt64
        var bytes: Int { entries.count * MemoryLayout<PMTiles.Entry>.stride }
    }

    /// Reads the header from the start of `head` (the first bytes of the archive, at least
    /// 127) and the root directory, from `head` when it holds it, else from `readRoot`; checks
    /// that the sections lie within `size` bytes when the size is known.
    ///
    /// - Throws: `ArchiveOpenError` (`.invalid`) naming `name` and what is wrong.
    init(name: String, head: Data, size: UInt64?, cacheBudget: Int = PMTilesCache.defaultBudget,
         readRoot: (ByteRange) throws(ArchiveOpenError) -> Data) throws(ArchiveOpenError) {
        self.name = name
        self.cacheBudget = max(0, cacheBudget)
        let header: PMTiles.Header
        do {
            header = try PMTiles.Header(decoding: head)
        } catch {
            throw ArchiveOpenError(.invalid, "\(name) is not a usable PMTiles archive: \(error)")
        }
        self.header = header
        guard header.internalCompression == .none || header.internalCompression == .gzip else {
            throw ArchiveOpenError(.invalid, "\(name): its directories are compressed with "
                                   + "\(header.internalCompression.name); provision reads gzip or uncompressed directories")
        }
        guard [.none, .gzip, .unknown].contains(header.tileCompression) else {
            throw ArchiveOpenError(.invalid, "\(name): its tiles are compressed with \(header.tileCompression.name); "
                                   + "provision reads gzip or uncompressed tiles")
        }
        let sections: [(String, UInt64, UInt64)] = [
            ("root directory", header.rootDirectoryOffset, header.rootDirectoryLength),
            ("leaf directories", header.leafDirectoriesOffset, header.leafDirectoriesLength),
            ("tile data", header.tileDataOffset, header.tileDataLength),
        ]
        for (what, offset, length) in sections {
            let (end, overflow) = offset.addingReportingOverflow(length)
            if overflow || (size.map { end > $0 } ?? false) {
                throw ArchiveOpenError(.invalid, "\(name): the header puts the \(what) at bytes \(offset)-\(end &- 1), "
                                       + "past the end of the archive (\(size.map { "\($0) bytes" } ?? "size unknown"))")
            }
        }
        guard header.rootDirectoryLength > 0 else {
            throw ArchiveOpenError(.invalid, "\(name): the header gives an empty root directory")
        }
        let rootRange = ByteRange(offset: header.rootDirectoryOffset, count: header.rootDirectoryLength)
        let rootBytes: Data
        if rootRange.last < UInt64(head.count) {
            rootBytes = head.subdata(in: Int(rootRange.offset)..<Int(rootRange.last + 1))
        } else {
            rootBytes = try readRoot(rootRange)
        }
        do {
            root = try PMTiles.decodeDirectory(rootBytes, compression: header.internalCompression)
        } catch {
            throw ArchiveOpenError(.invalid, "\(name): the root directory (\(rootRange)) cannot be read: \(error)")
        }
    }

    /// Where `tile` is: its bytes, absent, or behind a leaf directory not read yet.
    ///
    /// Fails (`.invalidBody`) when the directories point outside their sections or nest deeper
    /// than the specification's three levels of leaves.
    func lookup(_ tile: TileID) -> Result<Lookup, FetchFailure> {
        guard tile.z >= Int(header.minZoom), tile.z <= Int(header.maxZoom), let id = tile.pmtilesID else {
            return .success(.absent)
        }
        var entries = root
        for _ in 0...3 {
            guard let entry = PMTiles.find(id, in: entries) else { return .success(.absent) }
            if !entry.isLeaf {
                guard entry.length > 0 else { return .success(.tile(nil)) }
                guard let range = section(entry, offset: header.tileDataOffset, length: header.tileDataLength) else {
                    return .failure(.invalidBody("\(name): the directory entry of \(tile) points past the tile data"))
                }
                return .success(.tile(range))
            }
            guard entry.length > 0,
                  let range = section(entry, offset: header.leafDirectoriesOffset, length: header.leafDirectoriesLength) else {
                return .failure(.invalidBody("\(name): a directory entry for \(tile) points past the leaf directories"))
            }
            guard var leaf = leaves[range.offset] else {
                return .success(.leaf(range))
            }
            tick += 1
            leaf.lastUse = tick
            leaves[range.offset] = leaf
            entries = leaf.entries
        }
        return .failure(.invalidBody("\(name): the directories of \(tile) nest deeper than three leaf levels"))
    }

    /// Decodes the leaf directory read from `range` and keeps it; a failure names the leaf.
    func addLeaf(_ range: ByteRange, data: Data) -> FetchFailure? {
        let entries: [PMTiles.Entry]
        do {
            entries = try PMTiles.decodeDirectory(data, compression: header.internalCompression)
        } catch {
            return .invalidBody("\(name): the leaf directory at \(range) cannot be read: \(error)")
        }
        tick += 1
        if let old = leaves[range.offset] { cachedBytes -= old.bytes }
        let leaf = CachedLeaf(entries: entries, lastUse: tick)
        leaves[range.offset] = leaf
        cachedBytes += leaf.bytes
        // Drop the least recently used leaves past the budget; the one just read stays, so a
        // lookup always makes progress even when one leaf is larger than the budget.
        while cachedBytes > cacheBudget, leaves.count > 1,
              let oldest = leaves.filter({ $0.key != range.offset }).min(by: { $0.value.lastUse < $1.value.lastUse }) {
            cachedBytes -= oldest.value.bytes
            leaves[oldest.key] = nil
        }
        return nil
    }

    /// Leaf directories and bytes of entries kept.
    var cached: (leaves: Int, bytes: Int) { (leaves.count, cachedBytes) }

    /// The absolute range of an entry relative to a section, or nil when it leaves the section.
    private func section(_ entry: PMTiles.Entry, offset: UInt64, length: UInt64) -> ByteRange? {
        let (end, overflow) = entry.offset.addingReportingOverflow(UInt64(entry.length))
        guard !overflow, end <= length else { return nil }
        return ByteRange(offset: offset + entry.offset, count: UInt64(entry.length))
    }
}

/// The leaf directory cache of PMTiles origins.
public enum PMTilesCache {
    /// The default budget of an archive's leaf directory cache: 32 MiB of decoded entries, about
    /// 1.4 million of them, a few leaves of the largest archives (a planet's leaves hold up to
    /// some 65,000 entries each).
    public static let defaultBudget = 32 << 20
}

/// Why an archive origin cannot be opened, in the terms of the exit statuses.
public struct ArchiveOpenError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of problem.
    public enum Kind: Sendable, Equatable {
        /// No file there (exit 66).
        case missing
        /// The bytes are not a usable archive (exit 65).
        case invalid
        /// The server cannot be reached, refused, has no such archive or does not serve byte
        /// ranges (exit 69).
        case unavailable
    }

    public var kind: Kind
    /// One sentence naming the archive (path or redacted URL) and what is wrong.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
