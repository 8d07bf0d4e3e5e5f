import { shown as describe } from '../../util/check.js';
/** Which of a server's tools may be used: exact names or `*` globs over the server's raw tool names. */
export interface ToolFilter {
  /** When given, only tools matching one of these are listed, searched and callable. */
  allow?: string[];
  /** Tools matching one of these are hidden, even when allowed. */
  deny?: string[];
}

/** Whether a raw tool name passes a filter. */
export type ToolPredicate = (rawName: string) => boolean;

/**
 * The predicate of a filter, or undefined when it lets everything through (so callers can
 * skip the check). A tool must be allowed, when `allow` is given, and not denied.
 */
export function toolPredicate(filter: ToolFilter | undefined): ToolPredicate | undefined {
  if (!filter || (filter.allow === undefined && (filter.deny === undefined || filter.deny.length === 0))) return undefined;
  const allow = filter.allow && matcher(filter.allow);
  const deny = filter.deny && filter.deny.length > 0 ? matcher(filter.deny) : undefined;
  return (name) => (!allow || allow(name)) && !(deny && deny(name));
}

/**
 * Why a value is not a tool filter (the field under `tools` and the problem), or undefined
 * when it is one. Messages follow the config's shape: the caller names the server.
 */
export function toolFilterProblem(value: unknown): { field: string; message: string } | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { field: 'tools', message: `must be an object { allow?, deny? }, got ${describe(value)}` };
  }
  for (const key of Object.keys(value)) {
    if (key !== 'allow' && key !== 'deny') return { field: `tools.${key}`, message: 'is not a tool filter field; use "allow" or "deny"' };
  }
  for (const key of ['allow', 'deny'] as const) {
    const list = (value as Record<string, unknown>)[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return { field: `tools.${key}`, message: `must be an array of tool names or * globs, got ${describe(list)}` };
    for (const [i, item] of list.entries()) {
      if (typeof item !== 'string' || item === '') {
        return { field: `tools.${key}[${i}]`, message: `must be a non-empty tool name or * glob, got ${describe(item)}` };
      }
    }
  }
  return undefined;
}

function matcher(patterns: readonly string[]): ToolPredicate {
  const exact = new Set(patterns.filter((p) => !p.includes('*')));
  const globs = patterns.filter((p) => p.includes('*')).map(globToRegExp);
  return (name) => exact.has(name) || globs.some((glob) => glob.test(name));
}

/** `*` matches any run of characters (none included); everything else is literal. */
function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's');
}

