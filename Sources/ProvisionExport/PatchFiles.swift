import Foundation
import ProvisionEngine
import ProvisionFoundation
import ProvisionModel
import ProvisionReports
import ProvisionStore

/// The directory a patch's other files go in, beside the patch: `--out DIR/NAME.db` gets
/// `DIR/NAME.files/` with `README.txt`, what the data must credit (`ATTRIBUTION.md`,
/// `attribution.json`) and the search and routing packs new or changed since OLD, whole, at their
/// store paths (`search/<pack>.db`, `routing/<pack>.tar`).
///
/// Why one directory named after the patch: it clobbers nothing else in `--out`'s directory (an
/// earlier directory of this kind is replaced, anything else refused), and it is built under a
/// temporary name and renamed into place (`BundleDirectory`), so a failure leaves none. Why packs
/// whole: a search pack is one SQLite file and a routing pack's graph ids are not stable from one
/// Valhalla build to the next, so no row-level difference of two packs is meaningful.
struct PatchFiles {
    /// The first line of the directory's README.txt: what `BundleDirectory` replaces.
    static let marker = "provision export patch files"

    /// The packs new or changed since OLD (shipped) and those OLD has that the store dropped.
    let packs: [ExportResult.PatchPack]
    let droppedPacks: [ExportResult.PatchPack]

    /// Compares the packs of OLD's lock with the current lock's by their files' digests.
    init(old: LockDocument, current: LockDocument) {
        let search = Self.compare(.search, old: old.searchPacks.map { ($0.id, $0.file, $0.digest, $0.bytes) },
                                  current: current.searchPacks.map { ($0.id, $0.file, $0.digest, $0.bytes) })
        let routing = Self.compare(.routing, old: old.routingPacks.map { ($0.id, $0.file, $0.digest, $0.bytes) },
                                   current: current.routingPacks.map { ($0.id, $0.file, $0.digest, $0.bytes) })
        packs = search.shipped + routing.shipped
        droppedPacks = search.dropped + routing.dropped
    }

    private typealias Record = (id: String, file: String, digest: String, bytes: Int64)

    private static func compare(_ kind: ExportResult.PatchPack.Kind, old: [Record], current: [Record])
        -> (shipped: [ExportResult.PatchPack], dropped: [ExportResult.PatchPack]) {
        let shipped = current.compactMap { record -> ExportResult.PatchPack? in
            let before = old.first { $0.file == record.file }
            guard before?.digest != record.digest else { return nil }
            return ExportResult.PatchPack(kind: kind, pack: record.id, path: record.file, change: before == nil ? .new : .changed,
                                          bytes: record.bytes, sha256: String(record.digest.dropFirst("sha256:".count)))
        }
        let dropped = old.filter { record in !current.contains { $0.file == record.file } }
            .map { ExportResult.PatchPack(kind: kind, pack: $0.id, path: $0.file, change: .dropped) }
        return (shipped, dropped)
    }

    /// `DIR/NAME.files` for the patch `DIR/NAME.db` (`DIR/NAME.files` too for `DIR/NAME`).
    static func directory(for patch: URL) -> URL {
        patch.deletingPathExtension().appendingPathExtension("files")
    }

    /// Stages the directory for the patch `destination`: README.txt, the attribution of the store
    /// whose lock is `lock`, each shipped pack copied from `store` and checked against the lock's
    /// digest (a pack missing or changed since it was built is damaged input, 65, named). The
    /// caller commits it once the patch itself is written.
    func stage(for destination: URL, store: StorePath, lock: LockDocument) throws(ProvisionError) -> BundleDirectory {
        let directory = Self.directory(for: destination)
        let staged: BundleDirectory
        do {
            staged = try BundleDirectory(destination: directory, marker: Self.marker, noun: "patch's files directory")
            try staged.write(Data(readme(patch: destination.lastPathComponent).utf8), to: "README.txt")
        } catch {
            throw ProvisionError(store: error, context: "cannot write \(directory.path)", kind: .cannotWriteStore)
        }
        // The patch carries rows of every tileset, so the lock's whole attribution is credited.
        try ExportAttribution(entries: lock.attribution).write(into: staged.staging)
        for pack in packs {
            try copy(pack, from: store, into: staged)
        }
        return staged
    }

    private func copy(_ pack: ExportResult.PatchPack, from store: StorePath, into staged: BundleDirectory) throws(ProvisionError) {
        let what = "\(pack.kind.rawValue) pack '\(pack.pack)': \(pack.path)"
        _ = try PackCopy.copy(pack.path, from: store, into: staged, digest: "sha256:" + pack.sha256, unreadable: { error in
            ProvisionError(.invalidJob, "\(what) cannot be read in the store at \(store.display) (\(describe(error))); run "
                           + "'provision apply' to build it again", cause: error)
        }, damaged: {
            ProvisionError(.invalidJob, "\(what) in the store at \(store.display) is damaged: its bytes are not the ones the lock "
                           + "recorded; run 'provision apply' to build it again")
        })
    }

    /// README.txt: what the directory holds and how an app applies it.
    private func readme(patch: String) -> String {
        var out = """
            \(Self.marker)

            Beside the patch \(patch), a MapLibre offline database devices side-load (merge) to update
            the bundle they have:
            - ATTRIBUTION.md, attribution.json: what the data must credit, for people and for apps.

            """
        if !packs.isEmpty {
            out += "- Packs new or changed since, to replace whole on devices (write the new file beside the old one, check\n"
                + "  its SHA-256 against the signed lock's searchPacks[].digest or routingPacks[].digest, then rename it\n"
                + "  over the old one; graph ids are not stable across Valhalla builds, so packs are never merged):\n"
            for pack in packs { out += "  \(pack.path) (\(pack.change.rawValue)) sha256 \(pack.sha256)\n" }
        }
        if !droppedPacks.isEmpty {
            out += "- Packs the store no longer has: delete them on devices: \(droppedPacks.map(\.path).joined(separator: ", "))\n"
        }
        return out
    }
}
