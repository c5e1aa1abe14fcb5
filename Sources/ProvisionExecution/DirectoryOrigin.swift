import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// Serves canonical URLs under a prefix from files in a local directory.
///
/// The rest of the URL after the prefix is a relative path: the query string and fragment are
/// dropped, each segment is percent-decoded (`Noto%20Sans%20Regular` → `Noto Sans Regular`), and
/// a `..` segment, or one that decodes to contain `/`, is refused so no URL can reach outside.
public struct DirectoryOrigin: Sendable {
    /// The canonical URL prefix this origin serves.
    public var prefix: String
    /// The directory the rest of the URL is resolved in.
    public var directory: URL
    /// The largest file served, in bytes.
    public var maxBytes: Int

    /// Creates an origin serving `prefix` from `directory`.
    public init(prefix: String, directory: URL, maxBytes: Int = 64 << 20) {
        self.prefix = prefix
        self.directory = directory
        self.maxBytes = maxBytes
    }

    /// The file a canonical URL maps to.
    public func fileURL(for url: String) -> Result<URL, FetchFailure> {
        guard url.hasPrefix(prefix) else { return .failure(.unsupported("\(url) is not under \(prefix)")) }
        var rest = Substring(url.dropFirst(prefix.count))
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        var file = directory
        var segmentCount = 0
        for raw in rest.split(separator: "/") {
            guard let segment = String(raw).removingPercentEncoding else {
                return .failure(.unsupported("malformed percent-encoding in \(url)"))
            }
            if segment == "." { continue }
            guard segment != "..", !segment.contains("/"), !segment.contains("\0") else {
                return .failure(.unsupported("path of \(url) leaves the mirror directory"))
            }
            file.appendPathComponent(segment)
            segmentCount += 1
        }
        guard segmentCount > 0 else { return .failure(.unsupported("\(url) names no file under \(prefix)")) }
        return .success(file)
    }

    /// Reads the file for `request`: `.notFound` when there is none.
    public func read(_ request: FetchRequest) -> Result<Data, FetchFailure> {
        fileURL(for: request.url).flatMap { file in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory),
                  !isDirectory.boolValue else { return .failure(.notFound) }
            // No size: the read below fails and says why.
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)??.intValue ?? 0
            guard size <= maxBytes else { return .failure(.invalidBody("file larger than \(grouped(maxBytes)) bytes")) }
            do {
                return .success(try Data(contentsOf: file))
            } catch {
                return .failure(.transport("cannot read \(file.lastPathComponent): \(error.localizedDescription)"))
            }
        }
    }
}

/// Serves tile requests under a prefix from a tile archive (an MBTiles file opened by the store).
public struct ArchiveOrigin {
    /// The canonical URL prefix this origin serves.
    public var prefix: String
    /// The archive tiles are read from, by geographic XYZ id.
    public var archive: TileArchive

    /// Creates an origin serving tiles under `prefix` from `archive`.
    public init(prefix: String, archive: TileArchive) {
        self.prefix = prefix
        self.archive = archive
    }

    /// Reads the tile of `request` (`request.tile`); non-tile requests are `.unsupported`.
    public func read(_ request: FetchRequest) -> Result<Data, FetchFailure> {
        guard request.kind == .tile, let tile = request.tile else {
            return .failure(.unsupported("a tile archive serves only tiles, not \(request.kind.name) \(request.url)"))
        }
        do {
            guard let data = try archive.tileData(tile) else { return .failure(.notFound) }
            return .success(data)
        } catch {
            return .failure(.transport("tile archive read failed for \(tile): \(error)"))
        }
    }
}
