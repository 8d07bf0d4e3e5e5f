import { isAbsolute, join, resolve } from 'node:path';
import { shown as describe } from '../../util/check.js';
import { DEFAULT_SANDBOX, type SandboxPolicy } from '../../transport/stdio/sandbox/policy.js';
import { homedir } from '../../util/lazy-builtins.js';

/** A problem with an entry's `sandbox`: the field it is in and what is wrong, said after the field's name. */
export interface SandboxProblem {
  field: string;
  message: string;
}

const FIELDS = new Set(['read', 'write', 'network', 'env']);
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * An entry's `sandbox` as a policy: `true` is {@link DEFAULT_SANDBOX}, `false` or absent
 * none. Paths expand `${VAR}` and `${workspaceFolder}` through `expand` and a leading
 * `~` to `home`, and must then be absolute.
 */
export function sandboxPolicy(
  value: unknown,
  expand: (field: string, value: string) => string,
  home: string | undefined = homedir(),
): SandboxPolicy | SandboxProblem | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return DEFAULT_SANDBOX;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { field: 'sandbox', message: `must be true, false or an object { read, write, network, env }, got ${describe(value)}` };
  }
  const entry = value as Record<string, unknown>;
  for (const key of Object.keys(entry)) {
    if (!FIELDS.has(key)) return { field: `sandbox.${key}`, message: 'is not a sandbox field (read, write, network, env)' };
  }
  const lists: Partial<Record<'read' | 'write' | 'env', string[]>> = {};
  for (const key of ['read', 'write', 'env'] as const) {
    const list = entry[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return { field: `sandbox.${key}`, message: `must be an array of strings, got ${describe(list)}` };
    const items: string[] = [];
    for (const [i, item] of list.entries()) {
      const field = `sandbox.${key}[${i}]`;
      if (typeof item !== 'string' || item === '') return { field, message: `must be a non-empty string, got ${describe(item)}` };
      if (key === 'env') {
        if (!VARIABLE_NAME.test(item)) return { field, message: `must be an environment variable name, got ${describe(item)}` };
        items.push(item);
        continue;
      }
      const path = expandHome(expand(field, item), home);
      if (path === undefined) return { field, message: `uses ~, but the home folder is not known, got ${describe(item)}` };
      if (!isAbsolute(path)) return { field, message: `must be an absolute path (or start with ~ or \${workspaceFolder}), got ${describe(item)}` };
      items.push(resolve(path));
    }
    lists[key] = items;
  }
  const network = entry.network ?? false;
  if (typeof network !== 'boolean') return { field: 'sandbox.network', message: `must be a boolean, got ${describe(network)}` };
  return { read: lists.read ?? [], write: lists.write ?? [], network, env: lists.env ?? [] };
}

export function isSandboxProblem(value: SandboxPolicy | SandboxProblem | undefined): value is SandboxProblem {
  return value !== undefined && 'message' in value;
}

function expandHome(path: string, home: string | undefined): string | undefined {
  if (path !== '~' && !path.startsWith('~/')) return path;
  return home === undefined || home === '' ? undefined : join(home, path.slice(1));
}

