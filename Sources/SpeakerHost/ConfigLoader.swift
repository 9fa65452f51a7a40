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
    /// Where `clock.timeZone` names are looked up, and the system's zone file.
    let zoneDirectory: String
    let localtime: String

    public init(logger: Logger, zoneDirectory: String = "/usr/share/zoneinfo", localtime: String = "/etc/localtime") {
        self.logger = logger
        self.zoneDirectory = zoneDirectory
        self.localtime = localtime
    }

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
                return withZone(Self.check { () throws(ConfigError) in try decoder.decode(JSONValue.object([])) })
            }
            return .failure(ConfigError(path: "(file)", message: "cannot read \(path): \(error.message)"))
        }
        return withZone(Self.check { () throws(ConfigError) in try decoder.decode(bytes) })
    }

    /// Fills in `clock.zone`: the TZif file of `clock.timeZone` under
    /// `zoneDirectory`, or the system's `/etc/localtime` (UTC, with a notice,
    /// when it is missing or unreadable). A named zone that cannot be read
    /// is a config error naming the key.
    func withZone(_ result: Result<SpeakerConfig, ConfigError>) -> Result<SpeakerConfig, ConfigError> {
        guard case .success(var config) = result else { return result }
        if let name = config.clock.timeZone {
            let file = zoneDirectory + "/" + name
            do {
                config.clock.zone = try TimeZoneRules(name: name, tzif: FileIO.read(path: file, maxBytes: 1 << 20))
            } catch let error as SystemError {
                return .failure(ConfigError(path: "clock.timeZone", message: "no zone \(JSONValue.string(name).jsonText): cannot read \(file): \(error.message)"))
            } catch {
                return .failure(ConfigError(path: "clock.timeZone", message: "\(file) is not a usable zone file: \(error)"))
            }
        } else {
            do {
                config.clock.zone = try TimeZoneRules(name: "localtime", tzif: FileIO.read(path: localtime, maxBytes: 1 << 20))
            } catch {
                logger.notice("clock: cannot use \(localtime) (\(error)); schedules and the night cap use UTC")
                config.clock.zone = .utc
            }
        }
        return .success(config)
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
