import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * State that travels with a request instead of living in one member's memory (a session
 * id, a round's `requestState`): AES-256-GCM under a key of the cluster secret, bound to
 * its purpose (as additional data) and to an expiry. Any member can open what any member
 * sealed; nobody without the secret can make or alter one.
 */
export type Unsealed<T> = { ok: true; value: T } | { ok: false; why: 'forged' | 'expired' };

const VERSION = 'c1';

export function seal(key: Buffer, purpose: string, value: unknown, ttlMs: number): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(purpose));
  const body = Buffer.concat([cipher.update(JSON.stringify({ v: value, e: Date.now() + ttlMs })), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

export function unseal<T>(key: Buffer, purpose: string, text: string): Unsealed<T> {
  if (typeof text !== 'string' || !text.startsWith(`${VERSION}.`) || text.length > 8192) return { ok: false, why: 'forged' };
  const raw = Buffer.from(text.slice(VERSION.length + 1), 'base64url');
  if (raw.length < 29) return { ok: false, why: 'forged' };
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(purpose));
    decipher.setAuthTag(raw.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    const { v, e } = JSON.parse(plain) as { v: T; e: number };
    if (typeof e !== 'number' || Date.now() > e) return { ok: false, why: 'expired' };
    return { ok: true, value: v };
  } catch {
    return { ok: false, why: 'forged' };
  }
}

/** Whether `text` has the shape of a sealed value (a local id never does). */
export function looksSealed(text: string): boolean {
  return text.startsWith(`${VERSION}.`);
}
