import type { CommandContext } from './commands.js';

/**
 * `lazy-mcp login <server> [--principal ID]`: the OAuth authorization of one remote
 * server, through a loopback listener on 127.0.0.1. The URL is printed on stderr (and
 * opened on a desktop); the tokens land in the state folder, where the embedding app's
 * manager finds them: a principal's under that principal, for a server run per principal.
 */
export async function login(server: string, principal: string | undefined, ctx: CommandContext): Promise<number> {
  await ctx.manager.login(server, { signal: ctx.signal, ...(principal === undefined ? {} : { principal: { id: principal } }) });
  if (ctx.json) ctx.print(JSON.stringify({ server, ...(principal === undefined ? {} : { principal }), authorized: true }));
  else ctx.reporter.line(`lazy-mcp: ${JSON.stringify(server)} is authorized${principal === undefined ? '' : ` for principal ${JSON.stringify(principal)}`}`);
  return 0;
}
