"""The team hub: one collector follows the tenant and publishes to NATS JetStream; viewers read from there.

    tenant ─SSE─▶ relay (StreamEngine → publisher.HubSink) ─▶ JetStream stream + key-value buckets
                                                               │
                  viewer (viewer.HubViewer → StoreWriter) ◀────┘  × any number, no tenant credentials

Qt-free and SQLite-free (import contracts in pyproject.toml). Modules are imported by name: this package's
`__init__` imports nothing, so a module that needs no NATS client loads none. The hub profile itself is
settings/hubs.py (`HubProfile`).
"""
