import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An element of a parsed XML document (libxml2 through Foundation's `XMLParser`): what the
/// tests read the coverage pictures' markup with, as a script would.
public final class MarkupElement {
    /// The element's name (`rect`).
    public let name: String
    /// Its attributes by name.
    public let attributes: [String: String]
    /// Its child elements, in order.
    public private(set) var children: [MarkupElement] = []
    /// The text directly inside it.
    public var text = ""

    /// An element without children yet.
    public init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
    }

    /// This element and every element below it, in document order.
    public var all: [MarkupElement] { [self] + children.flatMap(\.all) }

    /// Every element below (and including) this one named `name`.
    public func elements(_ name: String) -> [MarkupElement] { all.filter { $0.name == name } }

    /// The text of this element and every element below it.
    public var allText: String { text + children.map(\.allText).joined() }

    fileprivate func append(_ child: MarkupElement) { children.append(child) }

    /// Parses a well-formed document; throws with the parser's line and message when it is not.
    public static func parse(_ data: Data) throws -> MarkupElement {
        let delegate = Builder()
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        guard parser.parse(), let root = delegate.root else {
            throw MarkupError(message: "not well-formed XML at line \(parser.lineNumber): "
                           + "\(parser.parserError.map { String(describing: $0) } ?? "no root element")")
        }
        return root
    }

    /// Why a document did not parse.
    public struct MarkupError: Error, CustomStringConvertible {
        /// The parser's line and message.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: MarkupElement?
        var stack: [MarkupElement] = []

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            let element = MarkupElement(name: elementName, attributes: attributeDict)
            stack.last?.append(element)
            if root == nil { root = element }
            stack.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            stack.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }
    }
}
