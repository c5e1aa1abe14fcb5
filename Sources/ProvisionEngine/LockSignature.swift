import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionStore

/// The detached Ed25519 signature of a store's lock: `provision.lock.json.sig` beside
/// `provision.lock.json`, the 64 raw bytes of the signature over the lock file's exact bytes.
///
/// Why raw bytes over the file as it is: `openssl pkeyutl -verify -pubin -inkey PUB.pem -rawin
/// -in provision.lock.json -sigfile provision.lock.json.sig` checks it as it is, and so do
/// CryptoKit, Tink and BouncyCastle, with no canonical form of the JSON to agree on. The lock
/// holds every digest of the store, so a lock whose signature holds vouches for every row.
public enum LockSignature {
    /// The signature's path in `store`.
    public static func url(in store: StorePath) -> URL {
        store.url.appendingPathComponent(StoreDirectory.signatureName)
    }

    /// The private key of `--key FILE` (or `--sign-key`): a missing or unreadable file is 66, a
    /// file that is not an unencrypted Ed25519 private key 64. The key's bytes appear in no message.
    public static func signingKey(path: String, flag: String) throws(ProvisionError) -> Ed25519.PrivateKey {
        try key(path: path, flag: flag) { pem throws(Ed25519.KeyError) in try Ed25519.PrivateKey(pem: pem) }
    }

    /// The public key of `--trusted-key FILE`, read and refused as `signingKey` is.
    public static func trustedKey(path: String, flag: String) throws(ProvisionError) -> Ed25519.PublicKey {
        try key(path: path, flag: flag) { pem throws(Ed25519.KeyError) in try Ed25519.PublicKey(pem: pem) }
    }

    private static func key<Key>(path: String, flag: String,
                                 parse: (Data) throws(Ed25519.KeyError) -> Key) throws(ProvisionError) -> Key {
        let pem = try readKeyFile(path, flag: flag)
        do {
            return try parse(pem)
        } catch {
            throw ProvisionError(store: error, context: "\(flag) \(path) cannot be used", kind: .usage)
        }
    }

    /// Signs `lock`, the bytes just written as the store's lock, and writes the signature
    /// atomically beside it. When that fails, no earlier signature is left beside the new lock.
    public static func write(signing lock: Data, with key: Ed25519.PrivateKey, in store: StorePath) throws(ProvisionError) {
        let url = url(in: store)
        do {
            try AtomicFile.write(try key.signature(for: lock), to: url)
        } catch {
            // A signature that cannot be replaced must not stay to vouch for another lock; unlink(2)
            // removes a file only, never a directory someone put in its place.
            unlink(url.path)
            throw ProvisionError(.cannotWriteStore, "cannot write the signature \(url.path): \(describe(error)); "
                                 + "\(StoreDirectory.lockName) is written but unsigned, and no earlier signature is left beside it",
                                 cause: error)
        }
    }

    /// Removes the signature beside a lock whose bytes a writer (apply without `--sign-key`, merge)
    /// just replaced: it was made over the old bytes, so it no longer holds, and a stale signature
    /// left beside the lock would only fail an app's check. Returns the signature's path when one
    /// was removed; unlink(2) removes a file only, never a directory someone put in its place.
    public static func removeOutdated(in store: StorePath) -> String? {
        let url = url(in: store)
        return unlink(url.path) == 0 ? url.path : nil
    }

    /// Emits `signatureRemoved` when a writer that rewrote the lock (`rewritten`) removed its
    /// outdated signature.
    static func removeOutdated(in store: StorePath, rewritten: Bool, progress: ProgressSink) {
        guard rewritten, let removed = removeOutdated(in: store) else { return }
        progress.emit(.signatureRemoved(lock: store.lockURL.path, signature: removed))
    }

    /// Checks the signature beside the store's lock against `key`: exit 1 naming the files when
    /// the lock or the signature is missing, or the signature is not `key`'s over the lock's bytes.
    public static func verify(_ store: StorePath, key: Ed25519.PublicKey) throws(ProvisionError) {
        let signatureURL = url(in: store)
        guard let lock = FileManager.default.contents(atPath: store.lockURL.path) else {
            throw ProvisionError(.failure, "the lock \(store.lockURL.path) is missing or unreadable: there is nothing the signature "
                                 + "\(signatureURL.path) vouches for")
        }
        guard let signature = FileManager.default.contents(atPath: signatureURL.path) else {
            throw ProvisionError(.failure, "the store is not signed: the signature \(signatureURL.path) of the lock "
                                 + "\(store.lockURL.path) is missing or unreadable; run 'provision sign --key KEY.pem'")
        }
        guard signature.count == Ed25519.signatureSize else {
            throw ProvisionError(.failure, "the signature \(signatureURL.path) does not match the lock \(store.lockURL.path): "
                                 + "it holds \(plural(signature.count, "byte")), an Ed25519 signature \(Ed25519.signatureSize)")
        }
        guard key.isValidSignature(signature, for: lock) else {
            throw ProvisionError(.failure, "the signature \(signatureURL.path) does not match the lock \(store.lockURL.path): "
                                 + "the lock changed since it was signed, or another key than the trusted key "
                                 + "(\(key.base64)) signed it")
        }
    }

    /// The largest key file read: a PEM Ed25519 key is a few hundred bytes.
    static let maxKeyBytes = 64 * 1024

    /// The bytes of a key file, read with `read(2)` so that `/dev/fd/N` (a pipe, a descriptor a
    /// secret store hands over) reads as a file does.
    static func readKeyFile(_ path: String, flag: String) throws(ProvisionError) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ProvisionError(.missingInput, "\(flag) \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count == 0 { break }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw ProvisionError(.missingInput, "\(flag) \(path) cannot be read: \(String(cString: strerror(errno)))")
            }
            data.append(contentsOf: buffer[0..<count])
            guard data.count <= maxKeyBytes else {
                throw ProvisionError(.usage, "\(flag) \(path) cannot be used: it is over \(ByteFormat.string(Int64(maxKeyBytes))), "
                                     + "not a PEM key")
            }
        }
        // The copy in the read buffer is not left for another read to find.
        _ = buffer.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
        return data
    }
}
