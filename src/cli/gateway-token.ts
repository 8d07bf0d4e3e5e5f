import { UsageError } from './args.js';
import { fs } from '../util/lazy-builtins.js';

/** Where the HTTP gateway's token may come from. */
export interface TokenSources {
  /** `--token T`: seen by every local user in the process list, so a warning goes with it. */
  token?: string;
  /** `--token-file FILE`: the token is the file's first line. */
  tokenFile?: string;
  /** `LAZY_MCP_TOKEN`. */
  env?: string;
}

/**
 * The gateway token, from exactly one of `--token-file`, `--token` or `LAZY_MCP_TOKEN` (the
 * flags win over the variable), and the warnings to print about how it was given.
 */
export function gatewayToken(sources: TokenSources): { token?: string; warnings: string[] } {
  const warnings: string[] = [];
  if (sources.token !== undefined && sources.tokenFile !== undefined) throw new UsageError('give either --token or --token-file, not both');
  if (sources.tokenFile !== undefined) {
    let text: string;
    try {
      text = fs.readFileSync(sources.tokenFile, 'utf8');
      // A token others can read is no secret; say so rather than refuse (the owner decides).
      const mode = fs.statSync(sources.tokenFile).mode;
      if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
        warnings.push(`the token file ${sources.tokenFile} can be read by other users (mode ${(mode & 0o777).toString(8)}); chmod 600 it`);
      }
    } catch (error) {
      throw new UsageError(`--token-file ${JSON.stringify(sources.tokenFile)} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    return { token: nonEmpty(text.split(/\r?\n/, 1)[0].trim(), `--token-file ${JSON.stringify(sources.tokenFile)}`), warnings };
  }
  if (sources.token !== undefined) {
    warnings.push('--token is visible to every local user in the process list; prefer --token-file FILE or the LAZY_MCP_TOKEN variable');
    return { token: nonEmpty(sources.token, '--token'), warnings };
  }
  if (sources.env !== undefined && sources.env !== '') return { token: nonEmpty(sources.env.trim(), 'LAZY_MCP_TOKEN'), warnings };
  return { warnings };
}

function nonEmpty(token: string, source: string): string {
  if (token === '') throw new UsageError(`${source} gives an empty token`);
  return token;
}
