import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpClient, McpServerManager } from '../../src/index.js';
import { BarePipe } from './bare-pipe.js';
import type { ServerSpec } from './setup.js';

/** One connected server, whichever client holds it. */
export interface Conn {
  readonly pid: number;
  call(tool: string, args: Record<string, unknown>): Promise<unknown>;
  listTools(): Promise<unknown[]>;
  close(): Promise<void>;
}

export type ImplName = 'lazy-mcp' | 'sdk' | 'bare';

export interface Impl {
  name: ImplName;
  /** Spawn, handshake: ready for the first call. */
  connect(server: ServerSpec): Promise<Conn>;
}

// Children of the SDK and the bare pipe that are still open, killed if the bench dies
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

export const lazy: Impl = {
  name: 'lazy-mcp',
  async connect(server) {
    const client = await McpClient.connect({ command: server.command, args: server.args, env: server.env }, { name: 'bench' });
    return {
      pid: client.pid,
      call: (tool, args) => client.callTool(tool, args),
      listTools: () => client.listTools(),
      close: () => client.close(),
    };
  },
};

export const sdk: Impl = {
  name: 'sdk',
  async connect(server) {
    const transport = new StdioClientTransport({ command: server.command, args: server.args, env: server.env, stderr: 'pipe' });
    (transport.stderr as NodeJS.ReadableStream | null)?.resume();
    const client = new Client({ name: 'bench', version: '0.0.0' });
    await client.connect(transport);
    const pid = transport.pid!;
    peerChildren.add(pid);
    return {
      pid,
      call: (tool, args) => client.callTool({ name: tool, arguments: args }),
      listTools: async () => (await client.listTools()).tools,
      close: async () => {
        await client.close();
        peerChildren.delete(pid);
      },
    };
  },
};

export const bare: Impl = {
  name: 'bare',
  async connect(server) {
    const pipe = await BarePipe.connect(server);
    peerChildren.add(pipe.pid);
    return {
      pid: pipe.pid,
      call: (tool, args) => pipe.callTool(tool, args),
      listTools: async () => ((await pipe.request('tools/list')) as { tools: unknown[] }).tools,
      close: async () => {
        await pipe.close();
        peerChildren.delete(pipe.pid);
      },
    };
  },
};

export const impls: readonly Impl[] = [lazy, sdk, bare];

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
export function spawnedCount(manager: McpServerManager): number {
  return Object.values(manager.status()).filter((s) => s.pid !== undefined || s.state !== 'idle').length;
}

/** Text of the first content block of a tool result, whichever client returned it. */
export function firstText(result: unknown): string {
  const content = (result as { content?: { text?: string }[] }).content;
  return content?.[0]?.text ?? '';
}
