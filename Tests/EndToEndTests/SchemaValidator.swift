// SPDX-License-Identifier: Apache-2.0
import Foundation
import SpeakerProtocol

/// A small JSON Schema validator for the subset docs/asyncapi.json uses:
/// `type` (string or list; `integer` = integral number), `enum`, `const`,
/// `required`, `properties`, `additionalProperties` (bool or schema),
/// `items`, `minItems`, `minimum`, `maximum`, `exclusiveMinimum`,
/// `minLength`, `maxLength`, `pattern`, `oneOf` (exactly one) and local
/// `$ref`s. An unknown keyword is an error, so the document cannot silently
/// use something this does not check.
struct SchemaValidator {
    let document: JSONValue

    static let known: Set<String> = ["type", "enum", "const", "required", "properties", "additionalProperties", "items",
                                     "minItems", "minimum", "maximum", "exclusiveMinimum", "minLength", "maxLength",
                                     "pattern", "oneOf", "$ref", "description", "default"]

    /// `#/a/b/c` inside the document.
    func resolve(_ ref: String) -> JSONValue? {
        guard ref.hasPrefix("#/") else { return nil }
        var node: JSONValue? = document
        for part in ref.dropFirst(2).split(separator: "/") { node = node?[String(part)] }
        return node
    }

    /// Problems of `value` against `schema` (empty when valid), each with its JSON path.
    func problems(_ value: JSONValue, _ schema: JSONValue, path: String = "$") -> [String] {
        guard case .object(let keywords) = schema else { return ["\(path): schema is not an object"] }
        var out: [String] = []
        for (key, rule) in keywords {
            switch key {
            case "description", "default": break
            case "$ref":
                guard let target = rule.stringValue.flatMap(resolve) else { out.append("\(path): bad $ref \(rule.jsonText)"); continue }
                out += problems(value, target, path: path)
            case "type":
                let names: [String]
                if case .array(let list) = rule { names = list.compactMap(\.stringValue) } else { names = [rule.stringValue ?? ""] }
                if !names.contains(where: { Self.hasType(value, $0) }) { out.append("\(path): expected \(names), got \(value.jsonText)") }
            case "enum":
                if case .array(let options) = rule, !options.contains(value) { out.append("\(path): \(value.jsonText) not in \(rule.jsonText)") }
            case "const":
                if value != rule { out.append("\(path): expected \(rule.jsonText), got \(value.jsonText)") }
            case "required":
                if case .object = value, case .array(let names) = rule {
                    for name in names.compactMap(\.stringValue) where value[name] == nil { out.append("\(path): missing \(name)") }
                }
            case "properties":
                if case .object(let members) = value {
                    for (name, member) in members { if let sub = rule[name] { out += problems(member, sub, path: "\(path).\(name)") } }
                }
            case "additionalProperties":
                if case .object(let members) = value {
                    for (name, member) in members where schema["properties"]?[name] == nil {
                        if rule == .bool(false) { out.append("\(path): unexpected member \(name)") }
                        else if case .object = rule { out += problems(member, rule, path: "\(path).\(name)") }
                    }
                }
            case "items":
                if case .array(let items) = value {
                    for (i, item) in items.enumerated() { out += problems(item, rule, path: "\(path)[\(i)]") }
                }
            case "minItems":
                if case .array(let items) = value, let n = rule.numberValue, Double(items.count) < n { out.append("\(path): fewer than \(n) items") }
            case "minimum":
                if let v = value.numberValue, let n = rule.numberValue, v < n { out.append("\(path): \(v) < \(n)") }
            case "maximum":
                if let v = value.numberValue, let n = rule.numberValue, v > n { out.append("\(path): \(v) > \(n)") }
            case "exclusiveMinimum":
                if let v = value.numberValue, let n = rule.numberValue, v <= n { out.append("\(path): \(v) <= \(n)") }
            case "minLength":
                if let s = value.stringValue, let n = rule.numberValue, Double(s.count) < n { out.append("\(path): shorter than \(n)") }
            case "maxLength":
                if let s = value.stringValue, let n = rule.numberValue, Double(s.count) > n { out.append("\(path): longer than \(n)") }
            case "pattern":
                if let s = value.stringValue, let p = rule.stringValue {
                    if s.range(of: p, options: .regularExpression) == nil { out.append("\(path): \"\(s)\" does not match \(p)") }
                }
            case "oneOf":
                if case .array(let options) = rule {
                    let matching = options.filter { problems(value, $0, path: path).isEmpty }.count
                    if matching != 1 { out.append("\(path): matches \(matching) of oneOf, expected exactly 1: \(value.jsonText)") }
                }
            default:
                out.append("\(path): unsupported schema keyword \(key)")
            }
        }
        return out
    }

    static func hasType(_ v: JSONValue, _ name: String) -> Bool {
        switch (name, v) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object), ("number", .number): return true
        case ("integer", .number(let n)): return n == n.rounded()
        default: return false
        }
    }
}
