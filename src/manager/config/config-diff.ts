import type { ServerEntry } from './config.js';

/** What `reload()` did, by server name. */
export interface ReloadReport {
  added: string[];
  removed: string[];
  /** Servers whose entry changed: stopped once idle, then started lazily with the new entry. */
  changed: string[];
  /** Servers whose entry is the same: they keep their process, calls and sessions. */
  unchanged: string[];
}

/** Compares two configs server by server. Two entries are the same when they resolve to the same settings. */
export function diffEntries(current: ReadonlyMap<string, ServerEntry>, next: readonly ServerEntry[]): ReloadReport {
  const report: ReloadReport = { added: [], removed: [], changed: [], unchanged: [] };
  const seen = new Set<string>();
  for (const entry of next) {
    seen.add(entry.name);
    const before = current.get(entry.name);
    if (!before) report.added.push(entry.name);
    else if (fingerprint(before) === fingerprint(entry)) report.unchanged.push(entry.name);
    else report.changed.push(entry.name);
  }
  for (const name of current.keys()) if (!seen.has(name)) report.removed.push(name);
  return report;
}

/** A stable text of what an entry resolves to (key order does not matter). */
export function fingerprint(entry: ServerEntry): string {
  const { name: _name, ...rest } = entry as ServerEntry & { error?: Error };
  const body = 'error' in rest && rest.error ? { kind: rest.kind, error: rest.error.message } : rest;
  return stableJson(body);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
