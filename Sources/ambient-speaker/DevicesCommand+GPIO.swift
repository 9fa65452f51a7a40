// SPDX-License-Identifier: Apache-2.0
import Board

/// The GPIO part of `devices`: every chip (`/dev/gpiochipN`, label, line
/// count), its named lines with direction and who holds them, and chips that
/// cannot be opened with the reason (e.g. which group grants access).
extension DevicesCommand {
    static func printGPIO() {
        print("GPIO chips (\(GPIOChips.libraryDescription)):")
        let chips = GPIOChips.all()
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
}
