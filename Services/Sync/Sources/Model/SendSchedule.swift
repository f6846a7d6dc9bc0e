import Foundation
import LayerModels
import LayerServer

/// The `schedule` of a delayed Server API send: the message goes out `delay` seconds after the
/// request, and for the last `typing` seconds before that its sender is shown typing.
struct SendSchedule: Sendable, Equatable {
    var delay: Double
    var typing: Double?

    static let delays: ClosedRange<Double> = 1...300
    static let keys: Set<String> = ["delay_in_seconds", "typing_indicator_in_seconds"]

    /// The schedule of a body; nil without one (absent or null). Errors name the field, such as
    /// `schedule.delay_in_seconds`.
    static func parse(_ value: JSONValue?) throws -> SendSchedule? {
        guard let value, value != .null else { return nil }
        guard case .object(let object) = value else {
            throw APIError.invalid(
                "schedule", "schedule is an object with delay_in_seconds and, optionally, typing_indicator_in_seconds.")
        }
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            throw APIError.invalid("schedule.\(unknown)", "'\(unknown)' is not a property of schedule.")
        }
        guard let delayValue = object["delay_in_seconds"], delayValue != .null else {
            throw APIError(.missingProperty, "A schedule needs delay_in_seconds.", property: "schedule.delay_in_seconds")
        }
        guard case .number(let delay) = delayValue, delays.contains(delay) else {
            throw APIError.invalid(
                "schedule.delay_in_seconds", "delay_in_seconds is a number of seconds from 1.0 to 300.0.")
        }
        guard let typingValue = object["typing_indicator_in_seconds"], typingValue != .null else {
            return SendSchedule(delay: delay, typing: nil)
        }
        guard case .number(let typing) = typingValue, (1...delay).contains(typing) else {
            throw APIError.invalid(
                "schedule.typing_indicator_in_seconds",
                "typing_indicator_in_seconds is a number of seconds from 1.0 to delay_in_seconds (\(delay)).")
        }
        return SendSchedule(delay: delay, typing: typing)
    }
}
