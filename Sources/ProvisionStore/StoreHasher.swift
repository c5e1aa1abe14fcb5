import CCrypto
import Foundation
import ProvisionModel

/// SHA-256 through OpenSSL's libcrypto, for hashing whole stores.
///
/// Why not `ProvisionModel.SHA256`: a content digest reads every stored byte after each apply;
/// libcrypto uses the CPU's SHA extensions and runs several times faster than portable code.
/// The two produce the same digests (tested), so the lock's format does not depend on which.
struct StoreHasher {
    private let context: OpaquePointer

    init() throws {
        guard let context = EVP_MD_CTX_new() else { throw StoreError(.io, "cannot create a SHA-256 context") }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw StoreError(.io, "cannot start SHA-256")
        }
        self.context = context
    }

    /// Feeds bytes.
    func update(_ data: Data) {
        data.withUnsafeBytes { raw in _ = EVP_DigestUpdate(context, raw.baseAddress, raw.count) }
    }

    /// Feeds the UTF-8 bytes of a string.
    func update(_ text: String) {
        var text = text
        text.withUTF8 { raw in _ = EVP_DigestUpdate(context, raw.baseAddress, raw.count) }
    }

    /// Finishes (the hasher cannot be used afterwards) and returns the lower-case hex digest.
    func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = EVP_DigestFinal_ex(context, &digest, &length)
        EVP_MD_CTX_free(context)
        return SHA256.hexString(digest.prefix(Int(length)))
    }

    /// The hex SHA-256 of `data`.
    static func hex(_ data: Data) throws -> String {
        let hasher = try StoreHasher()
        hasher.update(data)
        return hasher.finalizeHex()
    }
}
