import Foundation
import ProvisionFoundation
import ProvisionCodecs
import ProvisionStore

/// `provision sign --key KEY.pem`: signs the store's lock as it is.
public struct SignRun {
    /// `--store`; `./store` without it.
    public var store: String?
    /// The key, read from `--key`.
    public var key: Ed25519.PrivateKey

    public init(store: String?, key: Ed25519.PrivateKey) {
        self.store = store
        self.key = key
    }

    /// Signs the lock under the store's writer lock, so no apply replaces it in between: a store
    /// without a lock is 66, a lock this version cannot read 65 (a garbled lock is not signed).
    public func run() throws(ProvisionError) -> SignResult {
        let path = StorePath(option: store, job: nil)
        guard FileManager.default.fileExists(atPath: path.lockURL.path) else {
            throw ProvisionError(.missingInput, "no lock to sign at \(path.lockURL.path); 'provision apply' writes it")
        }
        let lease: ApplyLease
        do {
            lease = try ApplyLease.acquire(directory: path.url)
        } catch {
            throw ProvisionError(store: error, context: "cannot lock the store at \(path.display)")
        }
        defer { lease.release() }
        if let problem = PlanSession.readLock(path).1 {
            throw ProvisionError(.invalidJob, "the lock \(path.lockURL.path) is not signed: it cannot be read (\(problem))")
        }
        guard let lock = FileManager.default.contents(atPath: path.lockURL.path) else {
            throw ProvisionError(.missingInput, "the lock \(path.lockURL.path) cannot be read")
        }
        try LockSignature.write(signing: lock, with: key, in: path)
        return SignResult(lock: path.lockURL.path, signature: LockSignature.url(in: path).path,
                          lockDigest: "sha256:" + SHA256.hex(lock), publicKey: key.publicKey.base64)
    }
}

/// What `provision sign` wrote: the document `--json` prints (`Jobs/schema/signature.schema.json`)
/// and its text.
public struct SignResult: Equatable, Sendable {
    /// Bumped on every change to the JSON shape.
    public static let schemaVersion = 1

    /// The lock signed.
    public var lock: String
    /// The signature file written.
    public var signature: String
    /// `sha256:` and the hex digest of the lock's bytes, as signed.
    public var lockDigest: String
    /// The public key that checks the signature, its 32 raw bytes in base64.
    public var publicKey: String

    /// The `--json` document.
    public var json: JSONValue {
        .object(JSONObject([
            ("schemaVersion", .int(Self.schemaVersion)), ("kind", "signature"), ("algorithm", "Ed25519"),
            ("lock", .string(lock)), ("lockDigest", .string(lockDigest)), ("signature", .string(signature)),
            ("publicKey", .string(publicKey)),
        ]))
    }

    /// The human view.
    public var text: String {
        "Signed \(lock) (\(lockDigest)) with the Ed25519 key whose public key is \(publicKey): wrote \(signature).\n"
            + "Check it: openssl pkeyutl -verify -pubin -inkey PUB.pem -rawin -in \(lock) -sigfile \(signature)\n"
    }
}
