import STUNCodec
import Testing

/// The patent's token check of hole punching, as a device runs it with the codec.
@Suite struct STUNCallTokenTests {
    @Test func aBindingRequestCarriesThePeersTokenAsNonce() throws {
        let request = STUNMessage.bindingRequest(callToken: "k3J9xQ2vLm")
        let received = try STUNMessage(decoding: request.encoded())
        #expect(received.messageClass == .request)
        #expect(received.method == .binding)
        #expect(try received.nonce == "k3J9xQ2vLm")
        #expect(received.fingerprint != nil)
        #expect(received.carriesCallToken("k3J9xQ2vLm"))
    }

    @Test func onlyTheExactTokenMatches() throws {
        let received = try STUNMessage(decoding: STUNMessage.bindingRequest(callToken: "k3J9xQ2vLm").encoded())
        for other in ["", "k3J9xQ2vL", "k3J9xQ2vLn", "k3J9xQ2vLmm", "K3J9XQ2VLM"] {
            #expect(!received.carriesCallToken(other), "\(other)")
        }
    }

    @Test func withoutNonceOrAsAnythingButABindingRequestNothingMatches() throws {
        #expect(!STUNMessage(.request, .binding).carriesCallToken(""))
        var indication = STUNMessage.bindingRequest(callToken: "t")
        indication.messageClass = .indication
        #expect(!indication.carriesCallToken("t"))
        var response = STUNMessage.bindingRequest(callToken: "t")
        response.messageClass = .successResponse
        #expect(!response.carriesCallToken("t"))
    }

    /// The suite's own STUN server answers such a request like any other Binding request: the
    /// check belongs to the devices.
    @Test func theServerAnswersTokenRequestsLikeAnyOther() throws {
        let request = STUNMessage.bindingRequest(callToken: "caller-token").encoded()
        let sender = STUNAddress(.ipv4(0x0A00_0001), port: 9)
        let answer = try STUNMessage(decoding: try #require(STUNResponder().answer(to: request, from: sender)))
        #expect(try answer.xorMappedAddress == sender)
    }
}
