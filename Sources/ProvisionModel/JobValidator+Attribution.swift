import Foundation
import ProvisionFoundation

/// The job's own `attribution`: its text, or an object with its text, licence and URL.
extension JobValidator {
    /// The job's attribution, credited to the job `name`; nil after reporting a problem.
    mutating func attribution(_ value: JSONValue, name: String) -> Attribution? {
        if value.stringValue != nil {
            return collector.string(value, at: "/attribution", nonEmpty: true).map { Attribution(kind: .job, source: name, text: $0) }
        }
        let expected = "the attribution text or an object with \"text\", \"licence\" and \"url\""
        guard let object = collector.object(value, at: "/attribution", expected: expected) else { return nil }
        collector.checkKeys(object, at: "/attribution", allowed: JobFileKeys.attribution, required: JobFileKeys.requiredAttribution)
        let text = object["text"].flatMap { collector.string($0, at: "/attribution/text", nonEmpty: true) }
        let licence = object["licence"].map { collector.string($0, at: "/attribution/licence", nonEmpty: true) }
        let url = object["url"].map { remoteURL($0, at: "/attribution/url", what: "a URL") }
        guard let text, licence.map({ $0 != nil }) ?? true, url.map({ $0 != nil }) ?? true else { return nil }
        return Attribution(kind: .job, source: name, text: text, licence: licence ?? nil, url: url ?? nil)
    }

    /// `limits.requireAttribution`: true or false, or nil after reporting.
    mutating func requireAttribution(_ value: JSONValue, at pointer: String) -> Bool? {
        if case .bool(let flag) = value { return flag }
        collector.report(pointer, "expected true or false, found \(DiagnosticCollector.found(value))")
        return nil
    }
}
