import Foundation
import LayerModels
import LayerNames
import LayerServer
import LayerSync
import LayerTesting
import LayerVoIP
import Testing

/// Each service presents a token of its own on the internal API, and each internal route accepts
/// only the tokens of the services that call it: a token that leaks opens those routes alone.
@Suite struct InternalTokenTests {
    /// Every internal route of the suite and the services that call it.
    static let callers: [(path: String, services: [String])] = [
        (InternalAPI.introspectPath, ["sync", "names", "voip"]),
        (InternalAPI.sessionsPath, ["sync", "names", "voip"]),
        (InternalAPI.noncesPath, ["sync", "names", "voip"]),
        (InternalAPI.appTokensPath, ["sync", "names", "voip"]),
        (InternalAPI.originsPath, ["sync", "names", "voip"]),
        (InternalAPI.knownUsersPath, ["voip"]),
        (InternalAPI.accountPath, ["sync"]),
        (InternalAPI.identityClaimsPath, ["auth"]),
        (InternalAPI.sessionsEndedPath, ["auth"]),
        (InternalAPI.signalsPath, ["voip"]),
        (InternalAPI.devicesPath, ["voip"]),
        (InternalAPI.blocksBetweenPath, ["voip"]),
        (InternalAPI.relationshipsPath, ["sync", "voip"]),
    ]

    @Test("An internal route accepts the tokens of its callers; another service's token is 403, any other 401")
    func routesAcceptTheirCallersOnly() async throws {
        try await AuthFixture.run(
            withSync: SyncSettings(), withNames: NamesSettings(), withVoIP: VoIPSettings(stunPort: 0)
        ) { fixture in
            let tokens = fixture.internalTokens
            #expect(Set(tokens.byService.values).count == InternalAPI.Service.all.count, "a token per service")
            for (path, callers) in Self.callers {
                for service in InternalAPI.Service.all {
                    let response = try await fixture.client.request(
                        .POST, path, headers: [("Authorization", "Bearer \(tokens.token(of: service))")], json: [:])
                    if callers.contains(service) {
                        // Past the guard: the route itself answers (an empty body is bad input for most).
                        #expect(![401, 403].contains(response.status), "\(service) on \(path): \(response.text)")
                    } else {
                        #expect(response.status == 403 && response.errorID == "access_denied", "\(service) on \(path)")
                    }
                }
                for headers in [[], [("Authorization", "Bearer \(Secrets.randomToken())")]] {
                    let refused = try await fixture.client.request(.POST, path, headers: headers, json: [:])
                    #expect(refused.status == 401 && refused.errorID == "authentication_required", "\(path)")
                }
            }
        }
    }
}
