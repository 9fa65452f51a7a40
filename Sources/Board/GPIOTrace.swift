// SPDX-License-Identifier: Apache-2.0
import SpeakerCore

/// A recording of every access ``GPIOBoard`` made to libgpiod: one line of
/// text per call and its answer (``RecordingGPIOLines`` writes them,
/// ``ReplayedGPIOLines`` serves them). Times are the loop's clock
/// (CLOCK_MONOTONIC on the live loop, the same clock as the kernel's edge
/// timestamps). The format, one entry a line, tokens separated by one space
/// (a token escapes `%`, space, `,` and newline as `%25`, `%20`, `%2C`, `%0A`):
///
/// ```
/// gpio-trace 1
/// library libgpiod%201.6.3%20(v1%20API) debounce=0 queue=16
/// locate /dev GPIO17,GPIO23 -> GPIO17=gpiochip1:/dev/gpiochip1:17 GPIO23=gpiochip1:/dev/gpiochip1:23
/// input GPIO17 gpiochip1:17 pull-up active-low debounce=0 -> 0
/// output GPIO5 gpiochip1:5 active-high -> 1
/// reader 0 -> ok
/// take 10638421000 realtime=yes
/// read 0 10638421000 1@10638351370 0@10638536470+2 reread=1
/// set 1 1 at=10700000000 -> ok
/// stop
/// release 0
/// ```
///
/// A `read` line belongs to the `take` before it; `+N` after an edge is the
/// kernel's count of edges lost before it (v2); a failed call answers
/// `-> error KIND …` (``GPIOError``) and a failed `set` `-> errno=N`.
/// Lines starting with `#` are comments. Pure; any thread.
public enum GPIOTraceEntry: Equatable, Sendable {
    case library(GPIOLibrary)
    case locate(names: [String], directory: String, result: Result<[String: GPIOLineLocation], GPIOError>)
    case requestInput(line: String, chip: String, offset: Int, settings: GPIOInputSettings, result: Result<GPIORequestID, GPIOError>)
    case requestOutput(line: String, chip: String, offset: Int, activeLow: Bool, result: Result<GPIORequestID, GPIOError>)
    case startReader(inputs: [GPIORequestID], error: GPIOError?)
    /// A ``GPIOLineAccess/takeReads()`` at loop time `at`.
    case take(at: UInt64, EdgeReads)
    case setOutput(GPIORequestID, active: Bool, at: UInt64, errno: Int32?)
    case stopReader
    case release(GPIORequestID)
}

/// A whole trace: its entries in call order.
public struct GPIOTrace: Equatable, Sendable {
    public static let header = "gpio-trace 1"
    public var entries: [GPIOTraceEntry]

    public init(entries: [GPIOTraceEntry]) { self.entries = entries }

    /// A trace read from its text; throws ``GPIOTraceError`` naming the line.
    public init(text: String) throws(GPIOTraceError) {
        var entries: [GPIOTraceEntry] = []
        var sawHeader = false
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.hasSuffix("\r") ? String(raw.dropLast()) : String(raw)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if !sawHeader {
                guard line == Self.header else { throw GPIOTraceError(line: index + 1, message: "expected \"\(Self.header)\"") }
                sawHeader = true
                continue
            }
            do throws(GPIOTraceError) {
                let tokens = line.split(separator: " ").map(String.init)
                if tokens.first == "read" {
                    guard case .take(let at, var taken)? = entries.last else {
                        throw GPIOTraceError(line: 0, message: "a read outside a take")
                    }
                    taken.reads.append(try Self.read(tokens))
                    entries[entries.count - 1] = .take(at: at, taken)
                } else {
                    entries.append(try Self.entry(tokens))
                }
            } catch {
                throw GPIOTraceError(line: index + 1, message: error.message)
            }
        }
        guard sawHeader else { throw GPIOTraceError(line: 1, message: "expected \"\(Self.header)\"") }
        self.entries = entries
    }

    /// The trace as text, header first.
    public var text: String { ([Self.header] + entries.map(Self.lines)).joined(separator: "\n") + "\n" }

    // MARK: Writing

    /// One entry as its line(s) of text (a take is followed by its reads).
    public static func lines(_ entry: GPIOTraceEntry) -> String {
        switch entry {
        case .library(let l):
            return "library \(escape(l.description)) debounce=\(l.hasKernelDebounce ? 1 : 0) queue=\(l.eventQueueSize)"
        case let .locate(names, directory, result):
            let answer: String
            switch result {
            case .success(let found):
                answer = found.sorted { $0.key < $1.key }.map { name, l in
                    // A header pin found by offset also records the chip's label and the tree's name.
                    let how = l.match == .headerOffset ? ":header:\(escape(l.chip.label)):\(escape(l.line.name))" : ""
                    return "\(escape(name))=\(escape(l.chip.name)):\(escape(l.chip.path)):\(l.line.offset)\(how)"
                }.joined(separator: " ")
            case .failure(let error): answer = errorText(error)
            }
            return "locate \(escape(directory)) \(names.map(escape).joined(separator: ",")) -> \(answer)"
        case let .requestInput(line, chip, offset, s, result):
            return "input \(escape(line)) \(escape(chip)):\(offset) \(s.bias.rawValue) \(s.activeLow ? "active-low" : "active-high") "
                + "debounce=\(s.debounceMicroseconds) -> \(requestText(result))"
        case let .requestOutput(line, chip, offset, activeLow, result):
            return "output \(escape(line)) \(escape(chip)):\(offset) \(activeLow ? "active-low" : "active-high") -> \(requestText(result))"
        case let .startReader(inputs, error):
            return "reader \(inputs.map(\.description).joined(separator: ",")) -> \(error.map(errorText) ?? "ok")"
        case let .take(at, taken):
            let realtime = taken.realtime.map { $0 ? "yes" : "no" } ?? "unknown"
            return (["take \(at) realtime=\(realtime)"] + taken.reads.map(readText)).joined(separator: "\n")
        case let .setOutput(request, active, at, e):
            return "set \(request) \(active ? 1 : 0) at=\(at) -> \(e.map { "errno=\($0)" } ?? "ok")"
        case .stopReader: return "stop"
        case .release(let request): return "release \(request)"
        }
    }

    private static func readText(_ read: EdgeRead) -> String {
        var tokens = ["read", "\(read.input)", "\(read.readAt)"]
        tokens += read.events.map { "\($0.isActive ? 1 : 0)@\($0.at)" + ($0.lost > 0 ? "+\($0.lost)" : "") }
        if let reread = read.reread { tokens.append("reread=\(reread ? 1 : 0)") }
        if let e = read.error { tokens.append("error=\(e)") }
        return tokens.joined(separator: " ")
    }

    private static func requestText(_ result: Result<GPIORequestID, GPIOError>) -> String {
        switch result {
        case .success(let id): return "\(id)"
        case .failure(let error): return errorText(error)
        }
    }

    private static func errorText(_ error: GPIOError) -> String {
        switch error {
        case let .unknownLine(name, chips): return "error unknown \(escape(name)) \(chips.map(escape).joined(separator: ","))"
        case let .opening(path, e): return "error opening \(escape(path)) \(e)"
        case let .request(line, location, path, e, consumer):
            return "error request \(escape(line)) \(escape(location)) \(escape(path)) \(e)" + (consumer.map { " \(escape($0))" } ?? "")
        case let .chipGone(line, location, e): return "error gone \(escape(line)) \(escape(location)) \(e)"
        case let .output(line, location, e): return "error output \(escape(line)) \(escape(location)) \(e)"
        case .reader(let e): return "error reader \(e)"
        }
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "%": out += "%25"
            case " ": out += "%20"
            case ",": out += "%2C"
            case ":": out += "%3A"
            case "\n": out += "%0A"
            default: out.append(c)
            }
        }
        return out
    }

    // MARK: Reading

    static func unescape(_ s: String) -> String {
        // Every `%` in escaped text starts an escape, so `%25` goes last.
        s.replacing("%20", with: " ").replacing("%2C", with: ",").replacing("%3A", with: ":").replacing("%0A", with: "\n")
            .replacing("%25", with: "%")
    }

    private static func entry(_ t: [String]) throws(GPIOTraceError) -> GPIOTraceEntry {
        func fail(_ why: String) -> GPIOTraceError { GPIOTraceError(line: 0, message: "\(t.first ?? ""): \(why)") }
        func answer() throws(GPIOTraceError) -> ArraySlice<String> {
            guard let arrow = t.firstIndex(of: "->") else { throw fail("no \"->\"") }
            return t[(arrow + 1)...]
        }
        func value(_ token: String, _ key: String) throws(GPIOTraceError) -> String {
            guard token.hasPrefix(key + "=") else { throw fail("expected \(key)=") }
            return String(token.dropFirst(key.count + 1))
        }
        func number<N: FixedWidthInteger>(_ s: String) throws(GPIOTraceError) -> N {
            guard let n = N(s) else { throw fail("\"\(s)\" is not a number") }
            return n
        }
        func chipAndOffset(_ s: String) throws(GPIOTraceError) -> (String, Int) {
            guard let colon = s.lastIndex(of: ":") else { throw fail("expected CHIP:OFFSET") }
            return (unescape(String(s[..<colon])), try number(String(s[s.index(after: colon)...])))
        }
        func request(_ a: ArraySlice<String>) throws(GPIOTraceError) -> Result<GPIORequestID, GPIOError> {
            if a.first == "error" { return .failure(try error(Array(a))) }
            guard let id = a.first else { throw fail("no answer") }
            return .success(GPIORequestID(try number(id)))
        }
        func error(_ a: [String]) throws(GPIOTraceError) -> GPIOError {
            guard a.count >= 2 else { throw fail("no error kind") }
            let f = a.dropFirst(2).map(unescape)
            switch (a[1], f.count) {
            case ("unknown", 1...2): return .unknownLine(name: f[0], chips: f.count > 1 ? a[3].split(separator: ",").map { unescape(String($0)) } : [])
            case ("opening", 2): return .opening(path: f[0], errno: try number(f[1]))
            case ("request", 4...5): return .request(line: f[0], location: f[1], path: f[2], errno: try number(f[3]), consumer: f.count > 4 ? f[4] : nil)
            case ("gone", 3): return .chipGone(line: f[0], location: f[1], errno: try number(f[2]))
            case ("output", 3): return .output(line: f[0], location: f[1], errno: try number(f[2]))
            case ("reader", 1): return .reader(errno: try number(f[0]))
            default: throw fail("unknown error \"\(a.dropFirst().joined(separator: " "))\"")
            }
        }
        switch (t.first ?? "", t.count) {
        case ("library", 4):
            return .library(GPIOLibrary(description: unescape(t[1]), hasKernelDebounce: try value(t[2], "debounce") == "1",
                                        eventQueueSize: try number(try value(t[3], "queue"))))
        case ("locate", 4...):
            let names = t[2].split(separator: ",").map { unescape(String($0)) }
            let a = try answer()
            if a.first == "error" { return .locate(names: names, directory: unescape(t[1]), result: .failure(try error(Array(a)))) }
            var found: [String: GPIOLineLocation] = [:]
            for item in a {
                let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
                let place = parts.count == 2 ? parts[1].split(separator: ":", omittingEmptySubsequences: false).map(String.init) : []
                guard place.count == 3 || (place.count == 6 && place[3] == "header") else {
                    throw fail("expected NAME=CHIP:PATH:OFFSET[:header:LABEL:TREENAME]")
                }
                let name = unescape(parts[0])
                let header = place.count == 6
                let line = GPIOLineInfo(offset: try number(place[2]), name: header ? unescape(place[5]) : name,
                                        consumer: "", isUsed: false, isOutput: false)
                let chip = GPIOChipInfo(path: unescape(place[1]), name: unescape(place[0]), label: header ? unescape(place[4]) : "",
                                        lines: [])
                found[name] = GPIOLineLocation(chip: chip, line: line, name: name, match: header ? .headerOffset : .name)
            }
            return .locate(names: names, directory: unescape(t[1]), result: .success(found))
        case ("input", 8...):
            guard let bias = LineBias(rawValue: t[3]) else { throw fail("unknown bias \(t[3])") }
            let (chip, offset) = try chipAndOffset(t[2])
            let settings = GPIOInputSettings(activeLow: t[4] == "active-low", bias: bias,
                                             debounceMicroseconds: try number(try value(t[5], "debounce")))
            return .requestInput(line: unescape(t[1]), chip: chip, offset: offset, settings: settings, result: try request(try answer()))
        case ("output", 6...):
            let (chip, offset) = try chipAndOffset(t[2])
            return .requestOutput(line: unescape(t[1]), chip: chip, offset: offset, activeLow: t[3] == "active-low",
                                  result: try request(try answer()))
        case ("reader", 4...):
            var inputs: [GPIORequestID] = []
            for id in t[1].split(separator: ",") { inputs.append(GPIORequestID(try number(String(id)))) }
            let a = try answer()
            return .startReader(inputs: inputs, error: a.first == "ok" ? nil : try error(Array(a)))
        case ("take", 3):
            let realtime: Bool? = switch try value(t[2], "realtime") { case "yes": true; case "no": false; default: nil }
            return .take(at: try number(t[1]), EdgeReads(reads: [], realtime: realtime))
        case ("set", 6):
            let a = try answer()
            return .setOutput(GPIORequestID(try number(t[1])), active: t[2] == "1", at: try number(try value(t[3], "at")),
                              errno: a.first == "ok" ? nil : try number(try value(a.first ?? "", "errno")))
        case ("stop", 1): return .stopReader
        case ("release", 2): return .release(GPIORequestID(try number(t[1])))
        default: throw fail("not an entry")
        }
    }

    private static func read(_ t: [String]) throws(GPIOTraceError) -> EdgeRead {
        func fail(_ token: String) -> GPIOTraceError { GPIOTraceError(line: 0, message: "read: bad token \"\(token)\"") }
        guard t.count >= 3, let input = Int(t[1]), let readAt = UInt64(t[2]) else { throw fail(t.dropFirst().joined(separator: " ")) }
        var read = EdgeRead(input: input, readAt: readAt, events: [])
        for token in t.dropFirst(3) {
            if token.hasPrefix("reread=") { read.reread = token.hasSuffix("=1"); continue }
            if token.hasPrefix("error=") {
                guard let e = Int32(token.dropFirst(6)) else { throw fail(token) }
                read.error = e
                continue
            }
            let level = token.prefix { $0 != "@" }
            let rest = token.dropFirst(level.count + 1)
            let stamp = rest.prefix { $0 != "+" }
            let lost = rest.dropFirst(stamp.count + 1)
            guard level == "0" || level == "1", let at = UInt64(stamp), lost.isEmpty || UInt32(lost) != nil else { throw fail(token) }
            read.events.append(.init(isActive: level == "1", at: at, lost: UInt32(lost) ?? 0))
        }
        return read
    }
}

/// A trace that cannot be read: which line and why.
public struct GPIOTraceError: Error, Equatable, Sendable, CustomStringConvertible {
    public var line: Int
    public var message: String
    public var description: String { "gpio trace line \(line): \(message)" }
}
