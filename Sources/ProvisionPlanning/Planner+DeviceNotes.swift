import ProvisionFoundation
import ProvisionModel
import TileMath

extension Planner {
    /// Refuses a bundle whose `mapbox://` tiles a device would refuse to side-load.
    ///
    /// Why at plan time: MapLibre Native's merge counts the `mapbox://` tiles the device would hold
    /// and aborts the whole merge past `offlineMapboxTileCountLimit` (6,000 by default), so an
    /// over-limit bundle ships and then never loads. The count here is the bundle's own; a device
    /// that already holds other `mapbox://` tiles counts those too.
    static func checkMapboxTileLimit(_ count: Int, job: Job) throws {
        let limit = job.limits.mapboxTiles ?? Limits.defaultMapboxTiles
        guard count > limit else { return }
        let origin = job.limits.mapboxTiles == nil ? "MapLibre's default offlineMapboxTileCountLimit" : "limits.mapboxTiles"
        throw PlanError.limitExceeded(
            "the bundle would hold \(grouped(count)) mapbox:// tiles, over \(origin) of \(grouped(limit)): devices refuse to side-load it "
                + "(and also count the mapbox:// tiles they already hold). Shrink the regions or zooms, or raise the "
                + "app's limit (iOS MLNOfflineStorage.setMaximumAllowedMapboxTiles, Android "
                + "OfflineManager.setOfflineMapboxTileCountLimit) and set limits.mapboxTiles to match")
    }
}

extension Planner {
    /// The note for a region row whose definition or description changed: devices merge regions
    /// only on equal definition and description, so one holding the previous bundle gets a second
    /// region, and keeps the first one's tiles until the app deletes it.
    static func secondRegionNote(_ row: RegionPlan, definitionChanged: Bool, storedTiles: Int) -> PlanNote {
        let what = definitionChanged ? "definition (geometry, zooms, style or pixel ratio)" : "description (metadata)"
        return PlanNote(subject: "region '\(row.regionID)'",
                        message: "its \(what) changed: a device that merges this bundle over the previous one adds a "
                            + "second region (MapLibre merges regions only on equal definition and description) and keeps "
                            + "the old one with its \(plural(storedTiles, "tile")) until the app deletes it")
    }
}

extension Planner {
    /// Notes for regions that reach past Web Mercator's latitude limit (±85.0511°), where covers clamp.
    static func latitudeNotes(_ job: Job) -> [PlanNote] {
        job.regions.compactMap { region in
            let latitudes: [Double]
            switch region.area {
            case .bbox(let box): latitudes = [box.south, box.north]
            case .geometry(let polygons, _): latitudes = polygons.flatMap { $0.rings.flatMap { $0.map(\.lat) } }
            case .paths(let lines, let points, _): latitudes = lines.flatMap { $0.map(\.lat) } + points.map(\.lat)
            }
            guard let extreme = latitudes.map(abs).max(), extreme > WebMercator.maxLatitude else { return nil }
            return PlanNote(subject: "region '\(region.id)'",
                            message: "it reaches latitude \(extreme)°, beyond Web Mercator's limit of ±85.0511°: "
                                + "its cover is clamped there (no map has tiles past it)")
        }
    }
}
