import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { z } from 'zod';

/** A local HTTP server under test, with what the tests look at. */
export interface TestHttpServer {
  url: string;
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** Every request seen: method, and the headers the tests check. */
  readonly requests: { method: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

/** Request ids whose handler saw its signal abort (the client closed the stream or cancelled). */
export const abortedCalls: string[] = [];

/**
 * The tools every SDK test server has: `echo`, `count` (sends progress before answering)
 * and `hold` (sends one progress, then waits for its signal, recording the abort).
 */
export function buildServer(): McpServer {
  const server = new McpServer({ name: 'http-test', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes text', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool('count', { description: 'Counts with progress', inputSchema: z.object({ to: z.number() }) }, async ({ to }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (let i = 1; i <= to; i++) {
      if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: to } });
    }
    return { content: [{ type: 'text', text: `counted to ${to}` }] };
  });
  server.registerTool('hold', { description: 'Waits until cancelled', inputSchema: z.object({ tag: z.string() }) }, async ({ tag }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 1 } });
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 20000);
      ctx.mcpReq.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        abortedCalls.push(tag);
        resolve();
      }, { once: true });
    });
    return { content: [{ type: 'text', text: 'held' }] };
  });
  return server;
}

/** Serves `handle` on 127.0.0.1, counting connections and recording requests. */
export async function listen(handle: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>): Promise<TestHttpServer & { server: Server }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const requests: TestHttpServer['requests'] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', headers: req.headers });
    Promise.resolve(handle(req, res)).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/mcp`,
    get connections() {
      return connections;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The SDK's stateful legacy server: one session (and McpServer) per `initialize`. */
export async function startStatefulServer(): Promise<TestHttpServer & { expireSessions(): void; sessions(): number }> {
  const transports = new Map<string, NodeStreamableHTTPServerTransport>();
  const base = await listen(async (req, res) => {
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = transports.get(sessionId);
      if (!transport) return void res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
      return transport.handleRequest(req, res);
    }
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void transports.set(id, transport),
      onsessionclosed: (id) => void transports.delete(id),
    });
    await buildServer().connect(transport);
    await transport.handleRequest(req, res);
  });
  return {
    ...base,
    get connections() {
      return base.connections;
    },
    expireSessions: () => transports.clear(),
    sessions: () => transports.size,
    close: async () => {
      await Promise.all([...transports.values()].map((t) => t.close()));
      await base.close();
    },
  };
}

/** The SDK's `createMcpHandler`: 2026-07-28 per request, and stateless legacy serving. */
export async function startHandlerServer(): Promise<TestHttpServer> {
  const handler = createMcpHandler(() => buildServer());
  const node = toNodeHandler(handler);
  const base = await listen((req, res) => node(req, res));
  return {
    ...base,
    get connections() {
      return base.connections;
    },
    close: async () => {
      await handler.close();
      await base.close();
    },
  };
}

/** The SDK v1 HTTP+SSE server: GET /sse opens a session, POST /messages?sessionId=… feeds it. */
export async function startSseServer(): Promise<TestHttpServer & { openStreams(): number }> {
  const transports = new Map<string, SSEServerTransport>();
  const base = await listen(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      transports.set(transport.sessionId, transport);
      const server = new McpServerV1({ name: 'sse-test', version: '1.0.0' });
      res.on('close', () => {
        transports.delete(transport.sessionId);
        void server.close();
      });
      server.registerTool('echo', { description: 'Echoes', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
      await server.connect(transport);
      return;
    }
    const transport = transports.get(url.searchParams.get('sessionId') ?? '');
    if (req.method === 'POST' && url.pathname === '/messages' && transport) return transport.handlePostMessage(req, res);
    res.writeHead(404).end('no such session');
  });
  return {
    ...base,
    url: base.url.replace(/\/mcp$/, '/sse'),
    get connections() {
      return base.connections;
    },
    openStreams: () => transports.size,
    close: async () => {
      await Promise.all([...transports.values()].map((t) => t.close()));
      await base.close();
    },
  };
}
