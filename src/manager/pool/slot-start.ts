import { McpError } from '../../errors.js';
import { McpClient, type RequestScope } from '../../protocol/client.js';
import type { Channel } from '../../transport/channel.js';
import { withDownloadHint, withSandboxHint } from '../config/runner-hint.js';
import type { TraceHandle } from '../telemetry/tracing.js';
import type { RunnableEntry } from './channel-factory.js';
import type { SlotHost } from './slot-host.js';
import type { Starting } from './slot-transitions.js';

/** What a start needs from its slot. */
export interface StartSite {
  readonly name: string;
  readonly entry: RunnableEntry;
  readonly host: SlotHost;
  /** Requests waiting for this start: their callers count for the questions the server asks meanwhile. */
  readonly waiting: Iterable<RequestScope>;
  closedError(): McpError;
}

/** A start that succeeded. `early`: ready on the known tools; the live listing is still owed. */
export interface Started {
  readonly client: McpClient;
  readonly early: boolean;
}

/**
 * One attempt to start a server: wait for the slot it replaces, open the channel (from the
 * host's factory), negotiate, and list its tools unless the known ones may stand. Only a
 * shutdown aborts it (`signal`); then, or on a failure, everything it opened is closed
 * before it rejects, so an aborted start is over only once its channel is.
 *
 * A server that died while it was listed is a failed start, never a `ready` slot on a
 * dead connection.
 */
export async function startConnection(site: StartSite, starting: Starting, signal: AbortSignal): Promise<Started> {
  const { name, entry, host } = site;
  let channel: Channel | undefined;
  let client: McpClient | undefined;
  let began = 0;
  let span: TraceHandle | undefined;
  let early = false;
  try {
    await host.predecessor;
    if (signal.aborted) throw site.closedError();
    // Timed from here: the wait for the predecessor to finish its calls is not this start's.
    began = performance.now();
    span = host.tracing?.start(name, entry.kind === 'http' ? entry.config.transport : 'stdio');
    const options = host.connectOptions(name);
    channel = await host.channels.open(entry, { options, auth: host.auth?.(name), signal });
    if (signal.aborted) throw site.closedError();
    const stderr = options.listeners?.stderr;
    starting.silent = true;
    const listeners = { ...options.listeners, stderr: (line: string) => ((starting.silent = false), stderr?.(line)) };
    const timeout = entry.config.timeout ?? options.timeout;
    client = await McpClient.over(channel, { ...options, listeners, timeout, signal, waiting: () => site.waiting });
    if (signal.aborted) throw site.closedError();
    early = client.capabilities.tools !== undefined && host.knowsTools(name, client);
    if (!early) await listTools(site, client, signal);
    // The server may have gone during the listing (a prompts/list it died on is no start
    // failure by itself): its close fired before the slot watches, so it is a failed start now.
    if (!client.isOpen) throw client.closedReason ?? site.closedError();
  } catch (error) {
    await client?.close();
    await channel?.close();
    span?.end(error instanceof McpError ? error : undefined);
    throw error;
  }
  span?.end();
  host.metrics.started(performance.now() - began);
  return { client, early };
}

/** The start's own tool listing, handed to the host; a shutdown meanwhile ends it. */
async function listTools(site: StartSite, client: McpClient, signal: AbortSignal): Promise<void> {
  const onAbort = () => void client.close();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const tools = client.capabilities.tools ? await client.listTools() : [];
    if (signal.aborted) throw site.closedError();
    await site.host.toolsListed(site.name, client, tools);
    if (signal.aborted) throw site.closedError();
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A start's failure, with a word on package runners (when the server has said nothing) and on sandboxes. */
export function hinted(entry: RunnableEntry, error: unknown, printedNothing: boolean): unknown {
  if (entry.kind !== 'stdio') return error;
  const { command, args, sandbox } = entry.config;
  const runner = { command, args, sandbox };
  return withSandboxHint(withDownloadHint(error, runner, printedNothing), runner);
}
