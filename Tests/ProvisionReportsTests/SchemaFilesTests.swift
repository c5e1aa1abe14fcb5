import Foundation
import ProvisionFoundation
import ProvisionModel
import XCTest

/// Keeps the output schemas complete and consistent with one another.
final class SchemaFilesTests: XCTestCase {
    func testEverySchemaHasItsHeader() throws {
        for name in outputSchemaNames {
            let schema = try loadSchema(name)
            XCTAssertEqual(schema["$schema"], "https://json-schema.org/draft/2020-12/schema", name)
            XCTAssertEqual(schema["$id"]?.stringValue?.hasSuffix("/Jobs/schema/\(name).schema.json"), true, name)
            XCTAssertNotNil(schema["title"]?.stringValue, name)
            XCTAssertNotNil(schema["description"]?.stringValue, name)
            XCTAssertEqual(schema["type"], "object", name)
        }
    }

    /// Every property is described; every object lists its properties, forbids others and
    /// requires only properties it lists; every `$ref` resolves.
    func testEveryObjectIsClosedAndEveryPropertyDescribed() throws {
        for name in outputSchemaNames {
            let schema = try loadSchema(name)
            var problems: [String] = []
            walk(schema, path: "#") { node, path in
                if let properties = node["properties"]?.objectValue {
                    if node["additionalProperties"] != .bool(false), !(name == "events" && path == "#") {
                        problems.append("\(path): additionalProperties is not false")
                    }
                    for required in node["required"]?.arrayValue ?? [] where properties[required.stringValue ?? ""] == nil {
                        problems.append("\(path): requires unlisted \(required.serialized())")
                    }
                    for (key, property) in properties.members where property["description"]?.stringValue == nil {
                        problems.append("\(path)/properties/\(key): no description")
                    }
                }
                if let ref = node["$ref"]?.stringValue {
                    let target = ref.split(separator: "/").dropFirst().reduce(Optional(schema)) { $0?[String($1)] }
                    if !ref.hasPrefix("#/$defs/") || target == nil { problems.append("\(path): $ref \(ref) does not resolve") }
                }
            }
            XCTAssertEqual(problems, [], name)
        }
    }

    /// The validator knows every keyword the schemas use, so none is silently skipped.
    func testSchemasUseOnlyKeywordsTheValidatorChecks() throws {
        for name in outputSchemaNames + ["job"] {
            let schema = try loadSchema(name)
            var unknown: Set<String> = []
            walk(schema, path: "#") { node, _ in
                for key in node.objectValue?.keys ?? [] where !SchemaValidator.annotations.contains(key)
                    && !SchemaValidator.assertions.contains(key) {
                    unknown.insert(key)
                }
            }
            XCTAssertEqual(unknown, [], name)
        }
    }

    /// Shapes written by the same code are described by identical definitions.
    func testSharedDefinitionsAreIdentical() throws {
        let plan = try loadSchema("plan"), report = try loadSchema("report"), lock = try loadSchema("lock")
        for def in ["job", "changeCounts", "summary"] {
            XCTAssertNotNil(plan["$defs"]?[def], def)
            XCTAssertEqual(plan["$defs"]?[def], report["$defs"]?[def], "report $defs/\(def)")
        }
        XCTAssertEqual(plan["$defs"]?["job"], lock["$defs"]?["job"])
        // The footprint is written by one piece of code for plans, reports and audits.
        let audit = try loadSchema("audit")
        let footprintDefs = plan["$defs"]?.objectValue?.keys.filter { $0.hasPrefix("footprint") } ?? []
        XCTAssertEqual(footprintDefs.count, 7)
        for def in footprintDefs {
            XCTAssertEqual(plan["$defs"]?[def], report["$defs"]?[def], "report $defs/\(def)")
            XCTAssertEqual(plan["$defs"]?[def], audit["$defs"]?[def], "audit $defs/\(def)")
        }
        for schema in [plan, report, audit] { XCTAssertEqual(schema["properties"]?["footprint"]?["oneOf"], plan["properties"]?["footprint"]?["oneOf"]) }
        let lockSource = lock["$defs"]?["source"]?["properties"]?.objectValue
        let planSource = plan["$defs"]?["source"]?["properties"]?.objectValue
        XCTAssertEqual(lockSource.map { $0.keys.filter { $0 != "tileJSONDigest" } }, planSource?.keys)
        for key in planSource?.keys ?? [] { XCTAssertEqual(lockSource?[key], planSource?[key], "lock source \(key)") }
        XCTAssertEqual(try loadSchema("error")["$defs"]?["diagnostic"], try loadSchema("validation")["$defs"]?["diagnostic"])
        // One Attribution value is written by the lock, the audit and a bundle's attribution.json.
        XCTAssertNotNil(lock["$defs"]?["attribution"])
        for name in ["audit", "attribution"] { XCTAssertEqual(try loadSchema(name)["$defs"]?["attribution"], lock["$defs"]?["attribution"], name) }
    }

    /// The validator agrees with the job schema on the job files the loader accepts.
    func testEveryJobFileMatchesTheJobSchema() throws {
        let directory = repositoryRoot.appendingPathComponent("Jobs")
        let schema = try validator("job")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
        XCTAssertGreaterThanOrEqual(files.count, 6)
        for name in files {
            XCTAssertEqual(schema.errors(in: try JSONValue.parse(Data(contentsOf: directory.appendingPathComponent(name)))), [], name)
        }
        let job = try JSONValue.parse(Data(contentsOf: directory.appendingPathComponent("cities.json")))
        XCTAssertFalse(schema.isValid(job.setting("/regions/0/zoom", to: [14, 10, 3])))
        XCTAssertFalse(schema.isValid(job.setting("/version", to: 2)))
    }

    /// Calls `visit` with every subschema of `node` (not with data such as `enum` values or
    /// the maps that hold subschemas).
    private func walk(_ node: JSONValue, path: String, _ visit: (JSONValue, String) -> Void) {
        guard let object = node.objectValue else { return }
        visit(node, path)
        for (key, value) in object.members {
            switch key {
            case "properties", "$defs":
                for (name, schema) in value.objectValue?.members ?? [] { walk(schema, path: "\(path)/\(key)/\(name)", visit) }
            case "items", "additionalProperties", "propertyNames":
                walk(value, path: "\(path)/\(key)", visit)
            case "oneOf", "anyOf", "allOf", "prefixItems":
                for (i, schema) in (value.arrayValue ?? []).enumerated() { walk(schema, path: "\(path)/\(key)/\(i)", visit) }
            default:
                break
            }
        }
    }
}
