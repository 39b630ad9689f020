import XMPPCore

/// A room's latest messages, for people who join (XEP-0045 §7.2.15): a
/// ring of at most `capacity` entries, each stored ready to send (`from`
/// the occupant's room address, with `<delay from=room/>`), so that a
/// message sent to the room costs one append whatever the history holds;
/// a message is measured for `maxchars` only when a join asks for it.
struct MUCHistory: Sendable {
    /// One remembered message.
    struct Entry: Sendable {
        /// The message as occupants get it, without `to`, with its delay.
        var message: Element
        /// When the room got it, in milliseconds since 1970.
        var received: Int
    }

    /// How much history a joining occupant asked for (`<history/>` in the
    /// join's `<x xmlns='…muc'/>`, §7.2.15); every limit applies.
    struct Request: Equatable, Sendable {
        var maxStanzas: Int?
        var maxCharacters: Int?
        /// Only messages received at or after this, in milliseconds since 1970.
        var notBefore: Int?

        /// The limits of `history` (`maxstanzas`, `maxchars`, `seconds`,
        /// `since`), measured from `now`; a missing element or attribute
        /// does not limit, and an unreadable one is ignored.
        init(_ history: Element?, now: Int) {
            guard let history else { return }
            maxStanzas = history[attribute: "maxstanzas"].flatMap { Int($0) }.map { max(0, $0) }
            maxCharacters = history[attribute: "maxchars"].flatMap { Int($0) }.map { max(0, $0) }
            // Clamped first: a client's number times 1000 must not overflow.
            let seconds = history[attribute: "seconds"].flatMap { Int($0) }.map { now - min(max(0, $0), now / 1000) * 1000 }
            let since = history[attribute: "since"].flatMap(DateTimeProfile.milliseconds(from:))
            notBefore = [seconds, since].compactMap { $0 }.max()
        }

        /// No limit.
        init() {}
    }

    /// The most entries kept; 0 keeps none.
    let capacity: Int
    private var entries: [Entry] = []
    /// Where the oldest entry is once the ring is full.
    private var start = 0

    /// An empty history keeping at most `capacity` messages.
    init(capacity: Int) {
        self.capacity = capacity
        entries.reserveCapacity(min(capacity, 64))
    }

    /// This history keeping at most `capacity` messages: the newest of
    /// those it has.
    func resized(to capacity: Int) -> MUCHistory {
        var resized = MUCHistory(capacity: capacity)
        let count = entries.count
        for offset in max(0, count - capacity)..<count {
            let entry = entries[(start + offset) % count]
            resized.append(entry)
        }
        return resized
    }

    /// Remembers `message`, received at `received`, forgetting the oldest
    /// one when full.
    mutating func append(_ message: Element, received: Int) {
        append(Entry(message: message, received: received))
    }

    private mutating func append(_ entry: Entry) {
        guard capacity > 0 else { return }
        if entries.count < capacity {
            entries.append(entry)
        } else {
            entries[start] = entry
            start = (start + 1) % capacity
        }
    }

    /// Replaces the message whose `<stanza-id by/>` has `id` by what
    /// `change` makes of it, as a moderator's retraction does (XEP-0425).
    mutating func update(stanzaID id: String, by room: JID, _ change: (Element) -> Element) {
        let by = room.description
        guard let index = entries.firstIndex(where: { entry in
            entry.message.elements.contains {
                $0.name == "stanza-id" && $0.namespace == NS.stanzaID && $0[attribute: "id"] == id
                    && $0[attribute: "by"] == by
            }
        }) else { return }
        entries[index].message = change(entries[index].message)
    }

    /// The messages `request` asks for, oldest first: the newest ones
    /// that fit all its limits together.
    func messages(for request: Request) -> [Element] {
        var picked: [Element] = []
        var characters = 0
        for offset in stride(from: entries.count - 1, through: 0, by: -1) {
            let entry = entries[(start + offset) % entries.count]
            if let limit = request.maxStanzas, picked.count >= limit { break }
            if let notBefore = request.notBefore, entry.received < notBefore { break }
            if let limit = request.maxCharacters {
                let length = (try? XMLSerializer.string(entry.message).count) ?? 0
                guard characters + length <= limit else { break }
                characters += length
            }
            picked.append(entry.message)
        }
        return picked.reversed()
    }
}
