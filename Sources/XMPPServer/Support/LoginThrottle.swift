import Synchronization

/// Bounds password guessing (RFC 6120 §6.4.5 asks for a limit on retries)
/// without locking out the owner of an account or the other users of an
/// address.
///
/// Failed logins (a wrong password, an unknown user, a broken exchange,
/// `<abort/>`) count twice, in fixed windows: per address block (an IPv4
/// address, an IPv6 /64) under `login_throttle`, against one host trying
/// many accounts; and per account under `login_account_throttle`, against
/// many hosts trying one account. A success clears the count of its own
/// account and nothing else: were it to clear its address's count too, an
/// attacker could log in to an account of his own between guesses.
///
/// Past a limit an attempt is delayed, not refused. A full address block or
/// account gets one answer per `period / count` (30 s for `10 per 5m`),
/// counting from the failure that filled it, however many connections ask
/// at once: the configured rate holds. The credentials are still checked
/// when the slot comes, so the right password logs in, later rather than
/// never, even from an address shared with an attacker. Only an attempt
/// that would wait more than one spacing (because others hold the next
/// slots) is turned away with `temporary-auth-failure`, so that slots
/// cannot be claimed far ahead.
///
/// Shared by all loops; both tables are bounded (`ThrottleWindows`).
public final class LoginThrottle: Sendable {
    /// What to do with a login attempt.
    public enum Admission: Equatable, Sendable {
        /// Check the credentials now.
        case now
        /// Check them, and so answer, after this wait.
        case after(Duration)
        /// Refuse without checking them: the next slots are taken.
        case busy(retryAfter: Duration)
    }

    /// The counts per address block and per account; nil for a limit that is off.
    private let windows: Mutex<(addresses: ThrottleWindows?, accounts: ThrottleWindows?)>

    /// Creates a throttle with a limit per address block and one per
    /// account; `nil` turns a limit off. Each tracks at most `capacity` keys.
    public init(
        perAddress: ServerConfig.Throttle?, perAccount: ServerConfig.Throttle?,
        capacity: Int = AddressThrottle.defaultCapacity
    ) {
        windows = Mutex(
            (perAddress.map { ThrottleWindows($0, capacity: capacity) },
             perAccount.map { ThrottleWindows($0, capacity: capacity) }))
    }

    /// Decides when an attempt from `host` to log in as `account` may be
    /// checked, taking the next slot of each full window.
    public func admit(host: String, account: String, now: ContinuousClock.Instant) -> Admission {
        let block = AddressThrottle.block(of: host)
        return windows.withLock { tables in
            let addressSlot = tables.addresses?.slot(for: block, now: now)
            let accountSlot = tables.accounts?.slot(for: account, now: now)
            var latest = now
            for (slot, spacing) in [(addressSlot, tables.addresses?.spacing), (accountSlot, tables.accounts?.spacing)] {
                guard let slot, let spacing else { continue }
                if now.duration(to: slot) > spacing { return .busy(retryAfter: now.duration(to: slot) - spacing) }
                latest = max(latest, slot)
            }
            if let spacing = tables.addresses?.spacing, addressSlot != nil {
                tables.addresses?.setNextSlot(latest + spacing, for: block)
            }
            if let spacing = tables.accounts?.spacing, accountSlot != nil {
                tables.accounts?.setNextSlot(latest + spacing, for: account)
            }
            return addressSlot == nil && accountSlot == nil ? .now : .after(now.duration(to: latest))
        }
    }

    /// Counts a failed attempt from `host`, against `account` when the
    /// attempt got as far as naming one.
    public func failed(host: String, account: String?, now: ContinuousClock.Instant) {
        let block = AddressThrottle.block(of: host)
        windows.withLock { tables in
            tables.addresses?.countFailure(block, now: now)
            if let account { tables.accounts?.countFailure(account, now: now) }
        }
    }

    /// Clears the failures of `account`, whose owner just logged in.
    public func succeeded(account: String) {
        windows.withLock { tables in tables.accounts?.remove(account) }
    }
}

extension ThrottleWindows {
    /// The time between answers for a full key, which keeps it to the
    /// configured rate.
    fileprivate var spacing: Duration { limit.period / limit.count }

    /// For a full key, when its next answer may go out (never before
    /// `now`); nil while it is under the limit.
    fileprivate mutating func slot(for key: String, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard let window = window(of: key, now: now), window.count >= limit.count else { return nil }
        return max(now, window.nextSlot ?? now)
    }

    /// Counts a failure; the one that fills the window puts the first slot
    /// one spacing later.
    fileprivate mutating func countFailure(_ key: String, now: ContinuousClock.Instant) {
        add(key, now: now)
        if window(of: key, now: now)?.count == limit.count { setNextSlot(now + spacing, for: key) }
    }
}
