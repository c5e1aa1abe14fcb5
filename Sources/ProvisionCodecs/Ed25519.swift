import CCrypto
import Foundation

/// Ed25519 signatures (RFC 8032) through libcrypto: PEM keys read, detached signatures made and
/// checked over exact bytes.
///
/// Why raw bytes in the keys instead of libcrypto's key objects: a value of 32 bytes is
/// `Sendable` as it is, and each signature or check builds its short-lived `EVP_PKEY` from it
/// and frees it, so no libcrypto object is shared between threads. The signatures are the
/// 64 bytes of RFC 8032, what `openssl pkeyutl -rawin`, CryptoKit's `Curve25519.Signing`, Tink
/// and BouncyCastle make and check.
public enum Ed25519 {
    /// The bytes of a signature.
    public static let signatureSize = 64
    /// The bytes of a raw key, private (seed) or public.
    public static let keySize = 32

    /// A private key, from a PKCS#8 PEM file (`openssl genpkey -algorithm ed25519`).
    ///
    /// Why it prints nothing of itself: a key must never reach a log, a report or an error
    /// message, so its description and mirror show the public key only.
    public struct PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        private let seed: [UInt8]
        /// The public key that checks this key's signatures.
        public let publicKey: PublicKey

        /// Reads the key from PEM text: `-----BEGIN PRIVATE KEY-----` holding an Ed25519 key,
        /// not encrypted.
        public init(pem: Data) throws(KeyError) {
            try KeyError.refuseEncrypted(pem)
            let key = try withBIO(pem) { bio in
                // A callback that gives no password: libcrypto would otherwise ask on the terminal.
                PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
            }
            guard let key else {
                throw KeyError(PEMLabel(pem) == "PUBLIC KEY" ? .publicNotPrivate : .notAKey)
            }
            defer { EVP_PKEY_free(key) }
            try KeyError.requireEd25519(key)
            seed = try rawBytes(key, EVP_PKEY_get_raw_private_key)
            publicKey = PublicKey(raw: try rawBytes(key, EVP_PKEY_get_raw_public_key))
        }

        /// The 64-byte signature of `message`'s exact bytes.
        public func signature(for message: Data) throws(KeyError) -> Data {
            guard let key = seed.withUnsafeBufferPointer({ EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) }) else {
                throw KeyError(.libcrypto("cannot load the Ed25519 key"))
            }
            defer { EVP_PKEY_free(key) }
            return try withDigestContext { context throws(KeyError) in
                guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1 else {
                    throw KeyError(.libcrypto("cannot start an Ed25519 signature"))
                }
                var signature = [UInt8](repeating: 0, count: signatureSize)
                var length = signatureSize
                let status = message.withUnsafeBytes { bytes in
                    EVP_DigestSign(context, &signature, &length, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
                }
                guard status == 1, length == signatureSize else { throw KeyError(.libcrypto("cannot sign with the Ed25519 key")) }
                return Data(signature)
            }
        }

        public var description: String { "Ed25519 private key (public key \(publicKey.base64))" }
        public var debugDescription: String { description }
        public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
    }

    /// A public key, from a SubjectPublicKeyInfo PEM file (`openssl pkey -in KEY.pem -pubout`).
    public struct PublicKey: Sendable, Equatable {
        /// The key's 32 bytes (CryptoKit's `rawRepresentation`).
        public let rawRepresentation: Data

        /// Reads the key from PEM text: `-----BEGIN PUBLIC KEY-----` holding an Ed25519 key.
        ///
        /// Why a private key is refused rather than its public half taken: a trusted key is the
        /// one verifiers are handed, and a private key handed around is no longer private.
        public init(pem: Data) throws(KeyError) {
            try KeyError.refuseEncrypted(pem)
            if PEMLabel(pem)?.hasSuffix("PRIVATE KEY") == true { throw KeyError(.privateNotPublic) }
            guard let key = try withBIO(pem, { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }) else {
                throw KeyError(.notAKey)
            }
            defer { EVP_PKEY_free(key) }
            try KeyError.requireEd25519(key)
            rawRepresentation = Data(try rawBytes(key, EVP_PKEY_get_raw_public_key))
        }

        init(raw: [UInt8]) {
            rawRepresentation = Data(raw)
        }

        /// The key's 32 bytes in base64, for messages and documents (a public key may be shown).
        public var base64: String { rawRepresentation.base64EncodedString() }

        /// Whether `signature` is this key's Ed25519 signature of `message`'s exact bytes.
        public func isValidSignature(_ signature: Data, for message: Data) -> Bool {
            guard signature.count == signatureSize,
                  let key = rawRepresentation.withUnsafeBytes({ bytes in
                      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
                  }) else { return false }
            defer { EVP_PKEY_free(key) }
            // A check that libcrypto cannot start is a check that did not pass.
            let valid = try? withDigestContext { context throws(KeyError) in
                guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
                return signature.withUnsafeBytes { sig in
                    message.withUnsafeBytes { bytes in
                        EVP_DigestVerify(context, sig.bindMemory(to: UInt8.self).baseAddress, sig.count,
                                         bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count) == 1
                    }
                }
            }
            ERR_clear_error()
            return valid ?? false
        }
    }

    /// Why a key cannot be used; the words never quote the key's bytes.
    public struct KeyError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong with it.
        public enum Kind: Sendable, Equatable {
            /// No PEM key libcrypto reads.
            case notAKey
            /// A password-protected key.
            case encrypted
            /// A key of another algorithm (`RSA`, `EC`).
            case wrongType(String)
            /// A public key where a private one is needed.
            case publicNotPrivate
            /// A private key where a public one is needed.
            case privateNotPublic
            /// libcrypto failed (out of memory, or Ed25519 disabled in its configuration).
            case libcrypto(String)
        }

        public let kind: Kind

        init(_ kind: Kind) {
            self.kind = kind
            ERR_clear_error()
        }

        public var description: String {
            switch kind {
            case .notAKey: return "it is not a PEM key (expected -----BEGIN PRIVATE KEY----- or -----BEGIN PUBLIC KEY-----)"
            case .encrypted:
                return "it is password-protected, and provision never asks for a password; pass it decrypted "
                    + "through a descriptor (--key /dev/fd/3 3< <(openssl pkey -in KEY.pem)) or decrypt it to a file "
                    + "only the signer can read"
            case .wrongType(let name):
                return "it holds a key of type \(name); provision signs with Ed25519 keys only "
                    + "(openssl genpkey -algorithm ed25519 -out KEY.pem)"
            case .publicNotPrivate: return "it is a public key; signing needs the private key"
            case .privateNotPublic:
                return "it is a private key; give the public key (openssl pkey -in KEY.pem -pubout -out PUB.pem), "
                    + "which is all a verifier needs and may be shared"
            case .libcrypto(let message): return "libcrypto: \(message)"
            }
        }

        /// A password-protected key is named as such before libcrypto would ask for its password.
        static func refuseEncrypted(_ pem: Data) throws(KeyError) {
            let text = String(decoding: pem.prefix(4096), as: UTF8.self)
            if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED") {
                throw KeyError(.encrypted)
            }
        }

        static func requireEd25519(_ key: OpaquePointer) throws(KeyError) {
            guard EVP_PKEY_get_id(key) == EVP_PKEY_ED25519 else {
                throw KeyError(.wrongType(EVP_PKEY_get0_type_name(key).map { String(cString: $0) } ?? "unknown"))
            }
        }
    }
}

/// The label of the first PEM block (`PRIVATE KEY`, `PUBLIC KEY`, `RSA PRIVATE KEY`), if any.
private func PEMLabel(_ pem: Data) -> String? {
    let text = String(decoding: pem.prefix(4096), as: UTF8.self)
    guard let begin = text.range(of: "-----BEGIN "), let end = text.range(of: "-----", range: begin.upperBound..<text.endIndex) else {
        return nil
    }
    return String(text[begin.upperBound..<end.lowerBound])
}

/// `body` with a read-only memory BIO over `pem`.
private func withBIO<T>(_ pem: Data, _ body: (OpaquePointer) -> T?) throws(Ed25519.KeyError) -> T? {
    let result: T?? = pem.withUnsafeBytes { bytes in
        guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(clamping: bytes.count)) else { return .none }
        defer { BIO_free(bio) }
        return .some(body(bio))
    }
    guard let result else { throw Ed25519.KeyError(.libcrypto("cannot read the key's bytes")) }
    return result
}

/// `body` with a fresh digest context, freed after.
private func withDigestContext<T>(_ body: (OpaquePointer) throws(Ed25519.KeyError) -> T) throws(Ed25519.KeyError) -> T {
    guard let context = EVP_MD_CTX_new() else { throw Ed25519.KeyError(.libcrypto("cannot allocate a context")) }
    defer { EVP_MD_CTX_free(context) }
    return try body(context)
}

/// A key's 32 raw bytes, private or public as `read` is.
private func rawBytes(_ key: OpaquePointer,
                      _ read: (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?) -> Int32) throws(Ed25519.KeyError)
    -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: Ed25519.keySize)
    var length = Ed25519.keySize
    guard read(key, &bytes, &length) == 1, length == Ed25519.keySize else {
        throw Ed25519.KeyError(.libcrypto("cannot read the Ed25519 key's bytes"))
    }
    return bytes
}
