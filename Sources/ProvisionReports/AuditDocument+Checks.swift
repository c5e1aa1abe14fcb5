import Foundation
import ProvisionFoundation
import ProvisionModel

/// What an audit checked, what it could not, and per region what `--verify` found.
extension AuditDocument {
    /// What `--verify` found among one region's rows.
    public struct RegionVerification: Equatable, Sendable {
        /// Rows it links that do not decode or are not their kind.
        public var corrupt = 0
        /// Rows it links, valid for their kind, in chunks whose digest differs from the lock's.
        public var differing = 0

        /// Counts of one region's damaged rows.
        public init(corrupt: Int = 0, differing: Int = 0) {
            self.corrupt = corrupt
            self.differing = differing
        }

        /// Whether none of its rows was found corrupt. Rows in a differing chunk are suspects,
        /// not findings: a chunk's digest cannot say which of its rows changed (one corrupt row
        /// of another region in the chunk is enough), so they are shown but do not mark the region.
        public var isClean: Bool { corrupt == 0 }
    }

    /// A check audit makes: what the JSON's `checked` and `notChecked` name.
    public enum Check: String, CaseIterable, Sendable {
        /// SQLite's `PRAGMA integrity_check`.
        case integrity
        /// The regions, their tiles and resources as linked, orphans, unexpected files.
        case regions
        /// Per region, the tiles and resources the lock says it should hold.
        case expectedCounts
        /// Every row's bytes: inflated, checked for its kind, expiry (`--verify`).
        case contents
        /// Every row against the lock's chunk digests and content digest (`--verify` with a lock).
        case digests
        /// Each search pack the lock records: present, opens, is a search pack, its digest; files it does not record.
        case searchPacks
        /// Each search pack rebuilt from the stored tiles and compared (`--verify --manifest`).
        case searchPackTiles
        /// Each routing pack the lock records: present, its index against the lock; files it does not record.
        case routingPacks
        /// Every tile of each routing pack re-read: header and SHA-256 against the lock (`--verify`).
        case routingPackTiles

        /// What the check covers, in words.
        public var text: String {
            switch self {
            case .integrity: return "SQLite's integrity check"
            case .regions: return "what each region links"
            case .expectedCounts: return "each region's expected counts"
            case .contents: return "the bytes of each row"
            case .digests: return "the rows against the lock's digests"
            case .searchPacks: return "the search packs against the lock"
            case .searchPackTiles: return "the search packs against their tiles"
            case .routingPacks: return "the routing packs against the lock"
            case .routingPackTiles: return "the routing packs' graph tiles"
            }
        }
    }

    /// The checks this audit made (the search packs' only in a store that has some).
    public var checked: [Check] {
        Check.allCases.filter { check in
            !notChecked.contains { $0.check == check } && (hasSearchPacks || (check != .searchPacks && check != .searchPackTiles))
                && (hasRoutingPacks || (check != .routingPacks && check != .routingPackTiles))
        }
    }

    /// The checks this audit could not make, each with why.
    public var notChecked: [(check: Check, reason: String)] {
        let lockReason = lockProblem == nil ? "no provision.lock.json" : "provision.lock.json is unreadable"
        let lockRead = hasLock && lockProblem == nil
        var out: [(check: Check, reason: String)] = []
        if !lockRead { out.append((.expectedCounts, lockReason)) }
        if verification == nil { out.append((.contents, "audit --verify reads them")) }
        if !lockRead {
            out.append((.digests, lockReason))
        } else if verification == nil {
            out.append((.digests, "audit --verify reads them"))
        }
        if hasSearchPacks && !lockRead { out.append((.searchPacks, lockReason)) }
        if hasSearchPacks && !lockRead {
            out.append((.searchPackTiles, lockReason))
        } else if hasSearchPacks, let reason = searchPackTilesNotChecked {
            out.append((.searchPackTiles, reason))
        }
        if hasRoutingPacks && !lockRead {
            out.append((.routingPacks, lockReason))
            out.append((.routingPackTiles, lockReason))
        } else if hasRoutingPacks && verification == nil {
            out.append((.routingPackTiles, "audit --verify reads them"))
        }
        return out
    }

    /// `Not checked: A and B (why); C (why).`, or nil when everything was checked.
    var notCheckedText: String? {
        let missing = notChecked
        guard !missing.isEmpty else { return nil }
        var reasons: [String] = []
        var byReason: [String: [Check]] = [:]
        for (check, reason) in missing {
            if byReason[reason] == nil { reasons.append(reason) }
            byReason[reason, default: []].append(check)
        }
        return "Not checked: " + reasons.map { reason in
            listed((byReason[reason] ?? []).map(\.text)) + " (\(reason))"
        }.joined(separator: "; ") + "."
    }

    /// Whether the store is whole: no problem found, and the lock was read, so every region
    /// was compared with what it should hold. A store without a readable lock is never whole,
    /// however clean the rows that could be checked.
    public var isWhole: Bool { isOK && hasLock && lockProblem == nil }
}
