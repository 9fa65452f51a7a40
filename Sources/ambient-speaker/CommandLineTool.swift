// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerSystem
import SpeakerProtocol
import Ambience
import SpeakerHost

/// The `ambient-speaker` command line (config-and-cli.md): parses the
/// subcommand and its flags and runs it. Exit codes: 0 success, 1 bad
/// configuration or arguments, 2 runtime failure after start-up.
struct CommandLineTool {
    /// The release version (Version.swift, written from CHANGELOG.md).
    static let version = ReleaseVersion.version
    static let defaultConfigPath = "/etc/ambient-speaker/config.json"

    let arguments: [String]

    /// A usage problem: names the flag or argument and what was expected.
    struct UsageError: Error { var message: String }

    func run() -> Int32 {
        var args = ArgumentList(arguments)
        do {
            let level = try args.value("--log-level").map { name throws(UsageError) -> LogLevel in
                guard let l = LogLevel(name: name) else {
                    throw UsageError(message: "--log-level: expected error, warning, notice, info or debug, got \"\(name)\"")
                }
                return l
            } ?? .info
            let logger = Logger(component: "main", threshold: level, backend: StderrLogBackend())
            if args.flag("--version") { print("ambient-speaker \(Self.version)"); return 0 }
            let command = args.next() ?? "run"
            if command == "--help" || command == "-h" || command == "help" { print(Help.general); return 0 }
            if args.flag("--help") || args.flag("-h") { print(Help.text(for: command) ?? Help.general); return 0 }
            switch command {
            case "run":
                let path = try args.value("--config")
                try args.finish()
                return Launch.run(configPath: path, demo: false, logger: logger)
            case "demo":
                let path = try args.value("--config")
                try args.finish()
                return Launch.run(configPath: path, demo: true, logger: logger)
            case "check-config":
                guard let path = args.next() else { throw UsageError(message: "check-config: expected a FILE argument") }
                try args.finish()
                return checkConfig(path: path, logger: logger)
            case "apply-settings":
                guard let settings = try args.value("--settings") else { throw UsageError(message: "apply-settings: --settings FILE is required") }
                guard let root = try args.value("--root") else { throw UsageError(message: "apply-settings: --root DIR is required (/ on the Pi)") }
                let errorFile = try args.value("--error-file")
                let user = try args.value("--service-user")
                try args.finish()
                return ApplySettingsCommand(settingsPath: settings, root: root, errorFile: errorFile, serviceUser: user).run()
            case "sounds":
                let path = try args.value("--config")
                try args.finish()
                return SoundsCommand.run(configPath: path, logger: logger)
            case "config-reference":
                let check = args.flag("--check")
                try args.finish()
                return Self.configReference(check: check)
            case "devices":
                try args.finish()
                return DevicesCommand.run(logger: logger)
            case "render":
                guard let sound = args.next() else { throw UsageError(message: "render: expected a SOUND argument (see `ambient-speaker sounds`)") }
                guard let secondsText = try args.value("--seconds") else { throw UsageError(message: "render: --seconds N is required") }
                guard let seconds = Double(secondsText), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
                    throw UsageError(message: "--seconds: expected a number of seconds in (0, 86400], got \"\(secondsText)\"")
                }
                guard let output = try args.value("--output") else { throw UsageError(message: "render: --output PATH is required") }
                let levelText = try args.value("--level")
                var level = 1.0
                if let levelText {
                    guard let l = Double(levelText), l >= 0, l <= 1 else {
                        throw UsageError(message: "--level: expected a number in [0, 1], got \"\(levelText)\"")
                    }
                    level = l
                }
                let configPath = try args.value("--config")
                try args.finish()
                return RenderCommand(sound: sound, seconds: seconds, output: output, level: level, configPath: configPath, logger: logger).run()
            case "watch":
                let broker = try args.value("--broker")
                let prefix = try args.value("--prefix")
                var devices: [String] = []
                while let device = try args.value("--device") { devices.append(device) }
                let post = try args.value("--post")
                try args.finish()
                return try WatchCommand(broker: broker, prefix: prefix, devices: devices, post: post, logger: logger).run()
            default:
                throw UsageError(message: "unknown command \"\(command)\"; expected run, demo, check-config, apply-settings, config-reference, devices, sounds, render or watch (see --help)")
            }
        } catch {
            StandardError.write("ambient-speaker: \(error.message)\n")
            return 1
        }
    }

    /// `config-reference [--check]`: prints docs/configuration.md, or (`--check`)
    /// every key the model and the reference table disagree on (exit 1 if any).
    private static func configReference(check: Bool) -> Int32 {
        guard check else { print(ConfigReference.markdown(), terminator: ""); return 0 }
        let problems = ConfigReference.problems()
        for p in problems { StandardError.write("config-reference: \(p)\n") }
        return problems.isEmpty ? 0 : 1
    }

    /// `check-config FILE`: validate and print the resolved config (exit 0), or the error (exit 1).
    private func checkConfig(path: String, logger: Logger) -> Int32 {
        switch ConfigLoader(logger: logger).load(path: path, required: true) {
        case .success(let config):
            print(config.json.prettyText)
            return 0
        case .failure(let error):
            StandardError.write("\(path): \(error)\n")
            return 1
        }
    }
}

/// The arguments still to be read, flag by flag.
struct ArgumentList {
    private var items: [String]

    init(_ items: [String]) { self.items = items }

    /// The next positional argument (not starting with `--`).
    mutating func next() -> String? {
        guard let i = items.firstIndex(where: { !$0.hasPrefix("--") }) else { return nil }
        return items.remove(at: i)
    }

    /// Whether `name` was given (and consumes it).
    mutating func flag(_ name: String) -> Bool {
        guard let i = items.firstIndex(of: name) else { return false }
        items.remove(at: i)
        return true
    }

    /// The value of `--name VALUE` or `--name=VALUE`, or nil when absent.
    mutating func value(_ name: String) throws(CommandLineTool.UsageError) -> String? {
        if let i = items.firstIndex(where: { $0.hasPrefix(name + "=") }) {
            return String(items.remove(at: i).dropFirst(name.count + 1))
        }
        guard let i = items.firstIndex(of: name) else { return nil }
        guard i + 1 < items.count else { throw .init(message: "\(name): expected a value") }
        let v = items[i + 1]
        items.removeSubrange(i...(i + 1))
        return v
    }

    /// Fails if anything was not understood.
    func finish() throws(CommandLineTool.UsageError) {
        if let extra = items.first { throw .init(message: "unexpected argument \"\(extra)\" (see --help)") }
    }
}

extension Error {
    /// The human message of any error the tool reports.
    var message: String {
        if let e = self as? CommandLineTool.UsageError { return e.message }
        return "\(self)"
    }
}
