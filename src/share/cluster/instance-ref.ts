import { seal, unseal } from './sealed.js';

/** An instance of a server run per principal, as members tell each other of it. */
export interface InstanceRef {
  principal: string;
  /** The credentials its entry is filled with. */
  values: Record<string, string>;
}

/** The header a member's session with an owner carries an instance in, sealed with the cluster secret. */
export const CREDENTIALS_HEADER = 'x-lazy-mcp-credentials';
const PURPOSE = 'credentials';
/** Read by the owner when the session begins (initialize), so a short life is enough, in ms. */
const TTL_MS = 60_000;

/** The instance, sealed (AES-GCM): its credentials are never on the wire in the clear, and no one without the secret can name one. */
export function sealInstance(key: Buffer, instance: InstanceRef): string {
  return seal(key, PURPOSE, { principal: instance.principal, values: instance.values }, TTL_MS);
}

/** The instance a sealed header names; undefined when forged, expired or malformed. */
export function openInstance(key: Buffer, sealed: string): InstanceRef | undefined {
  const opened = unseal<InstanceRef>(key, PURPOSE, sealed);
  if (!opened.ok) return undefined;
  const v = opened.value;
  const wellFormed =
    typeof v === 'object' && v !== null && typeof v.principal === 'string' && typeof v.values === 'object' && v.values !== null && Object.values(v.values).every((x) => typeof x === 'string');
  return wellFormed ? { principal: v.principal, values: v.values } : undefined;
}
