import type { ConnectOptions } from '../../protocol/client.js';
import type { LogMessage } from '../../protocol/types.js';
import type { ServerEntry } from '../config/config.js';
import type { SlotHost } from '../pool/server-slot.js';
import type { OAuthProvider } from '../../transport/http/oauth/provider-types.js';
import { type Redactor, redactData, redactError } from './redact.js';

/** Whether the entry runs one instance per principal or per session. */
export function isInstanced(entry: ServerEntry): boolean {
  return (entry.kind === 'stdio' || entry.kind === 'http') && entry.config.instances !== undefined;
}

/**
 * The host of one instance: the pool's host for the server's name (its listing lands in
 * the server's one catalog entry, its figures in the server's metrics), except that what
 * the instance reports (stderr, logs, exits) has its credentials out, and its state
 * changes are its own, not the server's.
 */
export function instanceSlotHost(base: SlotHost, redact: Redactor, auth?: () => OAuthProvider | undefined): SlotHost {
  const host: SlotHost = Object.create(base) as SlotHost;
  host.stateChanged = () => undefined;
  // An OAuth server's instance uses its principal's tokens, for its own URL.
  if (auth) host.auth = () => auth();
  host.connectOptions = (server: string): ConnectOptions => {
    const options = base.connectOptions(server);
    const listeners = options.listeners ?? {};
    return {
      ...options,
      listeners: {
        ...listeners,
        ...(listeners.stderr ? { stderr: (line: string) => listeners.stderr?.(redact(line)) } : {}),
        ...(listeners.noise ? { noise: (line: string) => listeners.noise?.(redact(line)) } : {}),
        ...(listeners.log ? { log: (message: LogMessage) => listeners.log?.({ ...message, data: redactData(message.data, redact) }) } : {}),
        ...(listeners.exit ? { exit: (status, reason) => listeners.exit?.(status, reason && (redactError(reason, redact) as typeof reason)) } : {}),
      },
    };
  };
  return host;
}
