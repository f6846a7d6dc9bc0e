import Foundation
import Testing

@testable import LayerSync

/// Which changes wake the push-notification sender.
@Suite("Push notifications: the sender's alarm")
struct PushJobAlarmTests {
    @Test("A read of the apps with providers that began before a provider was set does not hide that app")
    func staleReadIsDropped() async throws {
        let alarm = PushJobAlarm()
        let app = UUID()
        let (needed, generation) = alarm.needsApps
        #expect(needed, "unknown at first")
        // The operator sets a provider while the sender is reading the apps (and finds none).
        alarm.providersChanged()
        alarm.set(apps: [], generation: generation)
        #expect(alarm.needsApps.0, "the stale read is dropped: the apps are read again")
        let (_, current) = alarm.needsApps
        alarm.set(apps: [app], generation: current)
        #expect(!alarm.needsApps.0)
    }

    @Test("Once the apps are known, only changes of apps with a provider ring")
    func onlyAppsWithProvidersRing() async throws {
        let alarm = PushJobAlarm()
        let app = UUID()
        alarm.set(apps: [app], generation: alarm.needsApps.generation)
        await alarm.alarm.wait(upTo: .milliseconds(1))  // clears a ring left from before
        alarm.changed(app: UUID())
        let quiet = ContinuousClock.now
        await alarm.alarm.wait(upTo: .milliseconds(200))
        #expect(ContinuousClock.now - quiet >= .milliseconds(150), "another app's change does not ring")
        alarm.changed(app: app)
        let rung = ContinuousClock.now
        await alarm.alarm.wait(upTo: .seconds(5))
        #expect(ContinuousClock.now - rung < .seconds(1))
    }
}
