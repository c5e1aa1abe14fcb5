import Foundation
import ProvisionFoundation
import ProvisionModel

/// The footprint as plans, reports and audits build and write it (`footprint` in
/// Jobs/schema/plan, report and audit.schema.json, one definition in the three).
extension Footprint {
    /// The footprint of the store a plan leads to: its members are the plan's desired rows. Nil
    /// for a plan read from a file, which does not carry one.
    public init?(plan: Plan) {
        guard let sharing = plan.sharing else { return nil }
        var members: [Int64: Member] = [:]
        for (index, row) in plan.regions.enumerated() {
            members[Int64(index)] = Member(region: row.regionID, stylePack: row.stylePackID, key: row.key, rowID: row.rowID)
        }
        self.init(sharing: sharing, members: members)
    }

    /// The footprint of a store: its region rows named by the lock (`region/pack`). A row the
    /// lock does not name (no lock, a device's database) is a region of its own, `row N`, whose
    /// style pack is its definition's `style_url`.
    public init(sharing: ContentSharing, regions: [StoredRegion], lock: LockDocument?) {
        let locked = Dictionary((lock?.regions ?? []).map { ($0.rowID, $0) }, uniquingKeysWith: { a, _ in a })
        var members: [Int64: Member] = [:]
        for region in regions {
            if let entry = locked[region.rowID] {
                members[region.rowID] = Member(region: entry.regionID, stylePack: entry.stylePack, key: entry.key,
                                               rowID: region.rowID)
            } else {
                // A row no lock names, whose definition is not JSON, is counted under no style pack.
                let style = (try? JSONValue.parse(region.definition))?["style_url"]?.stringValue
                members[region.rowID] = Member(region: "row \(region.rowID)", stylePack: style, key: "row \(region.rowID)",
                                               rowID: region.rowID)
            }
        }
        self.init(sharing: sharing, members: members)
    }

    /// The JSON object.
    public var json: JSONValue {
        [
            "exact": .bool(isExact),
            "all": ["marginal": all.marginal.json, "shared": all.shared.json, "total": all.total.json],
            "regions": .array(regions.map { region in
                var object = Self.entryObject(region.entry, nameKey: "region")
                object["id"] = .string(region.id)
                object["stylePacks"] = .array(region.rows.map { row in
                    var rowObject = Self.entryObject(row.entry, nameKey: "key")
                    rowObject["key"] = .string(row.key)
                    rowObject["stylePack"] = row.stylePack.map { .string($0) } ?? .null
                    rowObject["rowId"] = row.rowID.map { .int(Int($0)) } ?? .null
                    return .object(rowObject)
                })
                return .object(object)
            }),
            "stylePacks": .array(stylePacks.map { pack in
                [
                    "id": .string(pack.id),
                    "marginal": pack.entry.marginal.json, "shared": pack.entry.shared.json, "total": pack.entry.total.json,
                    "kinds": .object(JSONObject(pack.kinds.map { ($0.kind.rawValue, $0.amount.json) })),
                ]
            }),
        ]
    }

    /// `marginal`, `shared`, `total` and `sharedWith` (each share named under `nameKey`).
    private static func entryObject(_ entry: Entry, nameKey: String) -> JSONObject {
        var object = JSONObject()
        object["marginal"] = entry.marginal.json
        object["shared"] = entry.shared.json
        object["total"] = entry.total.json
        object["sharedWith"] = .array(entry.sharedWith.map { share in
            var shareObject = share.amount.jsonObject
            shareObject[nameKey] = .string(share.name)
            return .object(shareObject)
        })
        return object
    }
}

extension ContentAmount {
    /// `{"bytes", "estimatedBytes", "tiles", "resources"}`.
    var json: JSONValue { .object(jsonObject) }

    var jsonObject: JSONObject {
        JSONObject([("bytes", .int(Int(bytes))), ("estimatedBytes", .int(Int(estimatedBytes))), ("tiles", .int(tiles)),
                    ("resources", .int(resources))])
    }
}
