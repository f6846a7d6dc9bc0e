/// Media types and header names of the public API.
public enum MediaType {
    /// The one API version this suite implements.
    public static let apiVersion = "3.0"
    public static let layerJSON = "application/vnd.layer+json; version=3.0"
    public static let layerPatch = "application/vnd.layer-patch+json"
    public static let json = "application/json"
}

public enum LayerHeader {
    public static let userID = "X-Layer-User-ID"
    public static let sessionToken = "X-Layer-Session-Token"
    public static let sessionTTL = "X-Layer-Session-TTL"
    public static let requestID = "X-Request-Id"
    public static let count = "Layer-Count"
    /// Set by the edge proxy to the client certificate it verified (URL-escaped PEM, as nginx's
    /// `$ssl_client_escaped_cert`); honoured only from trusted proxy addresses.
    public static let clientCertificate = "X-Client-Certificate"
}
