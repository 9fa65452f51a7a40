// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerSystem
import SpeakerProtocol

/// Loads the configuration: reads the file (or uses the built-in defaults),
/// validates it with `ConfigDecoder`, then runs the checks that need the file
/// system (a password file must not be world-readable).
public struct ConfigLoader {
    let logger: Logger

    public init(logger: Logger) { self.logger = logger }

    /// `required`: a missing file is an error (true for an explicit `--config`
    /// or `check-config`); otherwise the built-in defaults are used.
    public func load(path: String, required: Bool) -> Result<SpeakerConfig, ConfigError> {
        let decoder = ConfigDecoder(hostname: SystemFacts.hostname())
        let bytes: [UInt8]
        do {
            bytes = try FileIO.read(path: path, maxBytes: 256 * 1024)
        } catch {
            if error.errno == ENOENT && !required {
                logger.info("no config file at \(path); using built-in defaults")
                return Self.check { () throws(ConfigError) in try decoder.decode(JSONValue.object([])) }
            }
            return .failure(ConfigError(path: "(file)", message: "cannot read \(path): \(error.message)"))
        }
        return Self.check { () throws(ConfigError) in try decoder.decode(bytes) }
    }

    private static func check(_ decoded: () throws(ConfigError) -> SpeakerConfig) -> Result<SpeakerConfig, ConfigError> {
        do {
            let config = try decoded()
            if let passwordFile = config.mqtt.passwordFile {
                let mode: mode_t
                do { mode = try SystemFacts.fileMode(path: passwordFile) } catch {
                    return .failure(ConfigError(path: "mqtt.passwordFile", message: "cannot read \(passwordFile): \(error.message)"))
                }
                if mode & 0o004 != 0 {
                    return .failure(ConfigError(path: "mqtt.passwordFile",
                                                message: "\(passwordFile) is world-readable; run chmod o-r on it"))
                }
            }
            return .success(config)
        } catch {
            return .failure(error)
        }
    }
}

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
