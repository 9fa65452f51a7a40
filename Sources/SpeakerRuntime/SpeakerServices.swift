// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerLoop

/// The speaker's services, each seam by name, and the one place an effect
/// finds its service: an exhaustive `switch` over ``SpeakerEffect`` (no
/// `default`), so an effect the core gains does not compile until it has a
/// route. Start order: systemd, persistence, audio, board, the front ends,
/// MQTT (stopped in reverse). Loop thread only.
public struct SpeakerServices {
    public let systemd: SystemdService
    public let persistence: PersistenceService
    public let audio: AudioService
    public let board: BoardService
    public let mqtt: MQTTService
    /// Services that perform no effect, started after the board and before
    /// MQTT (the demo console).
    public let frontEnds: [any SpeakerService]

    public init(systemd: SystemdService, persistence: PersistenceService, audio: AudioService, board: BoardService,
                frontEnds: [any SpeakerService] = [], mqtt: MQTTService) {
        self.systemd = systemd
        self.persistence = persistence
        self.audio = audio
        self.board = board
        self.frontEnds = frontEnds
        self.mqtt = mqtt
    }

    /// The services in start order.
    public var startOrder: [any SpeakerService] {
        [systemd, persistence, audio, board] + frontEnds + [mqtt]
    }

    /// Performs `effect` through the service whose seam it is; the core's
    /// log lines go to `logger`.
    func perform(_ effect: SpeakerEffect, logger: Logger) {
        switch effect {
        case .audio(let request): audio.perform(request)
        case .amp(let pulse): board.perform(pulse)
        case .statusLed(let pattern): board.perform(pattern)
        case .publish(let publication): mqtt.publish(publication)
        case .reserveRevisions(let through): persistence.reserveRevisions(through: through)
        case .saveState(let state): persistence.save(state)
        case .saveMixes(let mixes): persistence.save(mixes)
        case .saveJournal(let journal): persistence.save(journal)
        case let .log(level, message): logger.log(level.systemLevel, message)
        }
    }
}
