// The MCP and JSON-RPC facts of the wire, declared once. They live below the transport so
// that every layer (the HTTP transports, the protocol, the gateway, the daemon) reads the
// same ones; `protocol/` re-exports them where its callers look for them.

/** Legacy (`initialize`) revisions this client speaks, newest first; the first is offered. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];
/** The stateless revision: `server/discover`, per-request `_meta`, multi round-trip requests. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** Every revision this client speaks, the modern one first. */
export const ALL_PROTOCOL_VERSIONS = [MODERN_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS] as const;

// The 2026-07-28 revision's `_meta` keys.
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_INFO_META_KEY = 'io.modelcontextprotocol/clientInfo';
export const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';
export const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';
/** On a `subscriptions/listen` acknowledgement and every notification it delivers: the listen request's id. */
export const SUBSCRIPTION_ID_META_KEY = 'io.modelcontextprotocol/subscriptionId';

// JSON-RPC error codes (JSON-RPC 2.0 and MCP's own).
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** The implementation-defined server error Streamable HTTP answers a refused request with. */
export const SERVER_ERROR = -32000;
/** Streamable HTTP: the `Mcp-Session-Id` names no session (expired, or never given). */
export const SESSION_NOT_FOUND = -32001;
/** MCP's "resource not found" since 2025-11-25 (it was -32002 before): invalid params, with the `uri` in `data`. */
export const RESOURCE_NOT_FOUND = INVALID_PARAMS;
/** `UnsupportedProtocolVersionError`: a 2026 server refusing a revision, naming those it speaks. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;
