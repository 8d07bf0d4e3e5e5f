import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { McpError } from '../../errors.js';
import type { CredentialsResolver } from '../../manager/principals/principal-scope.js';

/**
 * The credentials of the gateway's principals, kept by the operator in one JSON file
 * (`{ "<principal id>": { "NAME": "value" } }`) or a folder of them (`<folder>/<principal
 * id>.json`, each `{ "NAME": "value" }`). Only their owner may read them: a file or folder
 * that another user owns, or that others may read or write (not 0600 / 0700), is refused.
 * Read at each resolve, so a rotated secret is used by the next session.
 */
export function secretsResolver(path: string): CredentialsResolver {
  const folder = checkPrivate(path, 'secrets').isDirectory();
  return (principal) => {
    if (folder) {
      const name = encodeURIComponent(principal.id);
      if (name === '.' || name === '..') return {};
      const file = join(path, `${name}.json`);
      let stat;
      try {
        stat = statSync(file);
      } catch {
        return {}; // no secrets for this principal: the call says which credential is missing
      }
      if (!stat.isFile()) return {};
      checkPrivate(file, 'secrets file');
      return credentialsIn(readJson(file), file);
    }
    checkPrivate(path, 'secrets');
    const all = readJson(path);
    if (typeof all !== 'object' || all === null || Array.isArray(all)) throw new McpError('invalid-config', `secrets file ${path} must hold an object of principals`, { phase: 'config' });
    const own = Object.prototype.hasOwnProperty.call(all, principal.id) ? (all as Record<string, unknown>)[principal.id] : undefined;
    return own === undefined ? {} : credentialsIn(own, `${path} (principal ${JSON.stringify(principal.id)})`);
  };
}

/** Throws unless `path` is the user's own and private to them; returns its stat. */
function checkPrivate(path: string, what: string) {
  let stat;
  try {
    stat = statSync(path);
  } catch (error) {
    throw new McpError('invalid-config', `${what} ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { phase: 'config' });
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) throw new McpError('invalid-config', `${what} ${path} belongs to another user (uid ${stat.uid}); it must be yours`, { phase: 'config' });
  if ((stat.mode & 0o077) !== 0) {
    const wanted = stat.isDirectory() ? '0700' : '0600';
    throw new McpError('invalid-config', `${what} ${path} may be read or written by others (mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}); chmod it ${wanted}`, { phase: 'config' });
  }
  return stat;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    // The parser's message may quote the file's text: a secret. Only the file is named.
    throw new McpError('invalid-config', `secrets file ${file} is not valid JSON${error instanceof SyntaxError ? '' : `: ${(error as NodeJS.ErrnoException).code}`}`, { phase: 'config' });
  }
}

function credentialsIn(value: unknown, where: string): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new McpError('invalid-config', `secrets in ${where} must be an object of strings`, { phase: 'config' });
  for (const [name, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw new McpError('invalid-config', `secret ${name} in ${where} must be a string, got ${typeof item}`, { phase: 'config' });
  }
  return value as Record<string, string>;
}
