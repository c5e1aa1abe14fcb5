import Foundation
import ProvisionCodecs
import ProvisionModel

/// A digest of a store's files, recorded in saved plans to detect a store that changed since.
enum StoreState {
    /// sha256 over the bytes of `offline.db` and `provision.lock.json` ("absent" for a missing file).
    static func digest(of store: StoreDirectoryPath) -> String {
        var hash = SHA256()
        for url in [store.databaseURL, store.lockURL] {
            hash.update(url.lastPathComponent + "\n")
            if let handle = try? FileHandle(forReadingFrom: url) {
                defer { try? handle.close() }
                while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty { hash.update(chunk) }
            } else {
                hash.update("absent\n")
            }
        }
        return "sha256:" + hash.finalizeHex()
    }
}
