import { sha256 } from '../../util/lazy-builtins.js';

/** Longest public tool name chat model APIs accept. */
export const MAX_NAME_LENGTH = 64;
const PREFIX = 'mcp__';
/** Longest server part of a public name, so `mcp__<server>__` always fits with room for the tool. */
const MAX_PREFIX_LENGTH = 40;
const SEPARATOR = '__';

/** Each code point outside `[a-zA-Z0-9_-]` becomes `_` (`ünïcode` → `_n_code`). */
export function sanitize(raw: string): string {
  // Most names are already safe: one test, no per-character work (a fresh process names every configured server).
  if (SAFE_NAME.test(raw)) return raw;
  // `u`: a character outside the BMP is one code point, so one `_`.
  return raw.replace(UNSAFE_CHARACTER, '_') || '_';
}

const SAFE_NAME = /^[A-Za-z0-9_-]+$/;
const UNSAFE_CHARACTER = /[^A-Za-z0-9_-]/gu;

/** 6 hex characters of a hash of the raw names: stable across runs, distinct for `a.b` and `a_b`. */
export function shortHash(...raw: string[]): string {
  return sha256(raw.join('\0'), 'hex').slice(0, 6);
}

/** `base` shortened so that `base_<hash>` fits `max` characters. */
function withHash(base: string, hash: string, max = MAX_NAME_LENGTH): string {
  return `${base.slice(0, max - hash.length - 1)}_${hash}`;
}

/**
 * Whether some shorter part in `parts` can read the same public names as `part`
 * (`mcp__a__b__c` is server `a` tool `b__c` or server `a__b` tool `c`; `mcp__db___q` is
 * `db` `_q` or `db_` `q`): one that `part` starts with followed by `__`, or `part` less
 * a final `_`. Looks up only those candidates, so
 * a config of n servers costs n lookups per pass instead of n² comparisons.
 */
function hasShorterAmbiguous(part: string, parts: ReadonlySet<string>): boolean {
  if (part.endsWith('_') && parts.has(part.slice(0, -1))) return true;
  for (let i = part.indexOf(SEPARATOR); i !== -1; i = part.indexOf(SEPARATOR, i + 1)) {
    if (parts.has(part.slice(0, i))) return true;
  }
  return false;
}

/** A server part that no other can be ambiguous with: no `__` inside, no `_` at the end. */
function unambiguousForm(server: string, base: string, salt: number): string {
  const collapsed = base.replace(/_+/g, '_').replace(/_$/, '');
  const hash = salt === 0 ? shortHash(server) : shortHash(server, String(salt));
  return withHash(collapsed, hash, MAX_PREFIX_LENGTH);
}

/**
 * The server part of each public name, decided from the configured names alone. A name
 * that had to change and collides with another, or one over 40 characters, gets a hash;
 * of two server parts that could read the same public name (`a` / `a__b`, `db` / `db_`)
 * the longer one is rewritten without `__` (and hashed), so a public name always maps
 * back to exactly one server. Independent of the servers' order.
 */
export function serverPrefixes(servers: readonly string[]): Map<string, string> {
  const prefixes = new Map<string, string>();
  const fits = (s: string) => sanitize(s) === s && s.length <= MAX_PREFIX_LENGTH;
  const sorted = [...new Set(servers)].sort(byCodeUnit);
  const taken = new Set(sorted.filter(fits));
  for (const server of sorted) {
    let safe = sanitize(server);
    if (!fits(server)) {
      if (taken.has(safe) || safe.length > MAX_PREFIX_LENGTH) safe = withHash(safe, shortHash(server), MAX_PREFIX_LENGTH);
      taken.add(safe);
    }
    prefixes.set(server, safe);
  }
  // Rewrite the longer of each ambiguous pair until none is left. A rewritten part has no
  // `__` and does not end in `_`, so it is never the longer of a pair again: this ends.
  for (let changed = true; changed; ) {
    changed = false;
    const parts = new Set(prefixes.values());
    for (const server of sorted) {
      const part = prefixes.get(server) as string;
      if (!hasShorterAmbiguous(part, parts)) continue;
      const used = new Set(prefixes.values());
      let salt = 0;
      let next = unambiguousForm(server, part, salt);
      while (used.has(next)) next = unambiguousForm(server, part, ++salt);
      prefixes.set(server, next);
      changed = true;
      break;
    }
  }
  return prefixes;
}

/**
 * Public names for one server's tools, `mcp__<server>__<tool>`: safe for chat model
 * APIs, at most 64 characters, unique, and a function of the config and this server's
 * own tool list only (not of its order), so a name never changes because another server
 * started. Names of different servers never collide: their server parts cannot read the
 * same name (see {@link serverPrefixes}). A raw name listed twice gets one name.
 */
export function publicToolNames(server: string, prefix: string, tools: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  const unique = [...new Set(tools)];
  const plain = new Set(unique.filter((t) => sanitize(t) === t));
  const used = new Set<string>();
  // Plain names first, so a safe raw name keeps its plain form; then by raw name, so which
  // of two colliding changed names keeps the short form does not depend on the list's order.
  const ordered = unique.sort((a, b) => Number(plain.has(b)) - Number(plain.has(a)) || byCodeUnit(a, b));
  for (const tool of ordered) {
    const safe = sanitize(tool);
    let name = `${PREFIX}${prefix}${SEPARATOR}${safe}`;
    const changedAndTaken = safe !== tool && (plain.has(safe) || used.has(name));
    if (name.length > MAX_NAME_LENGTH || changedAndTaken || used.has(name)) {
      // A hashed name can still meet a plain one that looks like it: salt until free.
      const base = name;
      name = withHash(base, shortHash(server, tool));
      for (let salt = 1; used.has(name); salt++) name = withHash(base, shortHash(server, tool, String(salt)));
    }
    names.set(tool, name);
    used.add(name);
  }
  return names;
}

/** Which server a public name belongs to; at most one server part can match (see {@link serverPrefixes}). */
export function serverOfPublicName(publicName: string, prefixes: ReadonlyMap<string, string>): string | undefined {
  if (!publicName.startsWith(PREFIX)) return undefined;
  const rest = publicName.slice(PREFIX.length);
  for (const [server, prefix] of prefixes) {
    if (rest.startsWith(`${prefix}${SEPARATOR}`)) return server;
  }
  return undefined;
}

/** The server part a name in the public shape claims, whether or not such a server exists. */
export function claimedServerPart(publicName: string): string | undefined {
  if (!publicName.startsWith(PREFIX)) return undefined;
  const rest = publicName.slice(PREFIX.length);
  const end = rest.indexOf(SEPARATOR, 1);
  return end > 0 ? rest.slice(0, end) : undefined;
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
