/// The token check of a call's hole punching (the patent's section 5), which runs on the devices,
/// not on the suite's STUN server: each side of a call makes a random token and hands it to the
/// other through call signalling (`caller_token`, `callee_token`); a device then sends Binding
/// requests to the other's candidate addresses with the other's token as NONCE, and answers only
/// the Binding requests whose NONCE is its own token, silently dropping the others.
extension STUNMessage {
    /// The Binding request a device sends to its peer's candidates: `token` (the peer's) as NONCE,
    /// a fresh transaction id, and a FINGERPRINT once encoded.
    public static func bindingRequest(callToken token: String, transactionID: STUNTransactionID = .random())
        -> STUNMessage
    {
        STUNMessage(.request, .binding, transactionID: transactionID, attributes: [.nonce(token)])
    }

    /// Whether this is a Binding request whose NONCE is `token`: the one condition on which a
    /// device answers it. Compared in constant time, as the token is a secret of the call.
    public func carriesCallToken(_ token: String) -> Bool {
        guard messageClass == .request, method == .binding, let nonce = attribute(.nonce)?.value else { return false }
        let expected = Array(token.utf8)
        guard nonce.count == expected.count else { return false }
        return zip(nonce, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
