// SPDX-License-Identifier: Apache-2.0
/// An image file the sounds adapter found for a catalog entry, as it read
/// it: the core decides whether it is taken (`ArtworkImage.validate`).
public struct ArtworkFile: Equatable, Sendable {
    /// What reading the file gave.
    public enum Contents: Equatable, Sendable {
        case bytes([UInt8])
        /// It could not be read (the reason, e.g. a permission or a file over the adapter's read limit).
        case unreadable(String)
    }

    /// The catalog entry it belongs to (`rain.png` beside `rain.flac`: the file sound's id).
    public var soundID: String
    public var path: String
    public var contents: Contents

    public init(soundID: String, path: String, contents: Contents) {
        self.soundID = soundID
        self.path = path
        self.contents = contents
    }
}

/// Why an image was not taken, in words for the log and the catalog entry.
public struct ArtworkRefusal: Error, Equatable, Sendable {
    public var reason: String
}

/// A catalog entry's image as published on `{root}/artwork/{id}`: a PNG or
/// JPEG of at most `maxBytes`, its structure checked so that a truncated
/// or damaged file is refused at load instead of reaching a phone.
public struct ArtworkImage: Equatable, Sendable {
    public enum Format: String, Equatable, Sendable { case png, jpeg }

    /// The largest image taken: 64 KiB, so one retained message per entry stays small for brokers and phones.
    public static let maxBytes = 65_536

    public let format: Format
    public let bytes: [UInt8]

    /// The image in `bytes`, or why not: the type by its magic bytes (PNG or
    /// JPEG), the size, and the structure (PNG: every chunk's length and CRC,
    /// IHDR first, IEND last; JPEG: the segments up to the scan, the end marker).
    public static func validate(_ bytes: [UInt8]) -> Result<ArtworkImage, ArtworkRefusal> {
        guard bytes.count <= maxBytes else {
            return .failure(ArtworkRefusal(reason: "\(bytes.count) bytes, over the \(maxBytes)-byte limit"))
        }
        let problem: String?
        let format: Format
        if bytes.starts(with: pngSignature) {
            format = .png
            problem = PNGCheck.problem(bytes)
        } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            format = .jpeg
            problem = JPEGCheck.problem(bytes)
        } else {
            let head = bytes.prefix(8).map { hex($0) }.joined(separator: " ")
            return .failure(ArtworkRefusal(reason: bytes.isEmpty ? "empty file" : "not a PNG or JPEG (starts with \(head))"))
        }
        if let problem { return .failure(ArtworkRefusal(reason: "corrupt \(format == .png ? "PNG" : "JPEG"): \(problem)")) }
        return .success(ArtworkImage(format: format, bytes: bytes))
    }

    public static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}

/// The PNG structure: chunks from byte 8, each length + type + data + CRC-32.
enum PNGCheck {
    static func problem(_ bytes: [UInt8]) -> String? {
        var offset = 8
        var first = true
        while true {
            guard offset + 12 <= bytes.count else { return "truncated at byte \(offset) (no IEND chunk)" }
            let length = Int(bigEndian32(bytes, offset))
            guard length <= bytes.count - offset - 12 else { return "chunk at byte \(offset) runs past the end of the file" }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if first && (type != "IHDR" || length != 13) { return "the first chunk is not a 13-byte IHDR" }
            first = false
            let crc = CRC32.checksum(bytes[(offset + 4)..<(offset + 8 + length)])
            guard crc == bigEndian32(bytes, offset + 8 + length) else { return "chunk \(type) at byte \(offset): bad CRC" }
            offset += 12 + length
            if type == "IEND" {
                return offset == bytes.count ? nil : "\(bytes.count - offset) bytes after IEND"
            }
        }
    }

    static func bigEndian32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 8 | UInt32(bytes[at + i]) }
        return value
    }
}

/// The JPEG structure: marker segments after SOI up to the start of scan,
/// a frame header among them, and EOI as the last two bytes.
enum JPEGCheck {
    static func problem(_ bytes: [UInt8]) -> String? {
        var offset = 2
        var sawFrame = false
        while true {
            guard offset + 4 <= bytes.count else { return "truncated at byte \(offset) (no start of scan)" }
            guard bytes[offset] == 0xFF else { return "no marker at byte \(offset)" }
            let marker = bytes[offset + 1]
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { return "segment at byte \(offset) runs past the end of the file" }
            if (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC { sawFrame = true }
            offset += 2 + length
            if marker == 0xDA { break }
        }
        guard sawFrame else { return "no frame header before the scan" }
        guard bytes.count >= offset + 2, bytes[bytes.count - 2] == 0xFF, bytes[bytes.count - 1] == 0xD9 else {
            return "truncated (no end-of-image marker)"
        }
        return nil
    }
}

/// CRC-32 (ISO 3309, as PNG uses it), bit by bit: images are checked once at load.
enum CRC32 {
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
