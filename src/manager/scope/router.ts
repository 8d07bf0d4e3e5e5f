import { McpError, serverLabel } from '../../errors.js';
import { abortable } from '../../util/deadline.js';
import type { ManagedPrompt } from '../catalog/prompt-index.js';
import type { NameIndex, Named } from '../catalog/name-index.js';
import type { ManagedTool } from '../catalog/tool-index.js';
import type { ServerSlot } from '../pool/server-slot.js';
import { type PoolState, slotOf, type View } from './pool-state.js';

/** What routing needs to know about one kind of public name. */
interface NameKind<T extends Named> {
  noun: 'tool' | 'prompt';
  method: 'tools/call' | 'prompts/get';
  unknown: 'unknown-tool' | 'unknown-prompt';
  index(pool: PoolState): NameIndex<T>;
  /** Lists the server's items into the index (starting the server if it must). */
  list(pool: PoolState, slot: ServerSlot): Promise<unknown>;
  /** Known from a cache entry only: whether listing live found the list changed. */
  confirmCached?(pool: PoolState, slot: ServerSlot): Promise<boolean>;
  /** Why a public name left out of its server's listing cannot be used. */
  refusal?(pool: PoolState, name: string): { server: string; error: McpError } | undefined;
}

const TOOLS: NameKind<ManagedTool> = {
  noun: 'tool',
  method: 'tools/call',
  unknown: 'unknown-tool',
  index: (pool) => pool.catalog.index,
  list: (pool, slot) => pool.catalog.toolsOf(slot),
  confirmCached: (pool, slot) => pool.catalog.confirmCached(slot),
  refusal: (pool, name) => pool.catalog.index.refusal(name),
};

const PROMPTS: NameKind<ManagedPrompt> = {
  noun: 'prompt',
  method: 'prompts/get',
  unknown: 'unknown-prompt',
  index: (pool) => pool.catalog.prompts,
  list: (pool, slot) => pool.catalog.promptsOf(slot),
};

/** Finds the server and raw tool behind a public tool name, starting at most that one server. */
export function routeTool(pool: PoolState, name: string, view: View, signal?: AbortSignal): Promise<ManagedTool> {
  return route(TOOLS, pool, name, view, signal);
}

/** Finds the server and raw prompt behind a public prompt name, starting at most that one server. */
export function routePrompt(pool: PoolState, name: string, view: View, signal?: AbortSignal): Promise<ManagedPrompt> {
  return route(PROMPTS, pool, name, view, signal);
}

async function route<T extends Named>(kind: NameKind<T>, pool: PoolState, name: string, view: View, signal?: AbortSignal): Promise<T> {
  const index = kind.index(pool);
  const known = index.resolve(name);
  if (known && (!view || view.has(known.server))) return known;
  const server = index.serverOf(name);
  if (server !== undefined && (!view || view.has(server))) {
    const slot = slotOf(pool, server);
    if (!slot.enabled) await slot.ready(); // throws why it cannot run
    const what = `${kind.method} ${JSON.stringify(name)}`;
    // A reload that replaced the server while it started or listed: ask its successor.
    const replaced = () => pool.slots.get(server) !== slot && !pool.closed;
    if (!index.itemsOf(server)) {
      try {
        await abortable(kind.list(pool, slot), signal, what, server);
      } catch (error) {
        if (replaced()) return route(kind, pool, name, view, signal);
        throw error;
      }
      const found = index.resolve(name);
      if (found) return found;
      if (replaced()) return route(kind, pool, name, view, signal);
    } else if (kind.confirmCached && (await abortable(kind.confirmCached(pool, slot), signal, what, server))) {
      // Known from a cache entry only: the server may list this name now (another version, another handshake).
      if (replaced()) return route(kind, pool, name, view, signal);
      const found = index.resolve(name);
      if (found) return found;
    }
  }
  throw notFound(kind, pool, name, view, server);
}

/** Why a name routes nowhere, with the closest names and servers the caller may use. */
function notFound<T extends Named>(kind: NameKind<T>, pool: PoolState, name: string, view: View, server: string | undefined): McpError {
  const index = kind.index(pool);
  const refused = kind.refusal?.(pool, name);
  if (refused && (!view || view.has(refused.server))) return refused.error;
  if (view && server !== undefined && !view.has(server)) {
    return new McpError(kind.unknown, `${kind.noun} ${JSON.stringify(name)} is not available in this session: its server ${JSON.stringify(server)} is not among the session's servers (${[...view].join(', ') || 'none'})`, {
      server,
      phase: kind.method,
    });
  }
  const part = server === undefined ? index.unknownServerPart(name) : undefined;
  if (part !== undefined) {
    const configured = [...pool.slots.keys()].filter((s) => !view || view.has(s));
    const close = index.closeServers(part).filter((s) => configured.includes(s));
    return new McpError(
      'unknown-server',
      `no server named ${JSON.stringify(part)} for ${kind.noun} ${JSON.stringify(name)}${close.length ? `; did you mean ${close.join(', ')}?` : ''}${configured.length ? ` (configured: ${configured.join(', ')})` : ''}`,
      { phase: kind.method },
    );
  }
  const matches = index.closeMatches(name, 3, view);
  const hint = matches.length > 0 ? `; did you mean ${matches.join(', ')}?` : '';
  return new McpError(kind.unknown, `${server === undefined ? '' : serverLabel(server)}no ${kind.noun} named ${JSON.stringify(name)}${hint}`, {
    ...(server === undefined ? {} : { server }),
    phase: kind.method,
  });
}
