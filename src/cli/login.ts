import type { CommandContext } from './commands.js';

/**
 * `lazy-mcp login <server>`: the OAuth authorization of one remote server, through a
 * loopback listener on 127.0.0.1. The URL is printed on stderr (and opened on a desktop);
 * the tokens land in the state folder, where the embedding app's manager finds them.
 */
export async function login(server: string, ctx: CommandContext): Promise<number> {
  await ctx.manager.login(server, { signal: ctx.signal });
  if (ctx.json) ctx.print(JSON.stringify({ server, authorized: true }));
  else ctx.reporter.line(`lazy-mcp: ${JSON.stringify(server)} is authorized`);
  return 0;
}
