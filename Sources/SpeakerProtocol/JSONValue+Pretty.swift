// SPDX-License-Identifier: Apache-2.0
extension JSONValue {
    /// Indented JSON for people (`check-config`).
    public var prettyText: String {
        func render(_ v: JSONValue, _ indent: String) -> String {
            switch v {
            case .object(let members) where !members.isEmpty:
                let inner = indent + "  "
                return "{\n" + members.map { "\(inner)\(JSONValue.string($0.key).jsonText): \(render($0.value, inner))" }
                    .joined(separator: ",\n") + "\n\(indent)}"
            case .array(let items) where !items.isEmpty:
                let inner = indent + "  "
                return "[\n" + items.map { inner + render($0, inner) }.joined(separator: ",\n") + "\n\(indent)]"
            default:
                return v.jsonText
            }
        }
        return render(self, "")
    }
}
