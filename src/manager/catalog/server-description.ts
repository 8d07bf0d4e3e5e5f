import type { McpClient } from '../../protocol/client.js';
import type { Implementation, ProtocolEra, ServerCapabilities } from '../../protocol/types.js';

/** What a server says about itself, as `serverInfo(server)` answers it. */
export interface ServerDescription {
  serverInfo: Implementation;
  /** `2026-07-28` or the legacy revision the server answered. */
  protocolVersion: string;
  era: ProtocolEra;
  capabilities: ServerCapabilities;
  /** The server's `instructions` for the model, when it sends any. */
  instructions?: string;
}

export function describeClient(client: McpClient): ServerDescription {
  const { serverInfo, protocolVersion, era, capabilities, instructions } = client;
  return { serverInfo, protocolVersion, era, capabilities, ...(instructions === undefined ? {} : { instructions }) };
}

/** Whether a cached description has the shape we wrote; anything else is ignored. */
export function isServerDescription(value: unknown): value is ServerDescription {
  const d = value as Partial<ServerDescription> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    typeof d.serverInfo?.name === 'string' &&
    typeof d.serverInfo.version === 'string' &&
    typeof d.protocolVersion === 'string' &&
    (d.era === '2026' || d.era === 'legacy') &&
    typeof d.capabilities === 'object' &&
    d.capabilities !== null &&
    (d.instructions === undefined || typeof d.instructions === 'string')
  );
}
