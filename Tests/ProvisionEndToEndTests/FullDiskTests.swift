import Foundation
import ProvisionModel
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 3 #8: a full disk ends the apply with exit 73 and a clear message; the store opens and
/// holds no temporary files; once there is room, apply again is all it takes.
final class FullDiskTests: XCTestCase {
    private var ws: Workspace!
    private var mountPoint: URL?
    private static let mount = ProvisionProcess.onPath("mount") ?? URL(fileURLWithPath: "/bin/mount")

    override func setUpWithError() throws {
        ws = try Workspace()
    }

    override func tearDown() {
        if let mountPoint {
            let umount = ProvisionProcess.onPath("umount") ?? URL(fileURLWithPath: "/bin/umount")
            _ = try? ProvisionProcess.run(umount, [mountPoint.path], in: ws.root,
                                          environment: ProcessInfo.processInfo.environment, timeout: 10)
        }
        mountPoint = nil
        ws?.tearDown()
        ws = nil
    }

    /// Mounts a tmpfs of `size` in the workspace, or skips saying why it cannot.
    private func mountSmallDisk(size: String) throws -> URL {
        #if os(Linux)
        guard getuid() == 0 else { throw XCTSkip("the full-disk test mounts a tmpfs and needs root (uid \(getuid()))") }
        guard FileManager.default.isExecutableFile(atPath: Self.mount.path) else { throw XCTSkip("no mount command") }
        let point = ws.root.appendingPathComponent("small-disk")
        try FileManager.default.createDirectory(at: point, withIntermediateDirectories: true)
        let result = try ProvisionProcess.run(Self.mount, ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", point.path], in: ws.root,
                                              environment: ProcessInfo.processInfo.environment, timeout: 10)
        guard result.status == 0 else {
            let reason = result.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            throw XCTSkip("cannot mount a tmpfs here (\(result.status)): \(reason)")
        }
        mountPoint = point
        return point
        #else
        throw XCTSkip("the full-disk test mounts a Linux tmpfs")
        #endif
    }

    func testFullDiskExits73AndTheStoreStaysUsable() throws {
        let disk = try mountSmallDisk(size: "600k")
        let store = disk.appendingPathComponent("store")
        // The demo job of issue 2 (three cities, 1439 tiles, ~600 KiB of content): it cannot fit.
        let job = try ws.write(ws.job([Demo.newYork, Demo.london, Demo.paris], tiles: .mbtiles)).path

        let full = try ws.provision("apply", "--store", store.path, job)
        full.expect(73, "apply onto a full disk")
        XCTAssertTrue(full.stderr.lowercased().contains("disk is full") || full.stderr.lowercased().contains("no space left"),
                      "the message says the disk is full: \(full.stderr)")
        XCTAssertFalse(full.stderr.contains("Fatal error"), full.stderr)

        let entries = try FileManager.default.contentsOfDirectory(atPath: store.path).sorted()
        XCTAssertTrue(Set(entries).isSubset(of: ["offline.db"]),
                      "no temporary file, journal or owner file is left: \(entries)")
        let database = store.appendingPathComponent("offline.db")
        if entries.contains("offline.db") {
            XCTAssertEqual(try ws.integrityCheck(database), "ok")
            let audit = try ws.provision("audit", "--store", store.path)
            XCTAssertTrue(audit.status == 0 || audit.status == 1, audit.combined)
        }

        // Make room: apply again is all it takes.
        let remount = try ProvisionProcess.run(Self.mount, ["-o", "remount,size=32m", disk.path],
                                               in: ws.root, environment: ProcessInfo.processInfo.environment, timeout: 10)
        XCTAssertEqual(remount.status, 0, remount.stderr)
        try ws.provision("apply", "--quiet", "--store", store.path, job).expect(0, "apply once there is room")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store.path).sorted(),
                       ["offline.db", "provision.lock.json"])
        XCTAssertEqual(try ws.integrityCheck(database), "ok")
        try ws.provision("audit", "--store", store.path).expect(0)
        let tiles = [Demo.newYork, Demo.london, Demo.paris].reduce(0) { $0 + $1.tiles.count }
        XCTAssertEqual(try SQLiteShell(database: database).int("SELECT count(*) FROM tiles"), tiles)
    }
}
