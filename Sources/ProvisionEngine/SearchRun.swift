import Foundation
import ProvisionStore
import TileMath

/// `provision search`: the places of a store's search packs (`search/<pack>.db`) a query finds,
/// asked as an app asks (`PlaceIndexDatabase.searchSQL`), every pack searched and the answers
/// merged in the same order. Reads the packs only.
public struct SearchRun: Sendable {
    /// `--store`; `./store` without it.
    public var store: String?
    /// What the user typed.
    public var query: String
    /// `--near LON,LAT`: where the user is; answers of equal standing come nearest first.
    public var near: LngLat?
    /// `--region ID`: only places lying in this region.
    public var region: String?
    /// `--limit N`: the most answers.
    public var limit: Int

    /// The folder of a store that holds its search packs.
    public static let directoryName = "search"
    /// The ending of a pack's file name.
    public static let fileExtension = "db"

    public init(store: String?, query: String, near: LngLat?, region: String?, limit: Int) {
        self.store = store
        self.query = query
        self.near = near
        self.region = region
        self.limit = limit
    }

    /// Searches every pack of the store: missing packs are `missingInput` (66) naming the store, a
    /// file that is not a readable search pack `invalidJob` (65) naming the file.
    public func run() throws(ProvisionError) -> SearchReport {
        let path = StorePath(option: store, job: nil)
        let packs = try packFiles(path)
        var results: [SearchReport.Result] = []
        for pack in packs {
            let found: [PlaceSearchResult]
            do {
                found = try PlaceIndexDatabase.search(pack.url, query: query, near: near, region: region, limit: limit)
            } catch {
                throw ProvisionError(.invalidJob, "cannot search the pack \(pack.url.path): \(Self.reason(error)); "
                                     + "only writing the pack again mends it",
                                     cause: error)
            }
            results += found.map { SearchReport.Result(pack: pack.name, place: $0, distance: near.map($0.position.metres(to:))) }
        }
        results.sort { a, b in
            a.place.ranks(before: b.place) || (!b.place.ranks(before: a.place) && a.pack < b.pack)
        }
        return SearchReport(store: path.display, query: query, words: PlaceIndexDatabase.words(query), near: near, region: region,
                            limit: limit, packs: packs.map(\.name), results: Array(results.prefix(limit)))
    }

    /// The store's packs, in name order.
    func packFiles(_ path: StorePath) throws(ProvisionError) -> [(name: String, url: URL)] {
        let directory = path.url.appendingPathComponent(Self.directoryName)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path.url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ProvisionError(.missingInput, "no store at \(path.display): no such directory")
        }
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ProvisionError(.missingInput, "the store at \(path.display) has no search packs: \(Self.directoryName)/ is missing "
                                 + "(a job's searchPacks are written there by apply)")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw ProvisionError(.missingInput, "cannot list the search packs in \(directory.path): \(describe(error))", cause: error)
        }
        let packs = names.filter { $0.hasSuffix("." + Self.fileExtension) && !$0.hasPrefix(".") }.sorted().map { name in
            (name: String(name.dropLast(Self.fileExtension.count + 1)), url: directory.appendingPathComponent(name))
        }
        guard !packs.isEmpty else {
            throw ProvisionError(.missingInput, "the store at \(path.display) has no search packs: "
                                 + "\(Self.directoryName)/ holds no <pack>.\(Self.fileExtension) file")
        }
        return packs
    }

    /// SQLite's or the pack check's words, without the path the message already gives nor the
    /// statement SQLite was running (`--verbose` shows the whole error).
    static func reason(_ error: Error) -> String {
        guard let store = ProvisionError.storeFailure(error) else { return String(describing: error) }
        let said = store.message.components(separatedBy: " in \"").first ?? store.message
        return store.code == .corrupt ? "the file is damaged or not an SQLite database (SQLite reports: \(said))" : said
    }
}

extension LngLat {
    /// Metres along the great circle to `other` (haversine on a sphere of the mean Earth radius).
    func metres(to other: LngLat) -> Double {
        let radius = 6_371_008.8, radians = Double.pi / 180
        let dLat = (other.lat - lat) * radians, dLng = (other.lng - lng) * radians
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(lat * radians) * cos(other.lat * radians) * sin(dLng / 2) * sin(dLng / 2)
        return 2 * radius * asin(min(1, h.squareRoot()))
    }
}
