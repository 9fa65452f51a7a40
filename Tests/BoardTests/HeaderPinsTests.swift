// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerSystem
@testable import Board

/// Header pin names on the GPIO chips each Raspberry Pi device tree of
/// Debian's kernel gives (DeviceTreeLines/*.lines, made from the DTBs by
/// scripts/dt-line-names): `GPIOn` is line n of the header's controller on
/// every board, by name where the tree names it and by the controller's
/// label and offset where it does not; other names are found by name only.
@Suite struct HeaderPinsTests {
    /// The chips of one fixture, numbered gpiochip0… in file order.
    static func chips(_ board: String) throws -> [GPIOChipInfo] {
        let text = try FileIO.readText(path: "\(BoardReplay.directory())/DeviceTreeLines/\(board).lines")
        var chips: [GPIOChipInfo] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let f = line.split(separator: " ", maxSplits: 3).map(String.init)
            if f.first == "chip", f.count >= 3, let count = Int(f[2]) {
                let n = chips.count
                chips.append(GPIOChipInfo(path: "/dev/gpiochip\(n)", name: "gpiochip\(n)", label: f[1], lines: (0..<count).map {
                    GPIOLineInfo(offset: $0, name: "", consumer: "", isUsed: false, isOutput: false)
                }))
            } else if f.count == 2, let offset = Int(f[0]), !chips.isEmpty, offset < chips[chips.count - 1].lines.count {
                chips[chips.count - 1].lines[offset].name = f[1]
            } else {
                Issue.record("\(board).lines: unreadable line \"\(line)\"")
            }
        }
        return chips
    }

    static let debianBoards = [("bcm2837-rpi-3-b", "pinctrl-bcm2835"), ("bcm2837-rpi-zero-2-w", "pinctrl-bcm2835"),
                               ("bcm2711-rpi-4-b", "pinctrl-bcm2711")]

    @Test(arguments: debianBoards)
    func everyHeaderPinIsItsOffsetOnTheController(board: String, label: String) throws {
        let chips = try Self.chips(board)
        #expect(chips.contains { $0.label == label }, "the fixture has the header controller")
        var byName = 0, byOffset = 0
        for n in HeaderPins.pins {
            let location = try #require(HeaderPins.resolve("GPIO\(n)", chips: chips), "GPIO\(n) on \(board)")
            #expect(location.chip.label == label && location.line.offset == n && location.name == "GPIO\(n)")
            if location.match == .name { byName += 1 } else { byOffset += 1 }
            #expect((location.match == .name) == (location.line.name == "GPIO\(n)"))
        }
        // Debian's (mainline) trees name GPIO5, 6, 12, 13 and 16–27 only.
        #expect(byName == 16 && byOffset == 12, "\(board): \(byName) by name, \(byOffset) by offset")
    }

    @Test func theTreesOwnNamesForTheOtherPinsAreSaidInTheLog() throws {
        let chips = try Self.chips("bcm2837-rpi-3-b")
        let gclk = try #require(HeaderPins.resolve("GPIO4", chips: chips))
        #expect(gclk.match == .headerOffset && gclk.line.name == "GPIO_GCLK")
        let chip = gclk.chip.name
        #expect(gclk.description == "GPIO4 (\(chip) line 4), header offset 4 of pinctrl-bcm2835 (the device tree calls it \"GPIO_GCLK\")")
        let button = try #require(HeaderPins.resolve("GPIO17", chips: chips))
        #expect(button.description == "GPIO17 (\(chip) line 17), by name on pinctrl-bcm2835")
        for (n, tree) in [(2, "SDA1"), (3, "SCL1"), (7, "SPI_CE1_N"), (11, "SPI_SCLK"), (14, "TXD1"), (15, "RXD1")] {
            #expect(HeaderPins.resolve("GPIO\(n)", chips: chips)?.line.name == tree)
        }
        // The Zero 2 W's tree calls GPIO14/15 TXD0/RXD0.
        #expect(HeaderPins.resolve("GPIO14", chips: try Self.chips("bcm2837-rpi-zero-2-w"))?.line.name == "TXD0")
    }

    @Test func otherNamesAreFoundByNameOnly() throws {
        let chips = try Self.chips("bcm2711-rpi-4-b")
        #expect(HeaderPins.resolve("SDA1", chips: chips)?.line.offset == 2)
        let led = try #require(HeaderPins.resolve("PWR_LED_OFF", chips: chips))
        #expect(led.chip.label == "raspberrypi-exp-gpio" && led.line.offset == 2 && led.match == .name)
        for name in ["GPIO28", "GPIO04", "GPIO-1", "GPIO", "gpio17", "GPIO17 ", "GPIO99"] {
            #expect(HeaderPins.resolve(name, chips: chips) == nil, "\(name)")
        }
        #expect(HeaderPins.number("GPIO0") == 0 && HeaderPins.number("GPIO27") == 27 && HeaderPins.number("GPIO28") == nil)
    }

    /// Debian's Pi 5 tree has no RP1 node (trixie's kernel has no RP1 driver):
    /// its only GPIO chips are the SoC's always-on banks, none of them the header.
    @Test func aPi5OnDebiansKernelFindsNoHeaderAndSaysWhy() throws {
        let chips = try Self.chips("bcm2712-rpi-5-b")
        #expect(!chips.isEmpty && chips.allSatisfy { $0.lines.allSatisfy { $0.name.isEmpty } })
        #expect(HeaderPins.controller(chips) == nil)
        #expect(HeaderPins.table(chips).allSatisfy { $0.location == nil })
        let error = GPIOError.unknownLine(name: "GPIO17", chips: chips.map { "\($0.name) [\($0.label)]" })
        #expect(error.description.contains("needs a kernel with the RP1 driver"), "\(error)")
        #expect(error.exitCode == 1)
        // A name that is no header pin gets no such hint.
        #expect(!GPIOError.unknownLine(name: "BUTTON", chips: []).description.contains("RP1"))
    }

    /// A Pi 5 on Raspberry Pi OS: the RP1 chip (`pinctrl-rp1`) names its lines
    /// GPIO0…; on a kernel whose tree does not, the label and offset still find them.
    @Test func aPi5WithTheRP1DriverFindsTheHeaderEitherWay() throws {
        let unnamed = (0..<54).map { GPIOLineInfo(offset: $0, name: "", consumer: "", isUsed: false, isOutput: false) }
        var named = unnamed
        for n in 0..<28 { named[n].name = "GPIO\(n)" }
        let aon = try Self.chips("bcm2712-rpi-5-b")
        for (lines, match) in [(named, LineMatch.name), (unnamed, .headerOffset)] {
            let rp1 = GPIOChipInfo(path: "/dev/gpiochip4", name: "gpiochip4", label: "pinctrl-rp1", lines: lines)
            let location = try #require(HeaderPins.resolve("GPIO23", chips: aon + [rp1]))
            #expect(location.chip.name == "gpiochip4" && location.line.offset == 23 && location.match == match)
        }
    }

    /// A line named GPIOn elsewhere (a gpio-sim chip, an expander) wins over
    /// the controller's offset: names come first.
    @Test func aNamedLineWinsOverTheOffset() throws {
        var chips = try Self.chips("bcm2837-rpi-3-b")
        let sim = GPIOChipInfo(path: "/dev/gpiochip9", name: "gpiochip9", label: "gpio-sim.0-node0",
                               lines: [GPIOLineInfo(offset: 0, name: "GPIO4", consumer: "", isUsed: false, isOutput: false)])
        chips.append(sim)
        let location = try #require(HeaderPins.resolve("GPIO4", chips: chips))
        #expect(location.chip.name == "gpiochip9" && location.match == .name)
    }

    /// A header pin found by offset survives the trace format (label and tree name kept).
    @Test func aHeaderMatchSurvivesTheTrace() throws {
        let chips = try Self.chips("bcm2837-rpi-3-b")
        let gclk = try #require(HeaderPins.resolve("GPIO4", chips: chips))
        let button = try #require(HeaderPins.resolve("GPIO17", chips: chips))
        let entry = GPIOTraceEntry.locate(names: ["GPIO4", "GPIO17"], directory: "/dev", result: .success(["GPIO4": gclk, "GPIO17": button]))
        let trace = try GPIOTrace(text: GPIOTrace(entries: [entry]).text)
        guard case .locate(_, _, .success(let found))? = trace.entries.first else { Issue.record("no locate entry"); return }
        #expect(found["GPIO4"]?.match == .headerOffset && found["GPIO4"]?.line.name == "GPIO_GCLK")
        #expect(found["GPIO4"]?.chip.label == "pinctrl-bcm2835" && found["GPIO4"]?.line.offset == 4)
        #expect(found["GPIO17"]?.match == .name && found["GPIO17"]?.line.offset == 17)
    }
}
