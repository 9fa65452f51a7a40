// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// What the speaker runs is the applied settings document: the previous
/// applied document with the new file's keys over it. A key the file leaves
/// out (or sets to null at the top level) keeps its applied value, so a file
/// holding only `{"hostname": "renamed"}` renames the Pi and changes nothing
/// else. Objects (`device`, `volume`, `mqtt`, `speaker`) merge member by
/// member; `wifi` is one network and is replaced whole; lists replace. The
/// document is stored (`SettingsPaths.appliedSettings`) with its secrets as
/// null: null keeps the saved key and password. Pure; any thread.
public enum AppliedSettings {
    /// The changes the settings file `file` makes to a root whose previous
    /// applied document is `previous` (nil: none yet) and whose files look
    /// like `view`; the new applied document is one of them. `file` is
    /// checked on its own first, so an error names the file's own key.
    public static func plan(file: JSONValue, previous: JSONValue?, view: SettingsSystemView) throws(ConfigError) -> SettingsPlan {
        let decoder = ImageSettingsDecoder()
        _ = try decoder.decode(file)
        let document = merged(previous: previous ?? .object([]), file: file)
        var plan = try decoder.decode(document).plan(raw: file, view: view)
        plan.changes.append(.write(path: SettingsPaths.appliedSettings, bytes: Array((stored(document).prettyText + "\n").utf8),
                                   mode: 0o600, owner: .root))
        return plan
    }

    /// The previous document with the file's members over it (see the type).
    static func merged(previous: JSONValue, file: JSONValue) -> JSONValue {
        guard case .object(var members) = previous, case .object(let new) = file else { return file }
        for member in new where !member.key.hasPrefix("_") && member.value != .null {
            if let i = members.firstIndex(where: { $0.key == member.key }) {
                members[i].value = member.key == "wifi" ? member.value : JSONMerge.merge(members[i].value, member.value)
            } else {
                members.append(member)
            }
        }
        return .object(members)
    }

    /// The document as stored: a Wi-Fi passphrase and a broker password that
    /// hold a value become null (the saved key and password files keep them).
    static func stored(_ document: JSONValue) -> JSONValue {
        guard case .object(var members) = document else { return document }
        for (section, key) in [("wifi", "passphrase"), ("mqtt", "password")] {
            guard let i = members.firstIndex(where: { $0.key == section }), case .object(var inner) = members[i].value,
                  let j = inner.firstIndex(where: { $0.key == key }), let s = inner[j].value.stringValue, !s.isEmpty else { continue }
            inner[j].value = .null
            members[i].value = .object(inner)
        }
        return .object(members)
    }
}
