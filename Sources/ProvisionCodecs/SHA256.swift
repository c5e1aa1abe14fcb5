import CCrypto
import Foundation

/// SHA-256 (FIPS 180-4) through OpenSSL's libcrypto, incremental, with value semantics.
///
/// Why libcrypto: a content digest reads every stored byte after each apply, and libcrypto uses
/// the CPU's SHA extensions, several times faster than portable code; job, document and store
/// digests all come from this one implementation. A copy hashes on independently (the context
/// is copied on the first write after a copy, as an array's storage is).
///
/// Why it traps instead of throwing: libcrypto fails to start a SHA-256 context only when memory
/// runs out or its configuration disables SHA-256, and neither leaves anything to recover.
public struct SHA256: Sendable {
    private var context: Context

    /// A fresh hash.
    public init() {
        context = Context()
    }

    /// The lower-case hex digest of `data`.
    public static func hex(_ data: Data) -> String {
        var hash = SHA256()
        hash.update(data)
        return hash.finalizeHex()
    }

    /// The lower-case hex digest of the UTF-8 bytes of `text`.
    public static func hex(_ text: String) -> String {
        var hash = SHA256()
        hash.update(text)
        return hash.finalizeHex()
    }

    /// Feeds bytes.
    public mutating func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// Feeds the UTF-8 bytes of a string.
    public mutating func update(_ text: String) {
        var text = text
        text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// Feeds the bytes of a buffer.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        uniqueContext().update(bytes)
    }

    /// Pads and finishes, returns the 32-byte digest, and starts the hash over.
    public mutating func finalize() -> [UInt8] {
        uniqueContext().finalize()
    }

    /// `finalize()` as lower-case hex.
    public mutating func finalizeHex() -> String {
        SHA256.hexString(finalize())
    }

    /// Lower-case hex of bytes (a table lookup per nibble: this runs once per stored row).
    public static func hexString<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private mutating func uniqueContext() -> Context {
        if !isKnownUniquelyReferenced(&context) { context = context.copy() }
        return context
    }

    /// One `EVP_MD_CTX`, owned by exactly one `SHA256` whenever it is written to.
    private final class Context: @unchecked Sendable {
        // @unchecked: the context is only written through `uniqueContext()`, so a context
        // shared between copies (possibly on other threads) is never written, only copied.
        private let pointer: OpaquePointer

        init() {
            guard let pointer = EVP_MD_CTX_new() else { fatalError("libcrypto cannot allocate a SHA-256 context") }
            self.pointer = pointer
            Context.start(pointer)
        }

        private init(copying other: OpaquePointer) {
            guard let pointer = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(pointer, other) == 1 else {
                fatalError("libcrypto cannot copy a SHA-256 context")
            }
            self.pointer = pointer
        }

        deinit { EVP_MD_CTX_free(pointer) }

        func copy() -> Context { Context(copying: pointer) }

        func update(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count > 0 else { return }
            _ = EVP_DigestUpdate(pointer, bytes.baseAddress, bytes.count)
        }

        func finalize() -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            guard EVP_DigestFinal_ex(pointer, &digest, &length) == 1, length == 32 else {
                fatalError("libcrypto cannot finish a SHA-256 digest")
            }
            Context.start(pointer)
            return digest
        }

        private static func start(_ pointer: OpaquePointer) {
            guard EVP_DigestInit_ex(pointer, EVP_sha256(), nil) == 1 else {
                fatalError("libcrypto cannot start SHA-256 (is SHA-256 disabled in its configuration?)")
            }
        }
    }
}
