import { createHash } from 'node:crypto';

/** Longest public tool name chat model APIs accept. */
export const MAX_NAME_LENGTH = 64;
const PREFIX = 'mcp__';
/** Longest server part of a public name, so `mcp__<server>__` always fits with room for the tool. */
const MAX_PREFIX_LENGTH = 40;
const SEPARATOR = '__';

/** Each code point outside `[a-zA-Z0-9_-]` becomes `_` (`ünïcode` → `_n_code`). */
export function sanitize(raw: string): string {
  let out = '';
  for (const ch of raw) out += /^[A-Za-z0-9_-]$/.test(ch) ? ch : '_';
  return out || '_';
}

/** 6 hex characters of a hash of the raw names: stable across runs, distinct for `a.b` and `a_b`. */
export function shortHash(...raw: string[]): string {
  return createHash('sha256').update(raw.join('\0')).digest('hex').slice(0, 6);
}

/** `base` shortened so that `base_<hash>` fits `max` characters. */
function withHash(base: string, hash: string, max = MAX_NAME_LENGTH): string {
  return `${base.slice(0, max - hash.length - 1)}_${hash}`;
}

/**
 * The server part of each public name. A name that had to change and collides with
 * another, or one over 40 characters, gets a hash, so the server can always be read
 * back from a public name.
 */
export function serverPrefixes(servers: readonly string[]): Map<string, string> {
  const prefixes = new Map<string, string>();
  const fits = (s: string) => sanitize(s) === s && s.length <= MAX_PREFIX_LENGTH;
  const taken = new Set(servers.filter(fits));
  for (const server of servers) {
    let safe = sanitize(server);
    if (!fits(server)) {
      if (taken.has(safe) || safe.length > MAX_PREFIX_LENGTH) safe = withHash(safe, shortHash(server), MAX_PREFIX_LENGTH);
      taken.add(safe);
    }
    prefixes.set(server, safe);
  }
  return prefixes;
}

/**
 * Public names for one server's tools, `mcp__<server>__<tool>`: safe for chat model
 * APIs, at most 64 characters, unique, and a function of the config and this server's
 * own tool list only, so a name never changes because another server started.
 *
 * `otherPrefixes` are the other servers' safe names: a tool whose public name would
 * read as another server's (server `a`, tool `b__c` vs server `a__b`) gets a hash, since
 * routing takes the longest server prefix.
 */
export function publicToolNames(server: string, prefix: string, tools: readonly string[], otherPrefixes: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  const plain = new Set(tools.filter((t) => sanitize(t) === t));
  const used = new Set<string>();
  const shadowed = (tool: string) => otherPrefixes.some((p) => p.startsWith(`${prefix}${SEPARATOR}`) && `${prefix}${SEPARATOR}${tool}`.startsWith(`${p}${SEPARATOR}`));
  // Plain names first, so a safe raw name keeps its plain form; then by raw name, so which
  // of two colliding changed names keeps the short form does not depend on the list's order.
  const ordered = [...tools].sort((a, b) => Number(plain.has(b)) - Number(plain.has(a)) || (a < b ? -1 : a > b ? 1 : 0));
  for (const tool of ordered) {
    if (names.has(tool)) continue;
    const safe = sanitize(tool);
    let name = `${PREFIX}${prefix}${SEPARATOR}${safe}`;
    const changedAndTaken = safe !== tool && (plain.has(safe) || used.has(name));
    if (name.length > MAX_NAME_LENGTH || changedAndTaken || shadowed(safe)) name = withHash(name, shortHash(server, tool));
    names.set(tool, name);
    used.add(name);
  }
  return names;
}

/** Which server a public name belongs to: the longest known prefix, so `__` inside names is fine. */
export function serverOfPublicName(publicName: string, prefixes: ReadonlyMap<string, string>): string | undefined {
  if (!publicName.startsWith(PREFIX)) return undefined;
  const rest = publicName.slice(PREFIX.length);
  let best: string | undefined;
  let bestLength = -1;
  for (const [server, prefix] of prefixes) {
    if (rest.startsWith(`${prefix}${SEPARATOR}`) && prefix.length > bestLength) {
      best = server;
      bestLength = prefix.length;
    }
  }
  return best;
}
