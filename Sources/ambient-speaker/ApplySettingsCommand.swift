// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerHost
import SpeakerSystem

/// `apply-settings --settings FILE --root DIR [--error-file FILE] [--service-user NAME]`:
/// applies the SD card image's settings file to the root DIR (SettingsApplier).
/// Journal lines go to stdout with `<N>` priorities (the unit's SyslogLevelPrefix);
/// on an invalid file the reason, which never holds a secret, also goes to
/// the error file (mode 0600). Every line is `LogText.escaped`: text from the
/// file (a key name, a host) cannot add a line or reach the console as
/// control characters. Exit 0 applied, 1 invalid or not applied.
struct ApplySettingsCommand {
    let settingsPath: String
    let root: String
    let errorFile: String?
    let serviceUser: String?

    func run() -> Int32 {
        let name = settingsPath.split(separator: "/").last.map(String.init) ?? settingsPath
        do {
            let plan = try SettingsApplier(settingsPath: settingsPath, root: root, serviceUser: serviceUser).apply()
            for line in plan.notices { print("<6>\(LogText.escaped(line))") }
            for line in plan.warnings { print("<4>\(LogText.escaped(line))") }
            return 0
        } catch {
            for line in error.notices { print("<6>\(LogText.escaped(line))") }
            let message = LogText.escaped("\(name): \(error.description)")
            print("<3>\(message)")
            if let errorFile {
                do { try FileIO.writeAtomically(path: errorFile, text: message + "\n", mode: 0o600) } catch {
                    print("<3>cannot write \(errorFile): \(error)")
                }
            }
            return 1
        }
    }
}
