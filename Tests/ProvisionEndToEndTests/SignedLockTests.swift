import Foundation
import ProvisionCodecs
import ProvisionFoundation
import XCTest

/// Issue 24 #3 and #5: `provision sign`, `apply --sign-key` and `audit --verify --trusted-key`.
/// Keys come from Debian's `openssl`, and `openssl pkeyutl -rawin` is the independent check of
/// every signature both ways.
final class SignedLockTests: SigningTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        let job = try ws.write(ws.job([Demo.london, Demo.paris], tiles: .mbtiles)).path
        try ws.provision("apply", "--quiet", job).expect(0)
    }

    private var signature: URL { ws.store.appendingPathComponent("provision.lock.json.sig") }

    /// `openssl pkeyutl -verify` of the store's lock and signature with `pub.pem`.
    private func opensslVerify() throws -> ProcessResult {
        try run(openssl, "pkeyutl", "-verify", "-pubin", "-inkey", "pub.pem", "-rawin", "-in", ws.lock.path,
                "-sigfile", signature.path)
    }

    func testOurSignatureVerifiesWithOpenSSLAndWithAudit() throws {
        let signed = try ws.provision("sign", "--key", "key.pem", "--store", ws.store.path, "--json")
        signed.expect(0)
        let document = try parseJSON(signed.stdout)
        XCTAssertEqual(try SchemaSubset(named: "signature.schema.json").problems(document), [])
        XCTAssertEqual(try Data(contentsOf: signature).count, 64, "raw Ed25519 signature bytes")
        XCTAssertEqual(document["lockDigest"]?.stringValue, "sha256:" + SHA256.hex(try Data(contentsOf: ws.lock)))
        // The public key shown is the key's: the last 32 bytes of its SubjectPublicKeyInfo.
        try run(openssl, "pkey", "-pubin", "-in", "pub.pem", "-outform", "DER", "-out", "pub.der").expect(0)
        let der = try Data(contentsOf: ws.root.appendingPathComponent("pub.der"))
        XCTAssertEqual(document["publicKey"]?.stringValue, der.suffix(32).base64EncodedString())

        let check = try opensslVerify()
        check.expect(0, "openssl pkeyutl -verify")
        XCTAssertTrue(check.stdout.contains("Signature Verified Successfully"), check.stdout)

        let audit = try ws.provision("audit", "--verify", "--trusted-key", "pub.pem", "--store", ws.store.path, "--progress", "json")
        audit.expect(0, "audit --verify --trusted-key of a signed store")
        let events = audit.stderr.split(separator: "\n").map(String.init)
        let verified = events.firstIndex { $0.contains(#""event":"signature-verified""#) }
        let finished = events.firstIndex { $0.contains(#""event":"audit-finished""#) }
        XCTAssertNotNil(verified, audit.stderr)
        XCTAssertLessThan(verified ?? .max, finished ?? -1, "the signature is checked before the audit ends")
        let event = try parseJSON(events[verified ?? 0])
        XCTAssertEqual(try SchemaSubset(named: "events.schema.json").problems(event), [])
        // The signature is one of the store's own files, not an unexpected one.
        try ws.provision("audit", "--store", ws.store.path).expect(0, "audit of a signed store without --trusted-key")
    }

    func testOpenSSLsSignatureIsOursByteForByteAndAuditAcceptsIt() throws {
        try ws.provision("sign", "--key", "key.pem", "--store", ws.store.path).expect(0)
        let ours = try Data(contentsOf: signature)
        try FileManager.default.removeItem(at: signature)
        try run(openssl, "pkeyutl", "-sign", "-inkey", "key.pem", "-rawin", "-in", ws.lock.path, "-out", signature.path).expect(0)
        XCTAssertEqual(try Data(contentsOf: signature), ours, "Ed25519 is deterministic: the same key and bytes, the same signature")
        try ws.provision("audit", "--verify", "--trusted-key", "pub.pem", "--store", ws.store.path)
            .expect(0, "audit --trusted-key of the signature openssl wrote")
    }

    func testAOneByteChangeInTheLockFailsNamingTheSignatureAndTheLock() throws {
        try ws.provision("sign", "--key", "key.pem", "--store", ws.store.path).expect(0)
        // The lock's last byte, its newline, becomes a space: still the same JSON, and every
        // digest still matches, so only the signature can tell.
        var lock = try Data(contentsOf: ws.lock)
        XCTAssertEqual(lock.last, UInt8(ascii: "\n"))
        lock[lock.count - 1] = UInt8(ascii: " ")
        try lock.write(to: ws.lock)
        try ws.provision("audit", "--verify", "--store", ws.store.path).expect(0, "without --trusted-key the change is invisible")

        let audit = try ws.provision("audit", "--verify", "--trusted-key", "pub.pem", "--store", ws.store.path)
        audit.expect(1)
        XCTAssertTrue(audit.stderr.contains("the signature \(signature.path) does not match the lock \(ws.lock.path)"), audit.stderr)
        let json = try ws.provision("audit", "--verify", "--trusted-key", "pub.pem", "--store", ws.store.path, "--json")
        json.expect(1)
        let error = try parseJSON(json.stdout)
        XCTAssertEqual(try SchemaSubset(named: "error.schema.json").problems(error), [])
        XCTAssertTrue(error["message"]?.stringValue?.contains("provision.lock.json.sig") == true, json.stdout)
        XCTAssertEqual(try opensslVerify().status, 1, "openssl agrees the signature does not match")

        // Signed by another key: the same refusal. No signature at all: named too.
        try run(openssl, "genpkey", "-algorithm", "ed25519", "-out", "other.pem").expect(0)
        try ws.provision("sign", "--key", "other.pem", "--store", ws.store.path).expect(0)
        let other = try ws.provision("audit", "--verify", "--trusted-key", "pub.pem", "--store", ws.store.path)
        other.expect(1)
        XCTAssertTrue(other.stderr.contains("does not match the lock"), other.stderr)
        try FileManager.default.removeItem(at: signature)
        let unsigned = try ws.provision("audit", "--verify", "--trusted-key", "pub.pem", "--store", ws.store.path)
        unsigned.expect(1)
        XCTAssertTrue(unsigned.stderr.contains("the store is not signed: the signature \(signature.path)"), unsigned.stderr)
    }

    func testASignedLockStillHasEveryRowChecked() throws {
        try ws.provision("sign", "--key", "key.pem", "--store", ws.store.path).expect(0)
        let victim = try ws.sqlite.rows("SELECT z, x, y FROM tiles ORDER BY z DESC, x, y LIMIT 1").first ?? []
        XCTAssertEqual(victim.count, 3)
        try WritableSQLite(database: ws.database).exec("""
            UPDATE tiles SET data = CAST('<html>Oops</html>' AS BLOB), compressed = 0 \
            WHERE z = \(victim[0]) AND x = \(victim[1]) AND y = \(victim[2]);
            """)
        let audit = try ws.provision("audit", "--verify", "--trusted-key", "pub.pem", "--store", ws.store.path, "--json")
        audit.expect(1, "the signature holds, a row does not")
        XCTAssertTrue(audit.stderr.contains("is the trusted key's"), audit.stderr)
        let rows = try parseJSON(audit.stdout)["verification"]?["corruptRows"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertTrue(rows.first?.contains("\(victim[0])/\(victim[1])/\(victim[2])") == true, "the row is named: \(rows)")
    }

    func testApplySignsTheLockItWritesWithAKeyFromADescriptor() throws {
        let job = try ws.write(ws.job([Demo.london], tiles: .mbtiles), to: "london.json").path
        let before = try Data(contentsOf: ws.lock)
        let apply = try shell("exec \"$0\" apply --quiet \(job) --sign-key /dev/fd/3 3< <(cat key.pem)")
        apply.expect(0, "apply --sign-key /dev/fd/3 from a pipe")
        XCTAssertNotEqual(try Data(contentsOf: ws.lock), before, "the job changed, so did the lock")
        try opensslVerify().expect(0, "openssl verifies the new lock's signature")
        try ProvisionProcess.provision(["audit", "--verify", "--trusted-key", "/dev/fd/0", "--store", ws.store.path], in: ws.root,
                                       stdin: ws.root.appendingPathComponent("pub.pem")).expect(0, "--trusted-key on standard input")
        let sign = try shell("exec \"$0\" sign --key /dev/fd/3 --store store 3< key.pem")
        sign.expect(0, "sign --key /dev/fd/3 from a file")
    }

    /// A signature that cannot be written fails the apply (73) after its lock is written, and
    /// leaves no earlier signature beside the new lock.
    func testAFailedSigningLeavesNoStaleSignatureBesideTheNewLock() throws {
        try ws.provision("sign", "--key", "key.pem", "--store", ws.store.path).expect(0)
        let before = try Data(contentsOf: ws.lock)
        let job = try ws.write(ws.job([Demo.paris], tiles: .mbtiles), to: "paris.json").path
        // The signature's temporary file is `.provision.lock.json.sig.tmp-<pid>`: a directory
        // there, made by the shell that becomes the apply, makes writing it fail.
        let apply = try shell("mkdir store/.provision.lock.json.sig.tmp-$$ && exec \"$0\" apply --quiet \(job) --sign-key key.pem")
        apply.expect(73)
        XCTAssertTrue(apply.stderr.contains("cannot write the signature \(signature.path)"), apply.stderr)
        XCTAssertNotEqual(try Data(contentsOf: ws.lock), before, "the new lock is written")
        XCTAssertFalse(FileManager.default.fileExists(atPath: signature.path), "the old signature would vouch for the new lock")
    }

    func testKeysThatCannotSignOrVerifyAreUsageOrMissingInput() throws {
        try run(openssl, "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", "rsa.pem").expect(0)
        try run(openssl, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec.pem").expect(0)
        try run(openssl, "genpkey", "-algorithm", "ed25519", "-aes-256-cbc", "-pass", "pass:hunter2", "-out", "encrypted.pem").expect(0)
        let cases: [(arguments: [String], status: Int32, says: String)] = [
            (["sign", "--key", "rsa.pem"], 64, "--key rsa.pem cannot be used: it holds a key of type RSA"),
            (["sign", "--key", "ec.pem"], 64, "--key ec.pem cannot be used: it holds a key of type EC"),
            (["sign", "--key", "encrypted.pem"], 64, "--key encrypted.pem cannot be used: it is password-protected"),
            (["sign", "--key", "pub.pem"], 64, "it is a public key; signing needs the private key"),
            (["sign", "--key", "job.json"], 64, "--key job.json cannot be used: it is not a PEM key"),
            (["sign", "--key", "missing.pem"], 66, "--key missing.pem cannot be read: No such file or directory"),
            (["sign", "--key", "store"], 66, "--key store cannot be read"),
            (["sign"], 64, "sign needs --key KEY.pem"),
            (["audit", "--verify", "--trusted-key", "key.pem"], 64, "--trusted-key key.pem cannot be used: it is a private key"),
            (["audit", "--verify", "--trusted-key", "rsa.pem"], 64, "--trusted-key rsa.pem cannot be used: it is a private key"),
            (["audit", "--verify", "--trusted-key", "missing.pem"], 66, "--trusted-key missing.pem cannot be read"),
            (["audit", "--trusted-key", "pub.pem"], 64, "--trusted-key goes with --verify"),
            (["apply", "job.json", "--sign-key", "ec.pem"], 64, "--sign-key ec.pem cannot be used: it holds a key of type EC"),
            (["apply", "job.json", "--sign-key", "missing.pem"], 66, "--sign-key missing.pem cannot be read"),
        ]
        let lock = try Data(contentsOf: ws.lock)
        for (arguments, status, says) in cases {
            let result = try ProvisionProcess.provision(arguments + (arguments[0] == "apply" ? [] : ["--store", "store"]), in: ws.root)
            result.expect(status, arguments.joined(separator: " "))
            XCTAssertTrue(result.stderr.contains(says), "\(arguments): \(result.stderr)")
        }
        XCTAssertEqual(try Data(contentsOf: ws.lock), lock, "no refused key changed the store")
        XCTAssertFalse(FileManager.default.fileExists(atPath: signature.path), "nor signed it")
    }

    /// The private key's bytes (its PEM body, its 32-byte seed in hex and base64) appear in no
    /// output, report or document of any command that read it, errors and --verbose included.
    func testTheKeyNeverAppearsInAnyOutput() throws {
        let job = try ws.write(ws.job([Demo.london], tiles: .mbtiles), to: "london.json").path
        var outputs: [ProcessResult] = []
        outputs.append(try ws.provision("sign", "--key", "key.pem", "--store", ws.store.path, "--verbose"))
        outputs.append(try ws.provision("sign", "--key", "key.pem", "--store", ws.store.path, "--json", "--progress", "json"))
        outputs.append(try ws.provision("apply", job, "--sign-key", "key.pem", "--report", "report.json", "--progress", "json",
                                        "--verbose"))
        outputs.append(try ws.provision("apply", job, "--sign-key", "key.pem", "--json"))
        outputs.append(try ws.provision("audit", "--verify", "--trusted-key", "key.pem", "--store", ws.store.path, "--verbose"))
        outputs.append(try ws.provision("audit", "--verify", "--trusted-key", "key.pem", "--json", "--store", ws.store.path))
        outputs.append(try ws.provision("sign", "--key", "pub.pem", "--store", ws.store.path, "--verbose"))
        try run(openssl, "pkey", "-in", "key.pem", "-outform", "DER", "-out", "key.der").expect(0)
        let seed = try Data(contentsOf: ws.root.appendingPathComponent("key.der")).suffix(32)
        XCTAssertEqual(seed.count, 32)
        let pem = String(decoding: try Data(contentsOf: ws.root.appendingPathComponent("key.pem")), as: UTF8.self)
        let secrets = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
            + [seed.base64EncodedString(), seed.map { String(format: "%02x", $0) }.joined(),
               String(seed.base64EncodedString().prefix(16))]
        XCTAssertFalse(secrets.isEmpty)
        let texts = outputs.flatMap { [$0.stdout, $0.stderr] }
            + [String(decoding: try Data(contentsOf: ws.root.appendingPathComponent("report.json")), as: UTF8.self),
               String(decoding: try Data(contentsOf: ws.lock), as: UTF8.self)]
        for text in texts {
            for secret in secrets {
                XCTAssertFalse(text.lowercased().contains(secret.lowercased()), "the key's bytes were printed:\n\(text.prefix(2000))")
            }
        }
    }

    /// `script` run by bash in the workspace, with `$0` the provision binary (descriptors and `$$`).
    private func shell(_ script: String) throws -> ProcessResult {
        try ProvisionProcess.run(URL(fileURLWithPath: "/bin/bash"), ["-c", script, try ProvisionProcess.binary().path],
                                 in: ws.root, environment: ProvisionProcess.environment([:]), timeout: 60)
    }
}
