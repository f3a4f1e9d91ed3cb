package schemacheck

// Rows for transport_backend plugins, checked against shared/reference/transport-http.md. Filled
// in by the plugin's issue.
//
// transport/shutdown has no row: its reply is not a schema type (the reference
// Rust transport answers {"shutdown": true}, the TypeScript SDK {}; §2.1).

// transportResults maps transport_backend methods to their result schemas.
var transportResults = map[string]TypeRef{
	"transport/start":  {TransportProtocol, "TransportInfo"},   // §2.1: TransportConfig → TransportInfo
	"transport/schema": {TransportProtocol, "TransportSchema"}, // §2.1
}
