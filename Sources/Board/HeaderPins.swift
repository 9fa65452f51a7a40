// SPDX-License-Identifier: Apache-2.0

/// How a configured line name was found on a chip.
public enum LineMatch: Equatable, Sendable {
    /// A line of that name (the device tree's `gpio-line-names`, or gpio-sim's).
    case name
    /// `GPIOn` as offset n of the 40-pin header's controller, found by its
    /// driver label, because no line carries the name: Debian's (mainline)
    /// trees call GPIO4 `GPIO_GCLK`, GPIO14 `TXD1`, and the Pi 5's names none.
    case headerOffset
}

/// One header pin name, `GPIOn` (the BCM number on the 40-pin header), means
/// the same line on every board and kernel: the line of that name where the
/// device tree has one (Raspberry Pi OS names them all `GPIO0`…`GPIO27`;
/// Debian's trees name only some), otherwise line n of the chip behind the
/// header, known by its driver's label — `pinctrl-bcm2835` (Pi 3, Zero 2 W),
/// `pinctrl-bcm2711` (Pi 4, 400, CM4), `pinctrl-rp1` (Pi 5, on a kernel with
/// the RP1 driver). A name that is not `GPIOn` is only ever found by name.
/// Pure: works on chip descriptions, so it is tested on the line names of
/// each board's own device tree (Tests/BoardTests/DeviceTreeLines).
public enum HeaderPins {
    /// Driver labels of the chips behind the 40-pin header, in the order tried.
    public static let controllerLabels = ["pinctrl-bcm2835", "pinctrl-bcm2711", "pinctrl-rp1"]
    /// The BCM numbers the 40-pin header brings out.
    public static let pins = 0...27

    /// n of a header pin name `GPIOn` (decimal, no sign, no leading zero), nil otherwise.
    public static func number(_ name: String) -> Int? {
        guard name.hasPrefix("GPIO") else { return nil }
        let digits = name.dropFirst(4)
        guard !digits.isEmpty, digits.count <= 2, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              digits.first != "0" || digits.count == 1, let n = Int(digits), pins.contains(n) else { return nil }
        return n
    }

    /// The chip behind the header: the first chip whose label is a known
    /// header controller and that has a line for every header pin.
    public static func controller(_ chips: [GPIOChipInfo]) -> GPIOChipInfo? {
        for label in controllerLabels {
            if let chip = chips.first(where: { $0.label == label && $0.lines.count > pins.upperBound }) { return chip }
        }
        return nil
    }

    /// Where `name` is: the first line of that name on any chip (chips in
    /// order), else for `GPIOn` line n of the header controller; nil if neither.
    public static func resolve(_ name: String, chips: [GPIOChipInfo]) -> GPIOLineLocation? {
        for chip in chips {
            if let line = chip.lines.first(where: { $0.name == name }) {
                return GPIOLineLocation(chip: chip, line: line, name: name, match: .name)
            }
        }
        guard let n = number(name), let chip = controller(chips) else { return nil }
        return GPIOLineLocation(chip: chip, line: chip.lines[n], name: name, match: .headerOffset)
    }

    /// Every header pin name and where it resolves on `chips` (nil: nowhere),
    /// for `ambient-speaker devices`.
    public static func table(_ chips: [GPIOChipInfo]) -> [(name: String, location: GPIOLineLocation?)] {
        pins.map { n in ("GPIO\(n)", resolve("GPIO\(n)", chips: chips)) }
    }

    /// For a header pin name no chip has: why, when the cause is a missing
    /// header controller (a Pi 5 on a kernel without the RP1 driver), else nil.
    static func missingControllerHint(_ name: String, chips: [String]) -> String? {
        guard number(name) != nil, !chips.contains(where: { c in controllerLabels.contains { c.contains("[\($0)]") } }) else {
            return nil
        }
        return "no chip is a 40-pin header controller (\(controllerLabels.joined(separator: ", "))) either; "
            + "a Raspberry Pi 5 needs a kernel with the RP1 driver (Raspberry Pi OS: docs/raspberry-pi.md)"
    }
}
