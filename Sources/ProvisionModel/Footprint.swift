import Foundation

/// What each region costs in a store: the bytes only it holds, the bytes it shares and with
/// which regions, per region and per region row (region × style pack), and the resources of
/// each style pack by kind.
///
/// Definitions (bytes are the `data` column's length as stored, compressed where the row is;
/// a tile or resource is counted once however many rows link it):
/// - **total** of a region: every tile and resource linked to any of its rows.
/// - **marginal**: the part of the total no other region links to. Dropping the region from
///   the job and applying deletes exactly these rows, so the store shrinks by exactly these bytes.
/// - **shared**: total − marginal, the content at least one other region links to as well.
/// - **shared with S**: the content linked both to this region and to region S. A tile three
///   regions hold counts toward both of the others, so these can add up to more than `shared`.
/// - For a row (region × style pack) the same, with rows in place of regions: a row's marginal
///   bytes are what removing that style pack from that region frees.
/// - A style pack's resources are those its rows link to, by kind; its marginal bytes are the
///   ones no row of another style pack links to.
/// - `all`: the total is everything linked to any region, the shared part what two or more
///   regions link to (each row once), the marginal part the rest (the sum of the regions').
public struct Footprint: Equatable, Sendable {
    /// Who a member of a `ContentSharing` is.
    public struct Member: Equatable, Sendable {
        /// The job region id (or `row N` for a row no lock names).
        public var region: String
        /// The style pack id, nil for a tilesets-only row.
        public var stylePack: String?
        /// The row's key, `region/pack`.
        public var key: String
        /// The region row in the store, nil for a row a plan would create.
        public var rowID: Int64?

        public init(region: String, stylePack: String?, key: String, rowID: Int64?) {
            self.region = region
            self.stylePack = stylePack
            self.key = key
            self.rowID = rowID
        }
    }

    /// Marginal and shared content of a region, a row or a style pack.
    public struct Entry: Equatable, Sendable {
        /// Content no other region (row, style pack) links to.
        public var marginal = ContentAmount()
        /// Content at least one other one links to as well.
        public var shared = ContentAmount()
        /// For each other region (row key), the content both link to; largest first.
        public var sharedWith: [(name: String, amount: ContentAmount)] = []

        public init() {}

        /// Everything linked.
        public var total: ContentAmount { marginal + shared }

        public static func == (a: Entry, b: Entry) -> Bool {
            a.marginal == b.marginal && a.shared == b.shared
                && a.sharedWith.elementsEqual(b.sharedWith) { $0.name == $1.name && $0.amount == $1.amount }
        }
    }

    /// One region row: a job region with one style pack.
    public struct Row: Equatable, Sendable {
        public var key: String
        public var stylePack: String?
        public var rowID: Int64?
        public var entry: Entry
    }

    /// One job region, over all its rows.
    public struct Region: Equatable, Sendable {
        public var id: String
        public var entry: Entry
        /// Its rows, in member order.
        public var rows: [Row]
    }

    /// The resources of a style pack.
    public struct Pack: Equatable, Sendable {
        public var id: String
        /// Resources no row of another style pack links to, and the others.
        public var entry: Entry
        /// The same resources by what they are.
        public var kinds: [(kind: ResourceGroup, amount: ContentAmount)]

        public static func == (a: Pack, b: Pack) -> Bool {
            a.id == b.id && a.entry == b.entry && a.kinds.elementsEqual(b.kinds) { $0.kind == $1.kind && $0.amount == $1.amount }
        }
    }

    /// What a style pack's resources are, as reports group them.
    public enum ResourceGroup: String, CaseIterable, Sendable {
        case style, sources, sprites, glyphs, other

        /// The group of a resource kind.
        public init(_ kind: ResourceKind) {
            switch kind {
            case .style: self = .style
            case .source: self = .sources
            case .spriteImage, .spriteJSON: self = .sprites
            case .glyphs: self = .glyphs
            case .tile, .image, .unknown: self = .other
            }
        }
    }

    /// Regions in the order of their first row.
    public var regions: [Region]
    /// Style packs in the order of their first row.
    public var stylePacks: [Pack]
    /// Every region together.
    public var all: Entry

    /// Whether every byte is stored (false when part of them is a plan's estimate).
    public var isExact: Bool { !all.total.isEstimated }

    /// The footprint of `sharing`, whose members `members` names. A member it does not name
    /// becomes a region of its own, `row N`.
    public init(sharing: ContentSharing, members: [Int64: Member]) {
        func member(_ id: Int64) -> Member {
            members[id] ?? Member(region: "row \(id)", stylePack: nil, key: "row \(id)", rowID: id)
        }
        let ids = Set(sharing.amounts.keys.flatMap(\.members)).union(members.keys).sorted()
        var regionOrder: [String] = [], packOrder: [String] = []
        var rowsOfRegion: [String: [Int64]] = [:]
        for id in ids {
            let m = member(id)
            if rowsOfRegion[m.region] == nil { regionOrder.append(m.region) }
            rowsOfRegion[m.region, default: []].append(id)
            if let pack = m.stylePack, !packOrder.contains(pack) { packOrder.append(pack) }
        }
        var regionTallies: [String: Tally] = [:], rowTallies: [Int64: Tally] = [:], packTallies: [String: Tally] = [:]
        var packKinds: [String: [ResourceGroup: ContentAmount]] = [:]
        var all = Entry()
        for key in sharing.sortedKeys {
            guard let amount = sharing.amounts[key] else { continue }
            let owners = key.members.map(member)
            let regions = Self.distinct(owners.map(\.region))
            for region in regions { regionTallies[region, default: Tally()].add(amount, holder: region, among: regions) }
            let keys = owners.map(\.key)
            for (id, owner) in zip(key.members, owners) { rowTallies[id, default: Tally()].add(amount, holder: owner.key, among: keys) }
            if regions.count > 1 { all.shared += amount } else { all.marginal += amount }
            guard key.kind != .tile else { continue }
            let packs = Self.distinct(owners.map { $0.stylePack ?? "" })
            for pack in packs where !pack.isEmpty {
                packTallies[pack, default: Tally()].add(amount, holder: pack, among: packs)
                packKinds[pack, default: [:]][ResourceGroup(key.kind), default: ContentAmount()] += amount
            }
        }
        regions = regionOrder.map { region in
            Region(id: region, entry: regionTallies[region]?.entry ?? Entry(), rows: (rowsOfRegion[region] ?? []).map { id in
                let m = member(id)
                return Row(key: m.key, stylePack: m.stylePack, rowID: m.rowID, entry: rowTallies[id]?.entry ?? Entry())
            })
        }
        stylePacks = packOrder.map { pack in
            let kinds = packKinds[pack] ?? [:]
            var entry = packTallies[pack]?.entry ?? Entry()
            entry.sharedWith = []
            return Pack(id: pack, entry: entry,
                        kinds: ResourceGroup.allCases.map { ($0, kinds[$0] ?? ContentAmount()) })
        }
        self.all = all
    }

    /// `names` without repeats, in first-seen order.
    private static func distinct(_ names: [String]) -> [String] {
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }

    /// The running sums of one region, row or pack.
    private struct Tally {
        var marginal = ContentAmount()
        var shared = ContentAmount()
        var with: [String: ContentAmount] = [:]

        /// Adds content that `holders` (this one, `holder`, among them) link to.
        mutating func add(_ amount: ContentAmount, holder: String, among holders: [String]) {
            guard holders.contains(where: { $0 != holder }) else {
                marginal += amount
                return
            }
            shared += amount
            for other in holders where other != holder { with[other, default: ContentAmount()] += amount }
        }

        var entry: Entry {
            var entry = Entry()
            entry.marginal = marginal
            entry.shared = shared
            entry.sharedWith = with.map { (name: $0.key, amount: $0.value) }
                .sorted { ($0.amount.bytes, $1.name) > ($1.amount.bytes, $0.name) }
            return entry
        }
    }
}
