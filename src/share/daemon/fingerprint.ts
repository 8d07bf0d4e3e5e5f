import { createHash } from 'node:crypto';
import type { SharedSpec } from './wire.js';

/**
 * The server fingerprint: two clients share a process exactly when their entries are the
 * same after expansion (command, args, the whole environment, cwd, framing, roots, the
 * declared capabilities and the client's `clientInfo`). Key order does not matter; anything else does.
 */
export function fingerprint(spec: SharedSpec): string {
  const canonical = JSON.stringify([
    spec.command,
    spec.args,
    Object.entries(spec.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    spec.cwd,
    spec.framing,
    spec.roots?.map((r) => [r.uri, r.name ?? null]) ?? null,
    [spec.capabilities.elicitation, spec.capabilities.sampling, spec.capabilities.roots],
    [spec.clientInfo.name, spec.clientInfo.version],
  ]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}
