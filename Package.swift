// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let hummingbird = Target.Dependency.product(name: "Hummingbird", package: "hummingbird")
let postgres = Target.Dependency.product(name: "PostgresNIO", package: "postgres-nio")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let httpTypes = Target.Dependency.product(name: "HTTPTypes", package: "swift-http-types")

/// A service of the suite: a library with all of its logic (what its tests import), a thin
/// executable `layer-<name>`, and a test target. Adding a service is one entry in `services`
/// (and one in `Suite.services`, the catalogue that composes the suite at run time).
struct Service {
    let folder: String
    let executable: String
    let dependencies: [Target.Dependency]
    /// Modules of the service beside its library (pure logic its library builds on).
    let modules: [Target]
    /// Folders of the test target that hold data, not sources (a fuzzing corpus).
    let testExcludes: [String]

    init(
        _ folder: String, executable: String, dependencies: [Target.Dependency] = [], modules: [Target] = [],
        testExcludes: [String] = []
    ) {
        self.folder = folder
        self.executable = executable
        self.dependencies = dependencies + modules.map { .byName(name: $0.name) }
        self.modules = modules
        self.testExcludes = testExcludes
    }

    var library: String { "Layer\(folder)" }

    var targets: [Target] {
        modules + [
            .target(
                name: library,
                dependencies: ["LayerModels", "LayerServer", hummingbird, postgres, logging, httpTypes] + dependencies,
                path: "Services/\(folder)/Sources",
                // Embedded, so the binaries need no resource files beside them.
                resources: [.embedInCode("openapi.yaml")],
                swiftSettings: swiftSettings
            ),
            .executableTarget(
                name: executable,
                dependencies: [.byName(name: library), "LayerServer"],
                path: "Services/\(folder)/Main",
                swiftSettings: swiftSettings
            ),
            .testTarget(
                name: "\(folder)Tests",
                dependencies: [.byName(name: library), "LayerTesting"] + modules.map { .byName(name: $0.name) },
                path: "Tests/\(folder)Tests",
                exclude: testExcludes,
                swiftSettings: swiftSettings
            ),
        ]
    }
}

let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
let cryptoExtras = Target.Dependency.product(name: "_CryptoExtras", package: "swift-crypto")
let httpClient = Target.Dependency.product(name: "AsyncHTTPClient", package: "async-http-client")
let webSocket = Target.Dependency.product(name: "HummingbirdWebSocket", package: "hummingbird-websocket")

let services = [
    Service(
        "Auth", executable: "layer-auth",
        dependencies: [
            crypto, cryptoExtras, .product(name: "X509", package: "swift-certificates"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
        ]),
    Service(
        "Sync", executable: "layer-sync",
        dependencies: [
            crypto, cryptoExtras, httpClient, webSocket, .product(name: "CompressNIO", package: "compress-nio"),
            .product(name: "MultipartKit", package: "multipart-kit"), .product(name: "JWTKit", package: "jwt-kit"),
        ],
        // The pages the browser tests load.
        testExcludes: ["Web/Pages"]),
    Service(
        "Names", executable: "layer-names", dependencies: [httpClient],
        modules: [
            // Normalisation and record matching: no database, no HTTP.
            .target(
                name: "NameMatching", dependencies: ["LayerModels"], path: "Services/Names/Matching",
                swiftSettings: swiftSettings)
        ]),
    Service(
        "VoIP", executable: "layer-voip",
        dependencies: [
            crypto, httpClient, .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ],
        modules: [
            // The STUN message codec: bytes in, bytes out, no sockets.
            .target(name: "STUNCodec", path: "Services/VoIP/STUN", swiftSettings: swiftSettings)
        ], testExcludes: ["STUN/Corpus"]),
]
let serviceLibraries = services.map { Target.Dependency.byName(name: $0.library) }

let package = Package(
    name: "layerline",
    platforms: [.macOS(.v15)],
    products: [.executable(name: "layer", targets: ["layer"])]
        + services.map { .executable(name: $0.executable, targets: [$0.executable]) },
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
    ],
    targets: [
        .target(
            name: "LayerModels",
            path: "Shared/Models",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LayerServer",
            dependencies: [
                "LayerModels", hummingbird, postgres, logging, httpTypes,
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                webSocket, httpClient, crypto, cryptoExtras,
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Yams", package: "Yams"),
            ],
            path: "Shared/Server",
            resources: [.embedInCode("openapi-common.yaml")],
            swiftSettings: swiftSettings
        ),
        // What only `layer dev`, the benchmarks and the tests use (a private PostgreSQL, child
        // processes, a demo backend's token signer), so that no service's executable carries it.
        .target(
            name: "LayerDevelopment",
            dependencies: ["LayerServer", "LayerModels", crypto, cryptoExtras, logging],
            path: "Shared/Development",
            swiftSettings: swiftSettings
        ),
    ]
        + services.flatMap(\.targets)
        + [
            // The catalogue of the suite's services, for everything that composes several of them.
            .target(
                name: "LayerSuite",
                dependencies: ["LayerServer"] + serviceLibraries,
                path: "Services/Layer/Sources",
                swiftSettings: swiftSettings
            ),
            .executableTarget(
                name: "layer",
                dependencies: [
                    "LayerServer", "LayerSuite", "LayerDevelopment", cryptoExtras,
                    .product(name: "ArgumentParser", package: "swift-argument-parser"),
                    .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                ],
                path: "Services/Layer/Main",
                swiftSettings: swiftSettings
            ),
            .executableTarget(
                name: "layer-bench",
                dependencies: [
                    "LayerServer", "LayerSuite", "LayerDevelopment", "NameMatching", httpClient, cryptoExtras,
                    .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                    .product(name: "ArgumentParser", package: "swift-argument-parser"),
                ] + serviceLibraries,
                path: "Benchmarks/LayerBench",
                swiftSettings: swiftSettings
            ),
            .target(
                name: "LayerTesting",
                dependencies: [
                    "LayerServer", "LayerModels", "LayerSuite", "LayerDevelopment", httpClient, cryptoExtras,
                    .product(name: "HummingbirdTesting", package: "hummingbird"),
                    .product(name: "HummingbirdTLS", package: "hummingbird"),
                    .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                    .product(name: "JWTKit", package: "jwt-kit"),
                    .product(name: "X509", package: "swift-certificates"),
                    .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                    .product(name: "Yams", package: "Yams"),
                ] + serviceLibraries,
                path: "Tests/Support",
                swiftSettings: swiftSettings
            ),
            .testTarget(
                name: "SharedTests",
                dependencies: ["LayerServer", "LayerModels", "LayerDevelopment", "LayerTesting"],
                path: "Tests/SharedTests",
                swiftSettings: swiftSettings
            ),
            .testTarget(
                name: "EndToEndTests",
                dependencies: ["LayerTesting", "LayerSuite", "LayerServer"],
                path: "Tests/EndToEndTests",
                swiftSettings: swiftSettings
            ),
        ]
)
