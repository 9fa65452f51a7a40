// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// What the other domains contribute to a publication, and carrying out
/// the publishing domain's steps (`PublishingState.publishChanges` states
/// their order).
extension Speaker {
    /// The actions accepted right now, so a phone shows only controls that work.
    var availableCommands: [String] {
        let transport = state.transport
        let s = transport.session
        let canStart = transport.audio == .ok
        var list: [String] = []
        if s.intendsPlayback { list.append("pause") } else if canStart { list.append("play") }
        if s.intendsPlayback || canStart { list.append("toggle") }
        if s.isActive { list.append("stop") }
        if canStart && transport.catalog.count > 1 { list += ["next", "previous"] }
        if canStart { list.append("select") }
        if case .absolute = state.volume.level { list.append("setVolume") }
        list += ["volumeUp", "volumeDown"]
        if s.intendsPlayback { list.append("setSleepTimer") }
        if state.sleepTimer.running != nil { list.append("cancelSleepTimer") }
        list.append(state.mute.muted ? "unmute" : "mute")
        list.append("setSchedules")
        if !state.schedule.rules.isEmpty { list.append("setScheduleEnabled") }
        if case .absolute = state.volume.level { list.append("setNightCap") }
        return list + availableMixCommands
    }

    /// The state as the publishing domain sees it, or nil while the engine
    /// has requests outstanding (nothing is published then, so nothing is built).
    private var publicationView: PublicationView? {
        guard state.transport.outstanding.isEmpty, state.volume.pendingLevels.isEmpty else { return nil }
        let transport = state.transport
        let volume: VolumeDescriptor
        switch state.volume.level {
        case .absolute(let level):
            let cap = cappedVolume.maxLevel
            volume = .absolute(level: level, step: config.volume.step, maxLevel: cap,
                               capSource: cap < config.volume.maxLevel ? .night : .config)
        case .relative: volume = .relative
        }
        let schedule = state.schedule
        let nightCap = schedule.nightCap.map {
            NightCapDescriptor(from: ScheduleRule.clockText($0.from), to: ScheduleRule.clockText($0.to),
                               maxLevel: $0.maxLevel, active: schedule.nightActive)
        }
        let device = DeviceDescriptor(id: config.device.id, name: config.device.name, volume: volume,
                                      audio: transport.audio, underruns: transport.underruns,
                                      software: environment.software,
                                      problem: state.mixes.problem.flatMap { $0.mixID == transport.selectedSound.id ? $0.text : nil },
                                      muted: state.mute.muted, nightCap: nightCap, epoch: state.publishing.revision.epoch)
        let s = transport.session
        var session = SessionAttributes(
            id: s.id, soundID: transport.selectedSound.id, soundName: transport.selectedSound.name,
            isPlaying: s.isPlaying, intendsPlayback: s.intendsPlayback, updatedAt: "", clockSynced: false,
            revision: 0, ended: !s.isActive, commands: availableCommands, devices: [],
            sleepTimer: state.sleepTimer.attributes)
        session.layers = state.mixes.playingLayers(id: transport.selectedSound.id)
        return PublicationView(catalog: state.artwork.decorate(transport.catalog), artwork: state.artwork,
                               device: device, session: session, topics: topics,
                               wallClock: environment.wallClock, clockSynced: environment.clockSynced,
                               schedule: SchedulesSnapshot(schedule))
    }

    /// Publishes whatever changed since the last publication, with the
    /// results that waited for it (see `PublishingState.publishChanges`).
    mutating func publishChanges() -> [SpeakerEffect] {
        var effects: [SpeakerEffect] = []
        for step in state.publishing.publishChanges(publicationView) {
            switch step {
            case let .result(result, origin):
                effects += state.commands.finish(result, for: origin, topics)
            case .session(let publication):
                state.link.broker.publishedOwnSession(publication.payload)
                effects.append(.publish(publication))
            case .effect(let effect):
                effects.append(effect)
            }
        }
        return effects
    }

    /// The discovery config for the running configuration (see `HomeAssistantDiscovery`).
    public var homeAssistantDiscovery: HomeAssistantDiscovery {
        HomeAssistantDiscovery(config: config, catalog: state.transport.catalog, volume: state.volume.level,
                               software: environment.software, bedside: homeAssistantBedside)
    }

    /// Publishes the discovery config (or its removal when disabled); any
    /// re-send that was waiting is this one.
    mutating func publishDiscovery() -> [SpeakerEffect] {
        state.link.discoverySent(discoveryInputs)
        return [.publish(homeAssistantDiscovery.publication)]
    }
}
