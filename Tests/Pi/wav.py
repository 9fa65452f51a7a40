# SPDX-License-Identifier: Apache-2.0
"""The measurements of Tests/Pi/run on the wav files QEMU's usb-audio records.

  wav.py tone FILE            the 440 Hz tone aplay played (level, the tone's share)
  wav.py noise FILE REF       the speaker's pink noise against a render of the
                              same sound at the same level (RMS and octave bands)
  wav.py level FILE           the longest stretch of sound: its length, RMS and
                              octave bands (when there is no render to compare with)
  wav.py first-sound FILE PID T0
                              follows FILE while QEMU (PID) runs; prints the
                              seconds from T0 (the host's clock at QEMU's
                              launch) to the moment the first non-silent frame
                              reached the file, and that frame's offset in it

QEMU writes the header first and its sizes at exit: the fmt chunk is read and
every byte after "data" taken. A stretch of sound ends at a gap of 50 ms (a
failed attempt, or a pause, is its own stretch). Standard library only.
Each mode prints one line; exit 0 when it holds, 1 otherwise.
"""
import cmath
import math
import os
import struct
import sys
import time

SILENT = 100  # |sample| at or below this (-50 dBFS) is silence


def read(path):
    data = open(path, "rb").read()
    rate = struct.unpack_from("<I", data, 24)[0]
    channels = struct.unpack_from("<H", data, 22)[0]
    body = data[data.find(b"data") + 8:]
    samples = struct.unpack("<%dh" % (len(body) // 2), body[: len(body) // 2 * 2])
    return rate, list(samples[0::channels])


def stretches(left, rate, floor):
    loud = [i for i, v in enumerate(left) if abs(v) > floor]
    runs = []
    if not loud:
        return runs
    start = loud[0]
    for a, b in zip(loud, loud[1:] + [None]):
        if b is None or b - a > rate // 20:
            runs.append((start, a))
            start = b
    return runs


def rms_db(seg):
    return 20 * math.log10(max(math.sqrt(sum(v * v for v in seg) / len(seg)) / 32768, 1e-9))


def fft(x):
    n = len(x)
    if n == 1:
        return x
    even, odd = fft(x[0::2]), fft(x[1::2])
    tw = [cmath.exp(-2j * math.pi * k / n) * odd[k] for k in range(n // 2)]
    return [even[k] + tw[k] for k in range(n // 2)] + [even[k] - tw[k] for k in range(n // 2)]


def octave_bands(seg, rate, centres=(125, 250, 500, 1000, 2000, 4000, 8000), size=4096, windows=12):
    """Power per octave band (dB, relative to the loudest band), Welch-averaged."""
    hann = [0.5 - 0.5 * math.cos(2 * math.pi * i / size) for i in range(size)]
    step = max(size, (len(seg) - size) // windows)
    psd = [0.0] * (size // 2)
    count = 0
    for start in range(0, len(seg) - size + 1, step):
        spec = fft([seg[start + i] * hann[i] for i in range(size)])
        for k in range(size // 2):
            psd[k] += abs(spec[k]) ** 2
        count += 1
    bands = []
    for c in centres:
        lo, hi = int(c / math.sqrt(2) * size / rate), int(c * math.sqrt(2) * size / rate)
        bands.append(sum(psd[lo:hi + 1]) / max(count, 1))
    top = max(bands)
    return [10 * math.log10(max(b, 1e-12) / top) for b in bands]


def goertzel(seg, rate, f):
    k = 2 * math.cos(2 * math.pi * f / rate)
    a = b = 0.0
    for v in seg:
        a, b = v + k * a - b, a
    return a * a + b * b - k * a * b


def tone(path):
    """The tone's stretches of sound, added up: under TCG a loaded host makes
    QEMU's usb-audio lose packets, which splits the 2 s into stretches
    separated by gaps, or starts the recording late. Each stretch of at least
    0.1 s must be mostly 440 Hz; together they must hold over 0.5 s at the
    level played (the check is of the path, pitch and level: how much of the
    tone survives is QEMU's timing under load; 0.92-0.98 s of 2 s on a
    loaded 2-core host, 1.2-1.9 s on a quiet one)."""
    rate, left = read(path)
    runs = [r for r in stretches(left, rate, 1000) if r[1] - r[0] > rate // 10]
    tones = []
    for first, last in runs:
        seg = left[first: last + 1]
        probe = seg[:rate]
        others = max(goertzel(probe, rate, f) for f in (220, 330, 660, 880, 1000, 2000))
        ratio = goertzel(probe, rate, 440) / max(others, 1e-9)
        if ratio > 100:
            tones.append((seg, ratio))
    if not tones:
        print("no stretch of 440 Hz: %d frames at %d Hz, %d stretch(es) of sound" % (len(left), rate, len(runs)))
        return 1
    heard = [v for seg, _ in tones for v in seg]
    db = rms_db(heard)
    ratio = min(r for _, r in tones)
    print("%.2f s of the 2.00 s played reached the host at %d Hz in %d stretch(es) (longest %.2f s), "
          "RMS %.1f dBFS (played: -9.0), 440 Hz at least %.0f dB above the strongest other probe"
          % (len(heard) / rate, rate, len(tones), max(len(s) for s, _ in tones) / rate, db, 10 * math.log10(ratio)))
    return 0 if -12 < db < -6 and len(heard) > rate // 2 else 1


def noise(path, ref_path):
    rate, left = read(path)
    ref_rate, ref = read(ref_path)
    # The speaker's sound is the file's last: QEMU writes nothing while the
    # guest plays nothing, so it follows the tone without a gap. Its last
    # 4.5 s but the fade-out at SIGTERM (0.5 s).
    runs = [r for r in stretches(left, rate, SILENT) if r[1] - r[0] > 5 * rate]
    if not runs:
        print("no stretch of sound over 5 s from the speaker (%d frames at %d Hz)" % (len(left), rate))
        return 1
    last = runs[-1][1]
    seg = left[last - 9 * rate // 2: last - rate // 2]
    ref_seg = ref[ref_rate // 2:]
    db, ref_db = rms_db(seg), rms_db(ref_seg)
    bands, ref_bands = octave_bands(seg, rate), octave_bands(ref_seg, ref_rate)
    worst = max(abs(a - b) for a, b in zip(bands, ref_bands))
    slope = (bands[-1] - bands[0]) / (len(bands) - 1)
    print("%.2f s of sound at RMS %.1f dBFS (the render: %.1f dBFS); octave bands 125 Hz-8 kHz %s dB "
          "(the render: %s), at most %.1f dB apart, %.1f dB per octave"
          % (len(seg) / rate, db, ref_db, " ".join("%.1f" % b for b in bands),
             " ".join("%.1f" % b for b in ref_bands), worst, slope))
    return 0 if abs(db - ref_db) < 1.5 and worst < 3.0 and len(seg) > rate else 1


def level(path):
    """The longest stretch of sound above -50 dBFS: what a play command left in the wav."""
    rate, left = read(path)
    runs = stretches(left, rate, SILENT)
    if not runs:
        print("no sound in %s (%d frames at %d Hz)" % (path, len(left), rate))
        return 1
    first, last = max(runs, key=lambda r: r[1] - r[0])
    seg = left[first: last + 1]
    core = seg[rate // 2: -rate // 2] if len(seg) > 2 * rate else seg
    bands = octave_bands(core, rate) if len(core) >= 4096 else []
    print("%.2f s of sound (the longest of %d stretches) at RMS %.1f dBFS, peak %.1f dBFS; "
          "octave bands 125 Hz-8 kHz %s dB"
          % (len(seg) / rate, len(runs), rms_db(core), 20 * math.log10(max(max(abs(v) for v in seg), 1) / 32768),
             " ".join("%.1f" % b for b in bands)))
    return 0 if len(seg) > 3 * rate and rms_db(core) > -40 else 1


def first_sound(path, pid, t0):
    """Reads FILE as QEMU writes it; the host's time of the first loud frame."""
    pos, header, frame, found = 0, None, 0, None
    alive = True
    while alive:
        alive = os.path.exists("/proc/%d" % pid)
        try:
            with open(path, "rb") as f:
                f.seek(pos)
                chunk = f.read()
        except FileNotFoundError:
            chunk = b""
        now = time.time()
        if chunk:
            if header is None:
                header = chunk
                if b"data" not in header or len(header) < 44:
                    header = None
                    time.sleep(0.01)
                    continue
                channels = struct.unpack_from("<H", header, 22)[0]
                rate = struct.unpack_from("<I", header, 24)[0]
                start = header.find(b"data") + 8
                pos, chunk = start, chunk[start:]
                bytes_per_frame = 2 * channels
                pending = b""
            data = pending + chunk
            usable = len(data) // bytes_per_frame * bytes_per_frame
            pending = data[usable:]
            pos += len(chunk)
            if found is None:
                samples = struct.unpack("<%dh" % (usable // 2), data[:usable])
                for i in range(0, len(samples), channels):
                    if abs(samples[i]) > SILENT:
                        found = (now - t0, frame + i // channels)
                        break
                frame += usable // bytes_per_frame
        if found is not None:
            break
        time.sleep(0.01)
    if found is None:
        print("no sound reached %s while QEMU ran" % path)
        return 1
    print("%.2f s %d" % (found[0], found[1]))
    return 0


def main(argv):
    if argv[1:2] == ["tone"]:
        return tone(argv[2])
    if argv[1:2] == ["noise"]:
        return noise(argv[2], argv[3])
    if argv[1:2] == ["level"]:
        return level(argv[2])
    if argv[1:2] == ["first-sound"]:
        return first_sound(argv[2], int(argv[3]), float(argv[4]))
    print(__doc__)
    return 2


sys.exit(main(sys.argv))
