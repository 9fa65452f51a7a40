// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The Home Assistant device triggers for the speaker's physical inputs:
/// one per gesture the board can produce, named with the trigger types and
/// subtypes Home Assistant's MQTT integration translates, so the automation
/// editor shows "“First button” pressed" rather than a raw key.
///
/// | input | gesture | `type` | `subtype` |
/// |---|---|---|---|
/// | play/pause button | press / long / double | `button_short_press` / `button_long_press` / `button_double_press` | `button_1` |
/// | next button | same | same | `button_2` |
/// | previous button | same | same | `button_3` |
/// | encoder push switch | same | same | `button_4` |
/// | knob | turned up (volume up) / down | `turned up` / `turned down` | `Volume knob` |
/// | sleep timer | ran out | `sleep_timer_ended` | `Sleep timer` |
///
/// Buttons are numbered in the order of the wiring table (hardware.md).
/// Home Assistant has no translated trigger for a rotation, so the knob's
/// type and subtype are plain words: the editor falls back to
/// `"subtype" type`, which reads "“Volume knob” turned up". Double
/// press triggers exist only when `inputs.doublePressMs` > 0, the encoder
/// switch's only when it is wired; the others are retired (platform only).
enum HomeAssistantTriggers {
    /// Home Assistant's subtype for each button.
    static func subtype(_ button: TransportButton) -> String {
        switch button {
        case .playPause: return "button_1"
        case .next: return "button_2"
        case .previous: return "button_3"
        case .encoderSwitch: return "button_4"
        }
    }

    /// Home Assistant's type for each published gesture (`.down` is never
    /// published on `event`, so it has no trigger).
    static func type(_ gesture: ButtonGesture) -> String? {
        switch gesture {
        case .press: return "button_short_press"
        case .long: return "button_long_press"
        case .double: return "button_double_press"
        case .down: return nil
        }
    }

    static let knobSubtype = "Volume knob"
    /// The sleep timer's trigger: its type and subtype (plain words, no translation exists).
    static let sleepTimerEndedType = "sleep_timer_ended"
    static let sleepTimerSubtype = "Sleep timer"

    static func add(to builder: inout ComponentBuilder, inputs: InputsSection) {
        let topic = JSONValue.string(builder.topics.event)
        for button in TransportButton.allCases {
            let present = button != .encoderSwitch || inputs.encoderSwitch != nil
            for gesture in [ButtonGesture.press, .long, .double] {
                let enabled = present && (gesture != .double || inputs.doublePressMs > 0)
                let event = InputEventPayload.button(name: button.rawValue, gesture: gesture.rawValue).serialized()
                builder.add("\(button.rawValue)_\(gesture.rawValue)", "device_automation", active: enabled, [
                    ("automation_type", .string("trigger")), ("topic", topic),
                    ("type", .string(type(gesture) ?? gesture.rawValue)), ("subtype", .string(subtype(button))), ("payload", .string(String(decoding: event, as: UTF8.self))),
                ])
            }
        }
        for (object, sign, type) in [("knob_up", ">", "turned up"), ("knob_down", "<", "turned down")] {
            builder.add(object, "device_automation", active: true, [
                ("automation_type", .string("trigger")), ("topic", topic),
                ("type", .string(type)), ("subtype", .string(knobSubtype)),
                ("value_template", .string("{{ 'turn' if value_json.source == 'knob' and value_json.delta \(sign) 0 else '' }}")),
                ("payload", .string("turn")),
            ])
        }
        let ended = SpeakerEventPayload.sleepTimerEnded.serialized()
        builder.add("sleep_timer_ended", "device_automation", active: true, [
            ("automation_type", .string("trigger")), ("topic", topic),
            ("type", .string(sleepTimerEndedType)), ("subtype", .string(sleepTimerSubtype)),
            ("payload", .string(String(decoding: ended, as: UTF8.self))),
        ])
    }
}
