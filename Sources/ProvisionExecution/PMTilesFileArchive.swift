import Foundation
import ProvisionCodecs
import ProvisionModel
import TileMath
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A local PMTiles v3 archive used as a tile origin (`pmtiles:PATH`): read with `pread`, the
/// header and root directory once when opened, leaf directories as tiles need them (kept in a
/// bounded cache), and each tile's bytes as they are stored: gzip-wrapped when the archive's
/// tile compression is gzip, which the verifier unwraps as it does for MBTiles bodies.
///
/// Safe to call from several threads (calls are serialised).
public final class PMTilesFileArchive: TileArchive {
    /// The archive path.
    public let path: String
    private let descriptor: Int32
    private let index: PMTilesIndex
    private let lock = NSLock()

    /// Opens the archive and reads its header and root directory.
    ///
    /// - Throws: `ArchiveOpenError`: `.missing` when there is no file, `.invalid` when it is not
    ///   a PMTiles v3 archive provision can read (named, with the reason).
    public init(url: URL, cacheBudget: Int = PMTilesCache.defaultBudget) throws(ArchiveOpenError) {
        let path = url.path
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw ArchiveOpenError(errno == ENOENT ? .missing : .invalid, "cannot open the PMTiles archive \(path): \(reason)")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw ArchiveOpenError(.invalid, "\(path) is not a regular file")
        }
        let size = UInt64(info.st_size)
        do {
            let head = try Self.read(fd, ByteRange(offset: 0, count: UInt64(PMTiles.rootFetchSize)), path: path, size: size)
            index = try PMTilesIndex(name: path, head: head, size: size, cacheBudget: cacheBudget) { range throws(ArchiveOpenError) in
                try Self.read(fd, range, path: path, size: size)
            }
        } catch {
            close(fd)
            throw error
        }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    /// The archive's header.
    public var header: PMTiles.Header { index.header }

    /// The stored bytes of a geographic XYZ tile (gzip-wrapped when the archive's tiles are),
    /// or nil when the archive has none; an empty entry gives empty data.
    public func tileData(_ tile: TileID) throws -> Data? {
        lock.lock()
        defer { lock.unlock() }
        while true {
            switch index.lookup(tile) {
            case .failure(let failure): throw failure
            case .success(.absent): return nil
            case .success(.tile(nil)): return Data()
            case .success(.tile(let range?)): return try Self.read(descriptor, range, path: path, size: nil)
            case .success(.leaf(let range)):
                let data = try Self.read(descriptor, range, path: path, size: nil)
                if let failure = index.addLeaf(range, data: data) { throw failure }
            }
        }
    }

    /// `range` of the file (fewer bytes only where a known `size` ends it first).
    private static func read(_ fd: Int32, _ range: ByteRange, path: String, size: UInt64?) throws(ArchiveOpenError) -> Data {
        let wanted = Int(clamping: size.map { min(range.count, $0 > range.offset ? $0 - range.offset : 0) } ?? range.count)
        var data = Data(count: wanted)
        var done = 0
        while done < wanted {
            let n = data.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return pread(fd, base + done, wanted - done, off_t(range.offset) + off_t(done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let why = n < 0 ? String(cString: strerror(errno)) : "the file ends at byte \(range.offset + UInt64(done))"
                throw ArchiveOpenError(.invalid, "cannot read \(range) of the PMTiles archive \(path): \(why)")
            }
            done += n
        }
        return data
    }
}
