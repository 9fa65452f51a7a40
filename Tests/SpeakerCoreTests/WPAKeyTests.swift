// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import Testing

/// The in-process WPA key derivation against published vectors.
struct WPAKeyTests {
    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// IEEE 802.11i-2004 annex H.4 (the vectors `wpa_passphrase` reproduces),
    /// and a 63-byte passphrase with a 32-byte SSID (checked against
    /// Python's hashlib.pbkdf2_hmac).
    @Test(arguments: [
        ("password", "IEEE", "f42c6fc52df0ebef9ebb4b90b38a5f902e83fe1b135a70e23aed762e9710a12e"),
        ("ThisIsAPassword", "ThisIsASSID", "0dc0d6eb90555ed6419756b9a15ec3e3209b63df707dd508d14581f8982721af"),
        (String(repeating: "a", count: 63), String(repeating: "Z", count: 32), "2d43d0dabfdd635377172efa1fc4b4b87dbfc4219193909ded9a7cfb89a3097b"),
        ("image-test-wifi-passphrase-4711", "image-test-network", "ea2479ae0f260c4b4a2fc0f4e4427910e6e46cdbd182b999446d5450d2d7b0d0"),
    ])
    func wpaPassphraseVectors(passphrase: String, ssid: String, psk: String) {
        #expect(WPAKey.hex(WPAKey.derive(passphrase: Self.bytes(passphrase), ssid: Self.bytes(ssid))) == psk)
    }

    /// RFC 6070: PBKDF2-HMAC-SHA1 with 1, 2 and 4096 iterations, and a key
    /// longer than one SHA-1 block with a salt spanning blocks.
    @Test(arguments: [
        ("password", "salt", 1, 20, "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
        ("password", "salt", 2, 20, "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
        ("password", "salt", 4096, 20, "4b007901b765489abead49d926f721d065a429c1"),
        ("passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 25, "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"),
    ])
    func rfc6070(password: String, salt: String, iterations: Int, length: Int, expected: String) {
        #expect(WPAKey.hex(PBKDF2.sha1(password: Self.bytes(password), salt: Self.bytes(salt), iterations: iterations, length: length)) == expected)
    }
}
