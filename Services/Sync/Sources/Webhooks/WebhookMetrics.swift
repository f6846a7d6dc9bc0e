import LayerServer
import Metrics

/// What `/metrics` tells of webhooks: deliveries by outcome and their latency (this replica's),
/// and the outbox's backlog (the same on every replica): how many events active webhooks wait
/// for, and how long the oldest has waited.
struct WebhookMetrics: Sendable {
    let delivered: Counter
    let failed: Counter
    /// Events dropped undelivered once older than their webhook keeps them.
    let dropped: Counter
    let latency: Metrics.Timer
    let pending: Gauge
    let lag: Gauge

    init() {
        _ = Observability.registry  // metrics made before the bootstrap would be lost
        delivered = Counter(label: "layer_webhook_deliveries_total", dimensions: [("result", "delivered")])
        failed = Counter(label: "layer_webhook_deliveries_total", dimensions: [("result", "failed")])
        dropped = Counter(label: "layer_webhook_events_dropped_total")
        latency = Metrics.Timer(label: "layer_webhook_delivery_duration_seconds", preferredDisplayUnit: .seconds)
        pending = Gauge(label: "layer_webhook_pending_events")
        lag = Gauge(label: "layer_webhook_lag_seconds")
    }
}
