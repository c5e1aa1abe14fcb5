import Foundation
import ProvisionCodecs
import XCTest

/// Ed25519 against RFC 8032's test vectors, read from PEM as `openssl` writes it, and every key
/// refused with the reason a user can act on.
final class Ed25519Tests: XCTestCase {
    /// RFC 8032 section 7.1, TEST 2: the seed, its public key, a one-byte message and its signature.
    private static let seed = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"
    private static let publicKey = "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"
    private static let message = Data([0x72])
    private static let signature = "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
        + "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"

    /// PKCS#8 of a seed: the DER prefix of an Ed25519 private key (RFC 8410), then the 32 bytes.
    private static func privatePEM(_ seed: String) -> Data {
        pem("PRIVATE KEY", Data(hex: "302e020100300506032b657004220420" + seed))
    }

    /// SubjectPublicKeyInfo of a public key (RFC 8410).
    private static func publicPEM(_ key: String) -> Data {
        pem("PUBLIC KEY", Data(hex: "302a300506032b6570032100" + key))
    }

    private static func pem(_ label: String, _ der: Data) -> Data {
        Data("-----BEGIN \(label)-----\n\(der.base64EncodedString(options: .lineLength64Characters))\n-----END \(label)-----\n".utf8)
    }

    func testRFC8032VectorFromPEM() throws {
        let key = try Ed25519.PrivateKey(pem: Self.privatePEM(Self.seed))
        XCTAssertEqual(key.publicKey.rawRepresentation, Data(hex: Self.publicKey))
        XCTAssertEqual(try key.signature(for: Self.message), Data(hex: Self.signature))
        let trusted = try Ed25519.PublicKey(pem: Self.publicPEM(Self.publicKey))
        XCTAssertEqual(trusted, key.publicKey)
        XCTAssertTrue(trusted.isValidSignature(Data(hex: Self.signature), for: Self.message))
    }

    func testAnyChangeBreaksTheSignature() throws {
        let key = try Ed25519.PrivateKey(pem: Self.privatePEM(Self.seed))
        let lock = Data("{\"schemaVersion\": 6}\n".utf8)
        let signature = try key.signature(for: lock)
        XCTAssertEqual(signature.count, Ed25519.signatureSize)
        XCTAssertTrue(key.publicKey.isValidSignature(signature, for: lock))
        var changed = lock
        changed[3] ^= 1
        XCTAssertFalse(key.publicKey.isValidSignature(signature, for: changed), "one bit of the message")
        var flipped = signature
        flipped[10] ^= 0x80
        XCTAssertFalse(key.publicKey.isValidSignature(flipped, for: lock), "one bit of the signature")
        XCTAssertFalse(key.publicKey.isValidSignature(signature.prefix(63), for: lock), "a short signature")
        let other = try Ed25519.PrivateKey(pem: Self.privatePEM(String(repeating: "11", count: 32)))
        XCTAssertFalse(other.publicKey.isValidSignature(signature, for: lock), "another key")
    }

    func testKeysOfTheWrongKindAreRefusedByName() {
        XCTAssertEqual(refusal { try Ed25519.PrivateKey(pem: Self.publicPEM(Self.publicKey)) }, .publicNotPrivate)
        XCTAssertEqual(refusal { try Ed25519.PublicKey(pem: Self.privatePEM(Self.seed)) }, .privateNotPublic)
        XCTAssertEqual(refusal { try Ed25519.PrivateKey(pem: Data("not a key\n".utf8)) }, .notAKey)
        XCTAssertEqual(refusal { try Ed25519.PublicKey(pem: Data()) }, .notAKey)
        let encrypted = Data("-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAc\n-----END ENCRYPTED PRIVATE KEY-----\n".utf8)
        XCTAssertEqual(refusal { try Ed25519.PrivateKey(pem: encrypted) }, .encrypted)
    }

    /// A key never shows its private bytes, however it is printed.
    func testAPrivateKeyPrintsOnlyItsPublicKey() throws {
        let key = try Ed25519.PrivateKey(pem: Self.privatePEM(Self.seed))
        let seedBase64 = Data(hex: Self.seed).base64EncodedString()
        for text in [String(describing: key), String(reflecting: key), "\(key)", { var s = ""; dump(key, to: &s); return s }()] {
            XCTAssertFalse(text.lowercased().contains(Self.seed), text)
            XCTAssertFalse(text.contains(seedBase64), text)
        }
    }

    private func refusal(_ body: () throws -> Any) -> Ed25519.KeyError.Kind? {
        do {
            _ = try body()
            XCTFail("the key was accepted")
            return nil
        } catch let error as Ed25519.KeyError {
            return error.kind
        } catch {
            XCTFail("\(error)")
            return nil
        }
    }
}
