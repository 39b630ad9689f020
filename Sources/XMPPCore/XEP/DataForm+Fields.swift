/// Typed fields of a form a service offers (XEP-0004 §3.3), and the
/// reading of a submitted boolean.
extension DataForm.Field {
    /// A `boolean` field showing `value` as `1` or `0`.
    public static func boolean(_ name: String, label: String, _ value: Bool) -> Self {
        Self(name, type: "boolean", label: label, values: [value ? "1" : "0"])
    }

    /// A `list-single` field showing `value`, offering `options` (each
    /// its value and label).
    public static func listSingle(_ name: String, label: String, _ value: String, options: [(String, String)]) -> Self {
        Self(name, type: "list-single", label: label, values: [value], extras: optionElements(options))
    }

    /// A `list-multi` field showing `values`, offering `options` (each its
    /// value and label).
    public static func listMulti(_ name: String, label: String, _ values: [String], options: [(String, String)]) -> Self {
        Self(name, type: "list-multi", label: label, values: values, extras: optionElements(options))
    }

    private static func optionElements(_ options: [(String, String)]) -> [Element] {
        options.map { option, label in
            Element(
                "option", namespace: NS.dataForms, attributes: ["label": label],
                children: [.element(Element("value", namespace: NS.dataForms, children: [.text(option)]))])
        }
    }

    /// A submitted boolean value (`1`/`true` or `0`/`false`), or nil for
    /// anything else.
    public static func booleanValue(_ text: String) -> Bool? {
        switch text {
        case "1", "true": true
        case "0", "false": false
        default: nil
        }
    }
}
