import { readdirSync, readFileSync } from 'node:fs';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpClient, McpServerManager } from '../../src/index.js';
import { BarePipe } from './bare-pipe.js';
import type { ServerSpec } from './setup.js';

/** One connected server, whichever client holds it. */
export interface Conn {
  readonly pid: number;
  call(tool: string, args: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

export interface Impl {
  name: string;
  /** Spawn, handshake (the manager and a session: after a first call): ready for calls. */
  connect(server: ServerSpec): Promise<Conn>;
}

// Children of the SDKs and the bare pipe that are still open, killed if the bench dies
// half way (lazy-mcp's own exit hook covers its children).
const peerChildren = new Set<number>();
process.on('exit', () => {
  for (const pid of peerChildren) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

const tracked = (pid: number, call: Conn['call'], close: () => Promise<void>): Conn => {
  peerChildren.add(pid);
  return {
    pid,
    call,
    close: async () => {
      await close();
      peerChildren.delete(pid);
    },
  };
};

export const bare: Impl = {
  name: 'bare',
  async connect(server) {
    const pipe = await BarePipe.connect(server);
    return tracked(pipe.pid, (tool, args) => pipe.callTool(tool, args), () => pipe.close());
  },
};

export const client: Impl = {
  name: 'McpClient',
  async connect(server) {
    const c = await McpClient.connect({ command: server.command, args: server.args, env: server.env }, { name: 'bench' });
    return { pid: c.pid, call: (tool, args) => c.callTool(tool, args), close: () => c.close() };
  },
};

/** `McpServerManager.callTool` by public name, one server configured. */
export const manager: Impl = {
  name: 'manager',
  async connect(server) {
    const m = McpServerManager.fromConfig(poolConfig(1, () => server, 'echo'));
    await m.callTool('mcp__echo0__echo', { text: 'start' });
    return { pid: m.status().echo0.pid!, call: (tool, args) => m.callTool(`mcp__echo0__${tool}`, args), close: () => m.shutdown() };
  },
};

/** `ToolSession.callTool` of a session of its own manager (its own child). */
export const session: Impl = {
  name: 'session',
  async connect(server) {
    const m = McpServerManager.fromConfig(poolConfig(1, () => server, 'echo'));
    const s = m.session();
    await s.callTool('mcp__echo0__echo', { text: 'start' });
    return { pid: m.status().echo0.pid!, call: (tool, args) => s.callTool(`mcp__echo0__${tool}`, args), close: () => m.shutdown() };
  },
};

/**
 * `ToolSession.callTool` of a principal's session, the server run per principal
 * (`"perPrincipal": true`): the cost of a principal's session against a plain one (`session`).
 */
export const principal: Impl = {
  name: 'principal',
  async connect(server) {
    const config = poolConfig(1, () => server, 'echo');
    const m = McpServerManager.fromConfig({ mcpServers: { echo0: { ...config.mcpServers.echo0, perPrincipal: true } } });
    const s = m.session({ principal: { id: 'bench-user' } });
    const before = childPids();
    await s.callTool('mcp__echo0__echo', { text: 'start' });
    // The instance's process is not in status() (that is the server's, not one principal's): the new child is it.
    const pid = [...childPids()].find((p) => !before.has(p)) ?? NaN;
    return { pid, call: (tool, args) => s.callTool(`mcp__echo0__${tool}`, args), close: () => m.shutdown() };
  },
};

/** This process's children (Linux /proc). */
function childPids(): Set<number> {
  const out = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid) out.add(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

export const sdk1: Impl = {
  name: 'sdk v1',
  async connect(server) {
    const transport = new StdioV1({ command: server.command, args: server.args, env: server.env, stderr: 'pipe' });
    (transport.stderr as NodeJS.ReadableStream | null)?.resume();
    const c = new ClientV1({ name: 'bench', version: '0.0.0' });
    await c.connect(transport);
    return tracked(transport.pid!, (tool, args) => c.callTool({ name: tool, arguments: args }), () => c.close());
  },
};

export const sdk2: Impl = {
  name: 'sdk v2',
  async connect(server) {
    const transport = new StdioV2({ command: server.command, args: server.args, env: server.env, stderr: 'pipe' });
    (transport.stderr as NodeJS.ReadableStream | null)?.resume();
    const c = new ClientV2({ name: 'bench', version: '0.0.0' });
    await c.connect(transport);
    return tracked(transport.pid!, (tool, args) => c.callTool({ name: tool, arguments: args }), () => c.close());
  },
};

/** A manager config of `count` servers named `prefix0`, `prefix1`, … all running `server`. */
export function poolConfig(count: number, server: (i: number) => ServerSpec, prefix = 's') {
  const mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> = {};
  for (let i = 0; i < count; i++) {
    const spec = server(i);
    mcpServers[`${prefix}${i}`] = { command: spec.command, args: spec.args, env: spec.env };
  }
  return { mcpServers };
}

/** Servers of a manager that have a process (a pid) or have left `idle`. */
export function spawnedCount(m: McpServerManager): number {
  return Object.values(m.status()).filter((s) => s.pid !== undefined || s.state !== 'idle').length;
}

/** Text of the first content block of a tool result, whichever client returned it. */
export function firstText(result: unknown): string {
  const content = (result as { content?: { text?: string }[] }).content;
  return content?.[0]?.text ?? '';
}
