import SpeakerProtocol

extension Speaker {
    /// The `device` payload for the current state.
    var deviceDescriptor: DeviceDescriptor {
        let volume: VolumeDescriptor
        switch state.volume {
        case .absolute(let level): volume = .absolute(level: level, step: config.volume.step)
        case .relative: volume = .relative
        }
        return DeviceDescriptor(id: config.device.id, name: config.device.name, volume: volume,
                                audio: state.audio, underruns: state.underruns, software: environment.software,
                                problem: state.sessionWithheld.map { "session not published: \($0)" })
    }

    /// The actions accepted right now, so a phone shows only controls that work.
    var availableCommands: [String] {
        let s = state.session
        let canStart = state.audio == .ok
        var list: [String] = []
        if s.intendsPlayback { list.append("pause") } else if canStart { list.append("play") }
        if s.intendsPlayback || canStart { list.append("toggle") }
        if s.isActive { list.append("stop") }
        if canStart && state.catalog.count > 1 { list += ["next", "previous"] }
        if canStart { list.append("select") }
        if case .absolute = state.volume { list.append("setVolume") }
        list += ["volumeUp", "volumeDown"]
        return list
    }

    /// The session attributes for the current state with `device`, before
    /// revision and time are stamped.
    private func sessionSnapshot(device: DeviceDescriptor) -> SessionAttributes {
        let s = state.session
        return SessionAttributes(
            id: s.id, soundID: state.selectedSound.id, soundName: state.selectedSound.name,
            isPlaying: s.isPlaying, intendsPlayback: s.intendsPlayback, updatedAt: "", clockSynced: false,
            revision: 0, ended: !s.isActive, commands: availableCommands, devices: [device])
    }

    /// Publishes whatever changed since the last publication: `device`,
    /// `catalog`, and `session` with a new revision. Deferred while the engine
    /// has outstanding requests, so a published state is one the engine has
    /// reached; results of accepted commands wait for the publication that
    /// shows their change and leave just before it, naming its revision.
    /// `session` waits for a revision reservation to be confirmed, and is
    /// withheld while none can be made (`Speaker+Revisions`).
    mutating func publishChanges() {
        noteRevisionStanding()
        publishPending()
        reserveRevisionsIfDue()
        // The last reserved revision may just have gone out: say so now, so
        // the next command is refused before it changes anything.
        let withheld = state.sessionWithheld
        noteRevisionStanding()
        if withheld != state.sessionWithheld, state.outstanding.isEmpty, state.pendingLevels.isEmpty {
            let device = deviceDescriptor
            state.publishedDevice = device
            effects.append(.publish(retained(topics.device, device.serialized())))
        }
    }

    /// The state publications of one change and the results that waited for
    /// it, the results first: MQTT orders messages only within one topic, so
    /// a reader ties a result to its `session` by the `revision` in any case,
    /// and a result ahead of the state it names reaches the caller sooner —
    /// the broker would store and fan out `device` and `session` before
    /// forwarding a result queued behind them (README, "The result ahead of
    /// the state"). Both leave in the same dispatch.
    private mutating func publishPending() {
        guard state.outstanding.isEmpty, state.pendingLevels.isEmpty else { return }
        var publications: [Publication] = []
        defer { for publication in publications { effects.append(.publish(publication)) } }
        if state.publishedCatalog != state.catalog {
            state.publishedCatalog = state.catalog
            publications.append(retained(topics.catalog, CatalogEntry.serialized(state.catalog)))
        }
        let device = deviceDescriptor
        var deviceBytes: [UInt8]?
        if state.publishedDevice != device {
            state.publishedDevice = device
            let bytes = device.serialized()
            deviceBytes = bytes
            publications.append(retained(topics.device, bytes))
        }
        var session = sessionSnapshot(device: device)
        var previous = state.publishedSession
        previous?.revision = 0
        previous?.updatedAt = ""
        previous?.clockSynced = false
        if previous != session {
            switch state.revision.next() {
            case .revision(let revision):
                session.revision = revision
            case .waiting:
                return  // published (with the results waiting for it) once the reservation is confirmed
            case .unavailable(let reason):
                answerWithheldResults(reason)
                return
            }
            session.updatedAt = environment.wallClock().iso8601
            session.clockSynced = environment.clockSynced()
            state.publishedSession = session
            // The device part is the same descriptor: its bytes are copied.
            let publication = retained(topics.session, session.serialized(writtenDevice: deviceBytes))
            state.broker.publishedOwnSession(publication.payload)
            publications.append(publication)
        }
        let ready = resultsAwaitingPublish
        resultsAwaitingPublish = []
        for (origin, level) in ready {
            finish(.accepted(id: origin.id, revision: state.revision.current, level: level), for: origin)
        }
    }

    /// After a (re)connect, once the Home Assistant discovery config (or its
    /// removal) has gone out (`publishDiscovery`): the complete picture in
    /// contract order — `device`, `catalog`, `session`, then `availability` =
    /// `online` last.
    mutating func republishAll() {
        if let device = state.publishedDevice { effects.append(.publish(retained(topics.device, device.serialized()))) }
        if let catalog = state.publishedCatalog { effects.append(.publish(retained(topics.catalog, CatalogEntry.serialized(catalog)))) }
        if let session = state.publishedSession { effects.append(.publish(retained(topics.session, session.serialized()))) }
        effects.append(.publish(Publication(topic: topics.availability, payload: SpeakerTopics.online, qos: 1, retain: true)))
    }

    private func retained(_ topic: String, _ payload: [UInt8]) -> Publication {
        Publication(topic: topic, payload: payload, qos: 1, retain: true)
    }
}
