import Foundation
import ProvisionModel
import RoutingGraph

/// `--repair` of routing packs: the recorded tiles that an extract lacks or holds damaged (bytes
/// other than the lock's digest, a failed header check) are fetched again, the whole ones are
/// taken from the extract as it is, and the extract is written anew, so it equals a fresh build.
public enum RoutingPackRepair {
    /// Plans each pack with a record of the same source again from its tiles as they are: damaged
    /// or missing tiles are added, whole ones kept (even when `index.bin` is damaged or the tar cut
    /// short), and a pack with any damage, or whose file differs from the lock's, is rebuilt.
    public static func recheck(_ packs: inout [RoutingPackPlan], records: [RoutingPackRecord], directory: URL) {
        for index in packs.indices {
            let pack = packs[index].pack
            guard let record = records.first(where: { $0.id == pack.id }), record.source == pack.source,
                  record.gzip == pack.gzip else { continue }
            let recorded = Set(record.tiles.map(\.tile)), wanted = Set(packs[index].wanted)
            let damaged: Set<RoutingTile>
            do {
                damaged = Set(try RoutingPackCheck.tiles(record, directory: directory).map(\.tile))
            } catch {
                damaged = recorded  // an extract that cannot be read holds nothing to keep
            }
            let keep = wanted.intersection(recorded).subtracting(damaged)
            let absent = Set(packs[index].absent).subtracting(keep)
            packs[index].keep = keep.sorted()
            packs[index].absent = absent.sorted()
            packs[index].add = wanted.subtracting(keep).subtracting(absent).sorted()
            packs[index].remove = recorded.subtracting(wanted).sorted()
            let damagedWanted = damaged.intersection(wanted).count
            if damagedWanted > 0 {
                (packs[index].action, packs[index].reason) = (.build, "repair: \(damagedWanted) damaged graph tile"
                                                              + (damagedWanted == 1 ? "" : "s"))
            } else if packs[index].action == .keep, !fileIsRecorded(record, directory: directory) {
                (packs[index].action, packs[index].reason) = (.build, "repair: file damaged")
            }
        }
    }

    /// Whether the extract is the file the lock records: digest and size.
    static func fileIsRecorded(_ record: RoutingPackRecord, directory: URL) -> Bool {
        // A file that cannot be read is not the one recorded.
        guard let (digest, bytes) = try? RoutingPackBuild.fileDigest(directory.appendingPathComponent(record.file)) else {
            return false
        }
        return digest == record.digest && bytes == record.bytes
    }

    /// Before a repaired pack is written: stages the whole tiles it keeps, read from the extract as
    /// it is (its index may be damaged), where the build reads a kept tile first; the fetch asks
    /// for the added (damaged) ones only.
    public static func stageKept(_ plan: RoutingPackPlan, record: RoutingPackRecord?, directory: URL) throws {
        guard plan.action == .build, !plan.keep.isEmpty, let record else { return }
        let staging = RoutingPackStaging(store: directory, pack: plan.pack)
        let keep = Set(plan.keep)
        _ = try RoutingPackCheck.tiles(record, directory: directory) { id, bytes in
            if keep.contains(id.routingTile) { try staging.stage(id, bytes: bytes) }
        }
    }
}
