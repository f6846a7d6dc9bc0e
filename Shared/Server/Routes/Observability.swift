import Logging
import Metrics
import Prometheus
import Synchronization

/// Process-wide logging and metrics, set up once however many applications a process builds
/// (the test suite builds many).
public enum Observability {
    private static let registryStorage = Mutex<PrometheusCollectorRegistry?>(nil)

    /// The Prometheus registry behind swift-metrics; bootstraps the metrics system on first use.
    public static var registry: PrometheusCollectorRegistry {
        registryStorage.withLock { stored in
            if let stored { return stored }
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            stored = registry
            return registry
        }
    }

    /// Structured logs on standard error at `LOG_LEVEL` (default `info`).
    public static func bootstrapLogging(level: Logger.Level? = nil) {
        let configured = level ?? Logger.Level(rawValue: SettingsReader().optional("LOG_LEVEL") ?? "") ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = configured
            return handler
        }
    }
}
