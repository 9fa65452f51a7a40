// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CGPIOD

/// One GPIO chip as the kernel describes it.
public struct GPIOChipInfo: Equatable, Sendable {
    /// Device path, `/dev/gpiochipN`.
    public var path: String
    /// Kernel name, `gpiochipN`.
    public var name: String
    /// Driver label, e.g. `pinctrl-bcm2711` or `gpio-sim.0-node0`.
    public var label: String
    public var lines: [GPIOLineInfo]
}

/// One line of a chip: offset, name (empty if unnamed), consumer (empty if
/// none), whether it is in use and whether it is an output.
public struct GPIOLineInfo: Equatable, Sendable {
    public var offset: Int
    public var name: String
    public var consumer: String
    public var isUsed: Bool
    public var isOutput: Bool
}

/// Where a configured line lives: its chip and line, the name the
/// configuration gave it and how that name was matched (``HeaderPins``).
public struct GPIOLineLocation: Equatable, Sendable, CustomStringConvertible {
    public var chip: GPIOChipInfo
    public var line: GPIOLineInfo
    /// The configuration's name; the line's own name when matched by name.
    public var name: String
    public var match: LineMatch

    /// A line found by its own name.
    public init(chip: GPIOChipInfo, line: GPIOLineInfo) {
        self.init(chip: chip, line: line, name: line.name, match: .name)
    }

    public init(chip: GPIOChipInfo, line: GPIOLineInfo, name: String, match: LineMatch) {
        self.chip = chip
        self.line = line
        self.name = name
        self.match = match
    }

    /// `GPIO17 (gpiochip0 line 17), by name on pinctrl-bcm2835`, or for a
    /// header pin the tree names otherwise `GPIO4 (gpiochip0 line 4), header
    /// offset 4 of pinctrl-bcm2835 (the device tree calls it "GPIO_GCLK")`.
    public var description: String {
        let place = "\(name) (\(chip.name) line \(line.offset))"
        let on = chip.label.isEmpty ? "" : " of \(chip.label)"
        switch match {
        case .name:
            return chip.label.isEmpty ? place : "\(place), by name on \(chip.label)"
        case .headerOffset:
            let tree = line.name.isEmpty ? "unnamed in the device tree" : "the device tree calls it \"\(line.name)\""
            return "\(place), header offset \(line.offset)\(on) (\(tree))"
        }
    }
}

/// The machine's GPIO chips, read through libgpiod (`cgpiod_chip_describe*`,
/// v1 or v2 as built): enumerates `/dev/gpiochip*` and finds lines **by
/// name** across all chips (or as a header pin of the header's controller,
/// ``HeaderPins``), never by chip number (a Pi 4 has the header on
/// gpiochip0, a Pi 5 on a chip whose number varies). Any thread.
public enum GPIOChips {
    /// `libgpiod <version> (v1 API)` or `(v2 API)`.
    public static var libraryDescription: String {
        "libgpiod \(String(cString: cgpiod_library_version())) (v\(cgpiod_api_major()) API)"
    }

    /// True if this build can ask the kernel to debounce inputs (libgpiod v2).
    public static var hasKernelDebounce: Bool { cgpiod_has_kernel_debounce() != 0 }

    /// Paths of the character devices `/dev/gpiochipN`, in chip-number order.
    public static func chipPaths(directory: String = "/dev") -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var numbers: [Int] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasPrefix("gpiochip"), let n = Int(name.dropFirst(8)) { numbers.append(n) }
        }
        return numbers.sorted().map { "\(directory)/gpiochip\($0)" }
    }

    /// Describes the chip at `path` with all its lines (`cgpiod_chip_describe_lines`).
    public static func describe(path: String) throws(GPIOError) -> GPIOChipInfo {
        var chip = cgpiod_chip_info()
        guard cgpiod_chip_describe(path, &chip) == 0 else { throw GPIOError.opening(path: path, errno: errno) }
        let count = Int(chip.num_lines)
        var lines = [cgpiod_line_info](repeating: cgpiod_line_info(), count: max(count, 1))
        let described = lines.withUnsafeMutableBufferPointer { cgpiod_chip_describe_lines(path, $0.baseAddress, UInt32(count)) }
        guard described >= 0 else { throw GPIOError.opening(path: path, errno: errno) }
        return GPIOChipInfo(
            path: path, name: text(chip.name), label: text(chip.label),
            lines: lines.prefix(Int(described)).enumerated().map { offset, l in
                GPIOLineInfo(offset: offset, name: text(l.name), consumer: text(l.consumer),
                             isUsed: l.used != 0, isOutput: l.output != 0)
            })
    }

    /// Every chip that can be opened; chips that cannot are returned as errors
    /// (a missing permission is the common one).
    public static func all(directory: String = "/dev") -> [Result<GPIOChipInfo, GPIOError>] {
        chipPaths(directory: directory).map { path in
            do throws(GPIOError) { return .success(try describe(path: path)) } catch { return .failure(error) }
        }
    }

    /// Finds each of `names` across all chips (``HeaderPins/resolve(_:chips:)``:
    /// by line name, else a header pin `GPIOn` as offset n of the header's
    /// controller). Throws for a chip that cannot be opened (permission) and
    /// for a name found nowhere.
    public static func locate(_ names: [String], directory: String = "/dev") throws(GPIOError) -> [String: GPIOLineLocation] {
        var chips: [GPIOChipInfo] = []
        for result in all(directory: directory) {
            switch result {
            case .success(let chip): chips.append(chip)
            case .failure(let error): throw error
            }
        }
        var found: [String: GPIOLineLocation] = [:]
        for name in names where found[name] == nil {
            guard let location = HeaderPins.resolve(name, chips: chips) else {
                throw GPIOError.unknownLine(name: name, chips: chips.map { "\($0.name) [\($0.label)]" })
            }
            found[name] = location
        }
        return found
    }

    private static func text<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }
}
