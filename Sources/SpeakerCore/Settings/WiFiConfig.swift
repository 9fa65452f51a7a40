// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// wpa_supplicant's config for `wlan0`, written from the settings' `wifi`.
/// The SSID is written only as hex (`ssid=6869…`), so no byte of it can
/// start a line or a directive; the key only as the derived PSK. Pure.
enum WiFiConfig {
    struct Result {
        var changes: [FileChange] = []
        var notices: [String] = []
    }

    /// The saved network of a config this applier (or the shell one before it)
    /// wrote: its SSID bytes and PSK hex, when it has both.
    struct SavedNetwork: Equatable {
        var ssid: [UInt8]
        var psk: String?
    }

    static func changes(_ wifi: ImageSettings.WiFi, saved: String?) throws(ConfigError) -> Result {
        var result = Result()
        switch wifi {
        case .unchanged:
            break
        case .off:
            if saved != nil {
                result.changes = [.remove(path: SettingsPaths.wpaConfig), .remove(path: SettingsPaths.wpaWants)]
                result.notices = ["wifi: off (no ssid)"]
            }
        case .network(let country, let ssid, let key):
            let network: String
            switch key {
            case .passphrase(let passphrase):
                network = "\tssid=\(WPAKey.hex(ssid))\n\tpsk=\(WPAKey.hex(WPAKey.derive(passphrase: passphrase, ssid: ssid)))\n"
            case .psk(let psk):
                network = "\tssid=\(WPAKey.hex(ssid))\n\tpsk=\(WPAKey.hex(psk))\n"
            case .keepSaved:
                guard let old = saved.flatMap(parse), old.ssid == ssid, let psk = old.psk else {
                    throw ConfigError(path: "wifi.passphrase", message: "null keeps the saved key, but no key is saved for the SSID \(JSONValue.string(String(decoding: ssid, as: UTF8.self)).jsonText); give the passphrase (or set wifi.open to true for an open network)")
                }
                network = "\tssid=\(WPAKey.hex(ssid))\n\tpsk=\(psk)\n"
            case .open:
                network = "\tssid=\(WPAKey.hex(ssid))\n\tkey_mgmt=NONE\n"
            }
            let text = "# Written by ambient-speaker apply-settings from ambient-speaker.json.\n"
                + "ctrl_interface=DIR=/run/wpa_supplicant GROUP=netdev\nupdate_config=0\ncountry=\(country)\nnetwork={\n\(network)}\n"
            result.changes = [.write(path: SettingsPaths.wpaConfig, bytes: Array(text.utf8), mode: 0o600, owner: .root),
                              .symlink(path: SettingsPaths.wpaWants, target: SettingsPaths.wpaUnit)]
            let shown = JSONValue.string(String(decoding: ssid, as: UTF8.self)).jsonText
            result.notices = ["wifi: \(shown) (country \(country), \(key == .open ? "open network" : "WPA2 personal"))"]
        }
        return result
    }

    /// The `ssid=` (hex) and `psk=` (64 hex) lines of the one network block.
    static func parse(_ text: String) -> SavedNetwork? {
        var ssid: [UInt8]?
        var psk: String?
        var inside = false
        for raw in text.split(separator: "\n") {
            let line = raw.drop(while: { $0 == " " || $0 == "\t" })
            if line.hasPrefix("network={") { inside = true; continue }
            if line.hasPrefix("}") { inside = false; continue }
            guard inside else { continue }
            if line.hasPrefix("ssid=") {
                ssid = SettingsFields.hexBytes(Array(line.dropFirst(5).utf8))
            } else if line.hasPrefix("psk=") {
                let value = line.dropFirst(4)
                if value.utf8.count == 64, SettingsFields.hexBytes(Array(value.utf8)) != nil { psk = String(value).lowercased() }
            }
        }
        return ssid.map { SavedNetwork(ssid: $0, psk: psk) }
    }
}
