/// A key into `FeatureState`: a type a feature declares next to its code,
/// naming one value it keeps per session (or per routed message) and the
/// value it starts with.
///
///     enum Enabled: FeatureStateKey { static let initialValue = false }
///     session.state[Enabled.self] = true
public protocol FeatureStateKey {
    associatedtype Value
    /// The value before the feature sets one.
    static var initialValue: Value { get }
}

/// The values features keep on a session (or a routed message), each under
/// the feature's own key type, so that the session itself holds only its
/// stream and a new feature adds no field to it. A session resumed by a
/// new connection keeps its state as it is (XEP-0198 §5).
public struct FeatureState {
    private var values: [ObjectIdentifier: Any] = [:]

    /// An empty state: every key reads its initial value.
    public init() {}

    /// The value under `key`, or its initial value if none was set.
    public subscript<Key: FeatureStateKey>(_ key: Key.Type) -> Key.Value {
        get {
            guard let value = values[ObjectIdentifier(key)] else { return Key.initialValue }
            return value as! Key.Value  // stored only by this subscript, as Key.Value
        }
        set { values[ObjectIdentifier(key)] = newValue }
        // In place: the value leaves the dictionary while it is changed,
        // so a collection in it is not copied on each change.
        _modify {
            let id = ObjectIdentifier(key)
            var value = values.removeValue(forKey: id).map { $0 as! Key.Value } ?? Key.initialValue
            defer { values[id] = value }
            yield &value
        }
    }
}
