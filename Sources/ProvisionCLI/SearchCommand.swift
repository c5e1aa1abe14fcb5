import Foundation
import ProvisionFoundation
import ProvisionEngine
import ProvisionStore
import TileMath

/// `provision search QUERY`.
public struct SearchArguments: Equatable, Sendable, CommandArguments {
    public var store: String?
    /// What the user typed.
    public var query = ""
    /// `--near LON,LAT`.
    public var near: LngLat?
    /// `--region ID`.
    public var region: String?
    /// `--limit N`: 1 to `maxLimit`.
    public var limit = 10
    public var options = CommonOptions()

    /// The most answers `--limit` may ask for.
    static let maxLimit = 1000

    static let blank = SearchArguments()
    mutating func take(_ positionals: [String]) { query = positionals[0] }
    var invocation: Invocation { .search(self) }

    /// A query of no letter or digit (only punctuation or spaces) asks for nothing the index holds.
    func check() throws(UsageError) {
        if PlaceIndexDatabase.words(query).isEmpty {
            throw UsageError("the query '\(query)' has no letter or digit to search for")
        }
    }

    /// `--near LON,LAT`: a longitude from −180 to 180 and a latitude from −90 to 90.
    static func setNear(_ arguments: inout SearchArguments, _ text: String) throws(UsageError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, let lon = parts[0], let lat = parts[1], (-180...180).contains(lon), (-90...90).contains(lat) else {
            throw UsageError("--near must be LON,LAT in degrees (longitude −180…180 first, then latitude −90…90), not '\(text)'")
        }
        arguments.near = LngLat(lng: lon, lat: lat)
    }

    /// `--limit N`: a whole number from 1 to `maxLimit`.
    static func setLimit(_ arguments: inout SearchArguments, _ text: String) throws(UsageError) {
        guard let limit = Int(text), (1...maxLimit).contains(limit) else {
            throw UsageError("--limit must be a whole number from 1 to \(maxLimit), not '\(text)'")
        }
        arguments.limit = limit
    }
}

/// `provision search`: the places of the store's search packs a query finds.
struct SearchCommand {
    let arguments: SearchArguments
    let view: CommandView

    func run() throws(ProvisionError) -> ExitCode {
        let report = try SearchRun(store: arguments.store, query: arguments.query, near: arguments.near, region: arguments.region,
                                   limit: arguments.limit).run()
        view.show { $0.search(report) }
        return .success
    }
}
