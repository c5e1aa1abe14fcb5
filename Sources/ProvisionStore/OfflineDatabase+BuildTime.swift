import Foundation
import ProvisionModel

extension OfflineDatabase {
    /// The time the build that last wrote the database at `url` stamped its rows with (the
    /// largest `accessed`, which every build sets to its own time), or nil when it has no
    /// readable row.
    ///
    /// Why: an apply that was killed, or stopped by a full disk, leaves rows stamped with its
    /// build time but no lock recording it; the apply that resumes it must keep that time, so that
    /// one build has one time and a resumed store equals a fresh one. Resources are looked at
    /// first (a handful of rows, written before any tile); tiles only when there are none.
    public static func latestStamp(at url: URL) -> Int64? {
        guard FileManager.default.fileExists(atPath: url.path),
              // A stamp is only a hint for the build time: a file that does not open or answer gives none, and the clock decides.
              let database = try? SQLiteDatabase(path: url.path, options: .init(readOnly: true, create: false))
        else { return nil }
        let resources = try? database.queryFirst("SELECT max(accessed) FROM resources") { $0.optionalInt64(0) }
        if let stamp = resources ?? nil { return stamp }
        // As above: a table that does not answer gives no stamp.
        let tiles = try? database.queryFirst("SELECT max(accessed) FROM (SELECT accessed FROM tiles LIMIT 10000)") {
            $0.optionalInt64(0)
        }
        return tiles ?? nil
    }
}

extension StoredContent {
    /// The content as a build at `epoch` writes it: `accessed` is the build time, and so is
    /// `modified` unless the row's `modified` came from the upstream's `Last-Modified`.
    ///
    /// Why: MapLibre's side-load merge replaces a device's row only when the incoming
    /// `modified` is newer, so a row that has no upstream time must carry the time of the build
    /// that ships it, whichever route (downloaded now, kept from the last build, resumed) put it in
    /// the store. A build stamps `modified` and `accessed` with the same time, so a row whose two
    /// times are equal (or whose `modified` is NULL) has no upstream time; a `Last-Modified`
    /// equal to the build time to the second is taken as a build stamp, which changes nothing.
    public func stamped(at epoch: Int64) -> StoredContent {
        var content = self
        if modified == nil || modified == accessed { content.modified = epoch }
        content.accessed = epoch
        return content
    }
}
