// SPDX-License-Identifier: Apache-2.0
import CALSA
#if canImport(Glibc)
import Glibc
#endif

/// One ALSA simple-mixer playback element (e.g. `PCM`, `Digital`, `Master`)
/// driven by dB, for `volume.mode: "alsa-mixer"`.
///
/// Main thread only: the mixer's poll descriptors go into the main event
/// loop; when one is readable call `handleEvents()`, then `readDB()` to see a
/// change made elsewhere (alsamixer, another program).
public final class ALSAMixer {
    /// The ctl the mixer is attached to (`default`, `hw:0`, `hw:CARD=sndrpihifiberry`).
    public let card: String
    /// The simple element's name.
    public let element: String
    /// The element's playback range in dB (`snd_mixer_selem_get_playback_dB_range`).
    public let minDB: Double
    /// The element's top in dB (usually 0).
    public let maxDB: Double
    /// Whether the element has a playback switch (used for level 0).
    public let hasSwitch: Bool
    private var mixer: OpaquePointer?
    private let elem: OpaquePointer

    /// Opens the mixer of `card` and finds `element` (`snd_mixer_open`,
    /// `snd_mixer_attach`, `snd_mixer_selem_register`, `snd_mixer_load`,
    /// `snd_mixer_find_selem`). Throws an `ALSAError` naming the card and the
    /// failing call; an element without a dB playback volume is refused (EINVAL).
    public init(card: String, element: String) throws(ALSAError) {
        self.card = card
        self.element = element
        let label = "mixer \(card) element \(element)"
        var handle: OpaquePointer?
        var rc = snd_mixer_open(&handle, 0)
        guard rc >= 0, let handle else { throw ALSAError(device: label, function: "snd_mixer_open", code: rc) }
        func fail(_ function: String, _ code: Int32) -> ALSAError {
            snd_mixer_close(handle)
            return ALSAError(device: label, function: function, code: code)
        }
        rc = snd_mixer_attach(handle, card)
        if rc < 0 { throw fail("snd_mixer_attach", rc) }
        rc = snd_mixer_selem_register(handle, nil, nil)
        if rc < 0 { throw fail("snd_mixer_selem_register", rc) }
        rc = snd_mixer_load(handle)
        if rc < 0 { throw fail("snd_mixer_load", rc) }
        var sid: OpaquePointer?
        rc = snd_mixer_selem_id_malloc(&sid)
        if rc < 0 { throw fail("snd_mixer_selem_id_malloc", rc) }
        defer { snd_mixer_selem_id_free(sid) }
        snd_mixer_selem_id_set_index(sid, 0)
        snd_mixer_selem_id_set_name(sid, element)
        guard let found = snd_mixer_find_selem(handle, sid) else { throw fail("snd_mixer_find_selem", -ENOENT) }
        guard snd_mixer_selem_has_playback_volume(found) != 0 else { throw fail("snd_mixer_selem_has_playback_volume", -EINVAL) }
        var lo = 0, hi = 0
        rc = snd_mixer_selem_get_playback_dB_range(found, &lo, &hi)
        if rc < 0 || hi <= lo { throw fail("snd_mixer_selem_get_playback_dB_range", rc < 0 ? rc : -EINVAL) }
        mixer = handle
        elem = found
        minDB = Double(lo) / 100
        maxDB = Double(hi) / 100
        hasSwitch = snd_mixer_selem_has_playback_switch(found) != 0
    }

    deinit {
        if let mixer { snd_mixer_close(mixer) }
    }

    /// The descriptors to poll for changes (`snd_mixer_poll_descriptors`), with their events.
    public var pollDescriptors: [pollfd] {
        guard let mixer else { return [] }
        let count = snd_mixer_poll_descriptors_count(mixer)
        guard count > 0 else { return [] }
        var fds = [pollfd](repeating: pollfd(), count: Int(count))
        let got = fds.withUnsafeMutableBufferPointer { snd_mixer_poll_descriptors(mixer, $0.baseAddress, UInt32(count)) }
        return Array(fds.prefix(Int(max(got, 0))))
    }

    /// Reads pending change notifications (`snd_mixer_handle_events`), so
    /// `readDB()` returns the element's current value. Returns the event count.
    @discardableResult
    public func handleEvents() -> Int {
        guard let mixer else { return 0 }
        return Int(snd_mixer_handle_events(mixer))
    }

    /// The element's current playback level in dB (front left), or nil when
    /// the switch is off (muted) or it can't be read.
    public func readDB() -> Double? {
        if hasSwitch {
            var on: Int32 = 1
            if snd_mixer_selem_get_playback_switch(elem, SND_MIXER_SCHN_FRONT_LEFT, &on) == 0 && on == 0 { return nil }
        }
        var value = 0
        guard snd_mixer_selem_get_playback_dB(elem, SND_MIXER_SCHN_FRONT_LEFT, &value) == 0 else { return nil }
        return Double(value) / 100
    }

    /// Sets every channel to `db` (nil: mute with the switch, else the
    /// minimum), rounding down to the element's steps
    /// (`snd_mixer_selem_set_playback_dB_all`, `_switch_all`).
    public func write(db: Double?) throws(ALSAError) {
        let label = "mixer \(card) element \(element)"
        if let db {
            let clamped = min(max(db, minDB), maxDB)
            let rc = snd_mixer_selem_set_playback_dB_all(elem, Int((clamped * 100).rounded()), -1)
            if rc < 0 { throw ALSAError(device: label, function: "snd_mixer_selem_set_playback_dB_all", code: rc) }
            if hasSwitch { snd_mixer_selem_set_playback_switch_all(elem, 1) }
        } else if hasSwitch {
            let rc = snd_mixer_selem_set_playback_switch_all(elem, 0)
            if rc < 0 { throw ALSAError(device: label, function: "snd_mixer_selem_set_playback_switch_all", code: rc) }
        } else {
            let rc = snd_mixer_selem_set_playback_dB_all(elem, Int((minDB * 100).rounded()), -1)
            if rc < 0 { throw ALSAError(device: label, function: "snd_mixer_selem_set_playback_dB_all", code: rc) }
        }
    }

    /// Mixer elements with a playback volume on `card`, with their dB ranges, for `devices`.
    public static func playbackElements(card: String) -> [(name: String, minDB: Double, maxDB: Double)] {
        var handle: OpaquePointer?
        guard snd_mixer_open(&handle, 0) >= 0, let handle else { return [] }
        defer { snd_mixer_close(handle) }
        guard snd_mixer_attach(handle, card) >= 0, snd_mixer_selem_register(handle, nil, nil) >= 0,
              snd_mixer_load(handle) >= 0 else { return [] }
        var out: [(String, Double, Double)] = []
        var e = snd_mixer_first_elem(handle)
        while let elem = e {
            if snd_mixer_selem_has_playback_volume(elem) != 0, let name = snd_mixer_selem_get_name(elem) {
                var lo = 0, hi = 0
                if snd_mixer_selem_get_playback_dB_range(elem, &lo, &hi) >= 0 {
                    out.append((String(cString: name), Double(lo) / 100, Double(hi) / 100))
                }
            }
            e = snd_mixer_elem_next(elem)
        }
        return out
    }
}
