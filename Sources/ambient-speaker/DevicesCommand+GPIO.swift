// SPDX-License-Identifier: Apache-2.0
import Board

/// The GPIO part of `devices`: every chip (`/dev/gpiochipN`, label, line
/// count), its named lines with direction and who holds them, chips that
/// cannot be opened with the reason (e.g. which group grants access), then
/// the lines a configuration may name: any named line above, and each header
/// pin `GPIO0`…`GPIO27` with the line it resolves to (``HeaderPins``).
extension DevicesCommand {
    static func printGPIO() {
        print("GPIO chips (\(GPIOChips.libraryDescription)):")
        let chips = GPIOChips.all()
        defer { printHeaderPins(chips.compactMap { try? $0.get() }) }
        if chips.isEmpty { print("  (none: no /dev/gpiochip*)") }
        for result in chips {
            switch result {
            case .failure(let error):
                print("  \(error)")
            case .success(let chip):
                let named = chip.lines.filter { !$0.name.isEmpty }
                print("  \(chip.name) [\(chip.label)] \(chip.path): \(chip.lines.count) lines, \(named.count) named")
                for line in named {
                    let holder = line.isUsed ? "used by \(line.consumer.isEmpty ? "(unnamed consumer)" : "\"\(line.consumer)\"")" : "free"
                    print("    \(line.offset)\t\(line.name)\t\(line.isOutput ? "output" : "input")\t\(holder)")
                }
            }
        }
    }

    /// The header pin names and where each is found, or why none is.
    static func printHeaderPins(_ chips: [GPIOChipInfo]) {
        print("Lines a configuration may name: every named line above, and the header pins (BCM numbers):")
        let table = HeaderPins.table(chips)
        guard table.contains(where: { $0.location != nil }) else {
            print("  (none: no line is named GPIOn and no chip is a header controller: "
                + "\(HeaderPins.controllerLabels.joined(separator: ", ")))")
            return
        }
        for (name, location) in table {
            print("  \(name)\t\(location.map(\.description) ?? "not found")")
        }
    }
}
