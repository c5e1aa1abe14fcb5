import Foundation
import ProvisionEngine
import ProvisionStore

/// Copies a search or routing pack the store's lock vouches for into a directory an export
/// fills (a bundle, or the files beside a patch), checked by the digest of the copy itself.
///
/// Why one place: three exports carry packs, and each must tell the store's fault (a pack that
/// cannot be read, or whose bytes are not the recorded ones: damaged input, 65) from its own (a
/// copy it cannot write: 73), and must hold exactly the bytes it checked.
enum PackCopy {
    /// Copies `file` (relative to `store`) to the same path in `directory`, and returns its size.
    /// `unreadable` is thrown when the store's file cannot be read, `damaged` when its SHA-256 is
    /// not `digest` (`sha256:HEX`).
    static func copy(_ file: String, from store: StorePath, into directory: BundleDirectory, digest: String,
                     unreadable: (any Error) -> ProvisionError, damaged: () -> ProvisionError) throws(ProvisionError) -> Int64 {
        let copied: (bytes: Int64, sha256: String)
        do {
            copied = try directory.copy(store.url.appendingPathComponent(file), to: file)
        } catch let source as BundleDirectory.UnreadableSource {
            throw unreadable(source.error)
        } catch {
            throw ProvisionError(store: error, context: "cannot write the \(directory.noun) \(directory.destination.path)",
                                 kind: .cannotWriteStore)
        }
        guard "sha256:" + copied.sha256 == digest else { throw damaged() }
        return copied.bytes
    }
}
