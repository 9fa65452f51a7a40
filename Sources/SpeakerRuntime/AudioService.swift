// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import SpeakerLoop
import SpeakerPorts
import SpeakerProtocol
import Ambience

/// The audio seam: the engine (``AudioOutput``), the sounds it plays
/// (``SoundLibrary``: the catalog and the read-ahead thread for file sounds),
/// and in `alsa-mixer` mode the mixer element (``MixerElement``). Performs
/// `.audio` effects; engine and mixer reports go to the core as `.engine`
/// actions. Stops in reverse: engine (fade out, close), read-ahead thread,
/// mixer. Loop thread only.
public final class AudioService: SpeakerService {
    public let name = "audio"
    /// Software volume changes ramp over this long, so a fast knob never zippers.
    public static let levelRampMs = 60
    /// Mute and unmute ramp over this long: quick, yet no click.
    public static let muteRampMs = 150
    /// The longest fade-out on SIGTERM, so fade + `offline` fit in 2 s.
    public static let shutdownFadeLimitMs = 500

    private let engine: any AudioOutput
    private let sounds: any SoundLibrary
    private let loop: any EventLoopProtocol
    private let logger: Logger
    private let openMixer: MixerOpener?
    private var phase: ServicePhase<Running> = .idle
    private weak var context: ServiceContext?
    private var fadeMs: Int
    /// The engine requests of the dispatch under way, sent when it ends
    /// (`observe`): after a command's result has been written, so waking
    /// the audio thread (an eventfd write; on a paced output it runs at
    /// once, SCHED_FIFO) is not on the command's path. Nothing the core
    /// publishes waits on it: tickets answer later, and a software level is
    /// published when the core sets it.
    private var held: [AudioEngineRequest] = []
    /// The mixes the core named (`AudioRequest.mixes`), playable by id.
    private var mixes: [String: MixDefinition] = [:]
    /// The last mix source sent to the engine and its id, for
    /// `setLayerLevel` (nil once a sound was asked for instead).
    private var playingMix: (id: String, source: MixSource)?
    /// Mixes last built without some layer: the core hears when they play whole again.
    private var mixesMissingLayers: Set<String> = []
    /// A layer level changes this fast (ms for a full 0 → 1 move), so a
    /// slider dragged quickly never clicks.
    public static let layerRampMs = 100

    /// What `start` opened, all of it at once.
    private struct Running {
        /// The engine's report fd on the loop.
        var registration: LoopRegistration
        /// The mixer element, only in `alsa-mixer` volume mode.
        var mixer: (any MixerElement)?
    }

    /// `mixer`: opens the element in `alsa-mixer` mode (nil: software gain).
    public init(engine: any AudioOutput, sounds: any SoundLibrary, mixer: MixerOpener?,
                fadeMs: Int, loop: any EventLoopProtocol, logger: Logger) {
        self.engine = engine
        self.sounds = sounds
        self.openMixer = mixer
        self.fadeMs = fadeMs
        self.loop = loop
        self.logger = logger
    }

    public func start(_ context: ServiceContext) throws(StartupError) {
        self.context = context
        sounds.start()
        do {
            try engine.startOutput()
        } catch {
            throw StartupError(exitCode: 2, message: "audio: \(error)")
        }
        var mixer: (any MixerElement)?
        if let openMixer {
            do {
                mixer = try openMixer { [unowned self] reading in
                    guard let context = self.context else { return }
                    context.send(.engine(.mixerReading(db: reading.db, level: reading.level, ownWrite: false), at: context.now()))
                }
            } catch {
                engine.shutdown(fadeMs: 0)
                sounds.shutdown()
                throw StartupError(exitCode: 2, message: "volume.mixer: \(error); `ambient-speaker devices` lists the elements")
            }
        }
        let registration = loop.addReader(fd: engine.reportFD) { [unowned self] in self.engineReports() }
        phase = .running(Running(registration: registration, mixer: mixer))
    }

    /// Hands the dispatch's requests to the engine, in order (see `held`).
    public func observe(_ state: SpeakerState) {
        fadeMs = state.config.audio.fadeMs
        let requests = held
        held.removeAll(keepingCapacity: true)
        for request in requests where !engine.send(request) {
            logger.error("the audio engine did not take \(request)")
        }
    }

    public func stop() {
        guard case .running(let running) = phase else { return }
        phase = .stopped
        loop.remove(running.registration)
        engine.shutdown(fadeMs: min(fadeMs, Self.shutdownFadeLimitMs))
        sounds.shutdown()
        running.mixer?.close()
        context = nil
    }

    /// A sound without a source goes back to the core (`.noSource`), which decides what the engine does instead.
    private func noSource(_ id: String, _ problem: SoundUnavailable, fadeMs: Int, ticket: UInt64) {
        guard let context else { return }
        context.send(.engine(.noSource(soundID: id, reason: problem.reason, fadeMs: fadeMs, ticket: ticket), at: context.now()))
    }

    /// Carries out the core's audio request: engine requests wait for the
    /// end of the dispatch (`held`); a mixer write and a missing source are
    /// answered at once, after this action's effects.
    func perform(_ request: AudioRequest) {
        switch request {
        case let .play(id, fadeMs, ticket) where playingMix?.id == id:
            // The engine still holds this mix (paused, or its device came
            // back): resume it rather than open every layer's file again.
            hold(.play(nil, fadeMs: fadeMs, ticket: ticket))
        case let .play(id, fadeMs, ticket):
            switch source(id: id) {
            case .success(let s): hold(.play(s, fadeMs: fadeMs, ticket: ticket))
            case .failure(let problem): noSource(id, problem, fadeMs: fadeMs, ticket: ticket)
            }
        case let .switchTo(id, crossfadeMs, ticket):
            switch source(id: id) {
            case .success(let s): hold(.switchTo(s, crossfadeMs: crossfadeMs, ticket: ticket))
            case .failure(let problem): noSource(id, problem, fadeMs: crossfadeMs, ticket: ticket)
            }
        case let .resume(fadeMs, ticket):
            hold(.play(nil, fadeMs: fadeMs, ticket: ticket))
        case let .pause(fadeMs, ticket):
            hold(.pause(fadeMs: fadeMs, ticket: ticket))
        case .setLevel(let level):
            hold(.setLevel(level, rampMs: Self.levelRampMs))
        case let .longFade(multiplier, overMs, ticket):
            hold(.longFade(to: multiplier, overMs: overMs, ticket: ticket))
        case .setMuted(let muted):
            hold(.setMuted(muted, rampMs: Self.muteRampMs))
        case .mixes(let list):
            let table = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            // A mix saved again is built afresh the next time it plays.
            if let playing = playingMix, table[playing.id] != mixes[playing.id] { playingMix = nil }
            mixes = table
        case let .setLayerLevel(soundID, level):
            // An atomic store the audio thread reads at its next block: no
            // queue, so it also reaches a source still on its way there.
            if let playingMix, !playingMix.source.setLevel(soundID: soundID, level: level) {
                logger.warning("mix \"\(playingMix.id)\" has no layer \"\(soundID)\"")
            }
        case let .setMixerLevel(level, ticket):
            // The ticket's answer runs after this action's effects.
            var reports: [EngineReport] = []
            if case .running(let running) = phase, let mixer = running.mixer {
                let (result, reading) = mixer.write(level: level)
                switch result {
                case .success: reports.append(.levelSet(ticket: ticket))
                case .failure(let failure): reports.append(.levelFailed(ticket: ticket, reason: failure.reason, actual: failure.actual))
                }
                reports.append(.mixerReading(db: reading.db, level: reading.level, ownWrite: true))
            } else {
                reports.append(.levelFailed(ticket: ticket, reason: "the mixer is not open", actual: nil))
            }
            if let context { for report in reports { context.send(.engine(report, at: context.now())) } }
        }
    }

    /// A fresh source for the sound or mix `id`. A mix's layers are made one
    /// by one; a layer that cannot be made is left out and the core told
    /// which (`.mixLayers`), and only a mix with no layer left has no source.
    private func source(id: String) -> Result<any SoundSource, SoundUnavailable> {
        guard let mix = mixes[id] else {
            playingMix = nil
            return sounds.source(id: id, sampleRate: engine.sampleRate)
        }
        var layers: [(id: String, source: SoundSource, level: Double)] = []
        var dropped: [DroppedLayer] = []
        for layer in mix.layers {
            switch sounds.source(id: layer.soundID, sampleRate: engine.sampleRate) {
            case .success(let s): layers.append((layer.soundID, s, layer.level))
            case .failure(let problem): dropped.append(DroppedLayer(soundID: layer.soundID, reason: problem.reason))
            }
        }
        // Only news reaches the core (no extra pass on every switch to a mix).
        if !dropped.isEmpty || mixesMissingLayers.contains(id), let context {
            context.send(.engine(.mixLayers(mixID: id, dropped: dropped), at: context.now()))
        }
        if dropped.isEmpty { mixesMissingLayers.remove(id) } else { mixesMissingLayers.insert(id) }
        guard !layers.isEmpty else {
            playingMix = nil
            return .failure(SoundUnavailable(reason: "has no layer that can be played"))
        }
        let source = MixSource(layers: layers, rampFrames: engine.sampleRate * Self.layerRampMs / 1000)
        playingMix = (id, source)
        return .success(source)
    }

    /// Queues `request` for the end of the dispatch.
    private func hold(_ request: AudioEngineRequest) {
        held.append(request)
    }

    /// Drains the audio engine's reports into the core.
    private func engineReports() {
        guard let context else { return }
        for report in engine.drainReports() {
            switch report {
            case .playing(let ticket): context.send(.engine(.playing(ticket: ticket), at: context.now()))
            case .paused(let ticket): context.send(.engine(.paused(ticket: ticket), at: context.now()))
            case .longFadeDone(let ticket): context.send(.engine(.longFadeDone(ticket: ticket), at: context.now()))
            case .deviceAvailable: context.send(.engine(.available, at: context.now()))
            case .deviceUnavailable(let reason): context.send(.engine(.unavailable(reason: reason), at: context.now()))
            case .underruns(let total): context.send(.engine(.underruns(total: total), at: context.now()))
            case .realtimeScheduling, .rewindUnavailable, .rewinds:
                break  // logged by the engine
            case .retired(let source):
                if let mix = source as? MixSource {
                    for layer in mix.layerSources { sounds.retired(layer) }
                } else {
                    sounds.retired(source)
                }
                // Released here, on the loop thread, as the report goes out of scope.
            }
        }
    }
}
