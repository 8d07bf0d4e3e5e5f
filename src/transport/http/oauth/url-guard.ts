import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { McpError, serverLabel } from '../../../errors.js';

/** Host names of cloud metadata services (GCP, Alibaba, AWS's old name, Azure's wire server by name). */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal', 'metadata.azure.internal']);
/** Addresses of metadata services outside 169.254.0.0/16. */
const METADATA_ADDRESSES = new Set(['100.100.100.200', '168.63.129.16', 'fd00:ec2::254']);

/**
 * Why `address` (an IP literal) must never be sent an OAuth request, or undefined: a
 * link-local address (169.254.0.0/16, fe80::/10, the home of most cloud metadata services),
 * a metadata service elsewhere, or the unspecified address. IPv4-mapped IPv6 is unwrapped.
 */
export function forbiddenAddress(address: string): string | undefined {
  let ip = address.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const mapped = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/.exec(ip);
  if (mapped) {
    ip = mapped[1] ?? [parseInt(mapped[2], 16) >> 8, parseInt(mapped[2], 16) & 255, parseInt(mapped[3], 16) >> 8, parseInt(mapped[3], 16) & 255].join('.');
  }
  if (METADATA_ADDRESSES.has(ip)) return 'a cloud metadata service address';
  const family = isIP(ip);
  if (family === 4) {
    if (ip.startsWith('169.254.')) return 'a link-local address (cloud metadata services live there)';
    if (ip.startsWith('0.')) return 'the unspecified address';
  }
  if (family === 6) {
    if (/^fe[89ab][0-9a-f]?:/.test(ip)) return 'a link-local address';
    if (ip === '::') return 'the unspecified address';
  }
  return undefined;
}

/** Why no OAuth request may go to `url`'s host, looking its name up if it is one; or undefined. */
export async function forbiddenHost(url: URL): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase().replace(/\.$/, '');
  if (isIP(host)) return forbiddenAddress(host);
  if (METADATA_NAMES.has(host)) return 'a cloud metadata service name';
  if (host === 'localhost') return undefined;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    return undefined; // the request itself fails and says why
  }
  for (const { address } of addresses) {
    const why = forbiddenAddress(address);
    if (why) return `${why}: ${host} resolves to ${address}`;
  }
  return undefined;
}

/**
 * `fetch` for the OAuth client: every request (metadata, registration, token, revocation)
 * is refused before it is sent when its URL is not https (http only on loopback) or its
 * host is a link-local or metadata-service address, and it never follows a redirect (the
 * callers that may follow one check the next URL the same way).
 */
export function guardedFetch(server: string, inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const refusal = insecure(url) ?? (await forbiddenHost(url));
    if (refusal) {
      throw new McpError('protocol-error', `${serverLabel(server)}refusing an OAuth request to ${shownUrl(url)}: ${refusal}`, { server, phase: 'auth' });
    }
    return inner(input, { ...init, redirect: 'manual' });
  };
}

/** Loopback hosts may be plain http (local development and tests); anything else must be https. */
export function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Why `url` may not be an OAuth endpoint (not https, or http beyond loopback), or undefined. */
export function insecure(url: URL): string | undefined {
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url))) return undefined;
  return url.protocol === 'http:' ? 'it is not https (plain http is allowed on loopback only)' : `its scheme is ${url.protocol}, not https`;
}

/** A URL as messages show it: no userinfo, no query, at most 200 characters. */
export function shownUrl(url: URL): string {
  const shown = url.protocol === 'http:' || url.protocol === 'https:' ? `${url.origin}${url.pathname}` : url.href.split('?')[0];
  return JSON.stringify(shown.length > 200 ? `${shown.slice(0, 200)}…` : shown);
}
