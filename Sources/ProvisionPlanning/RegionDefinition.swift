import Foundation
import ProvisionFoundation
import ProvisionModel
import TileMath

/// The `definition` and `description` MapLibre Native stores for an offline region.
public enum RegionDefinition {
    /// MapLibre's definition JSON for a job region drawn with a style.
    ///
    /// Keys come in the order MapLibre's writer uses (style_url, min_zoom, max_zoom, pixel_ratio,
    /// include_ideographs, then bounds or geometry), and every number is written as a double
    /// (`10.0`): MapLibre's reader rejects integers there.
    public static func json(region: Region, styleURL: String, pixelRatio: Int, includeIdeographs: Bool) -> Data {
        var object = JSONObject()
        object["style_url"] = .string(styleURL)
        object["min_zoom"] = .double(Double(region.minZoom))
        object["max_zoom"] = .double(Double(region.maxZoom))
        object["pixel_ratio"] = .double(Double(pixelRatio))
        object["include_ideographs"] = .bool(includeIdeographs)
        if case .bbox(let box) = region.area {
            object["bounds"] = .array([box.south, box.west, box.north, box.east].map { .double($0) })
        } else if let geoJSON = region.area.geoJSON {
            object["geometry"] = doublesEverywhere(geoJSON)
        }
        return JSONValue.object(object).data(.compact)
    }

    /// The description bytes: the region metadata as compact UTF-8 JSON, in the job file's key order.
    public static func description(region: Region) -> Data {
        JSONValue.object(region.metadata).data(.compact)
    }

    /// Rewrites every integer in coordinates as a double, as MapLibre's writer would emit them.
    static func doublesEverywhere(_ value: JSONValue) -> JSONValue {
        switch value {
        case .int(let i): return .double(Double(i))
        case .array(let items): return .array(items.map(doublesEverywhere))
        case .object(let object):
            var out = JSONObject()
            for (key, member) in object.members {
                out[key] = key == "type" ? member : doublesEverywhere(member)
            }
            return .object(out)
        default: return value
        }
    }
}
