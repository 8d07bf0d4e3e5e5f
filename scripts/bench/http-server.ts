// The HTTP figure's server, run as a child of the bench: the SDK v2 Streamable HTTP
// handler (`createMcpHandler`: 2026-07-28 per request, stateless legacy serving) on
// 127.0.0.1 with one tool, `echo`. Prints its URL on stdout once listening; exits when
// its stdin ends (the bench closing it or dying), printing how many TCP connections it accepted.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

function echoServer(): McpServer {
  const server = new McpServer({ name: 'bench-http-echo', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes text', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

// `--stateful`: the SDK's stateful legacy serving instead (one McpServer per session, kept).
const stateful = process.argv.includes('--stateful');
const handler = createMcpHandler(() => echoServer());
const sessions = new Map<string, NodeStreamableHTTPServerTransport>();
const node = stateful
  ? async (req: IncomingMessage, res: ServerResponse) => {
      const id = req.headers['mcp-session-id'];
      const known = typeof id === 'string' ? sessions.get(id) : undefined;
      if (known) return known.handleRequest(req, res);
      if (typeof id === 'string') return void res.writeHead(404).end();
      const transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, transport),
        onsessionclosed: (sid) => void sessions.delete(sid),
      });
      await echoServer().connect(transport);
      await transport.handleRequest(req, res);
    }
  : toNodeHandler(handler);
// Keep-alive longer than any pause of the bench between runs, so every run reuses its sockets.
const http = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  Promise.resolve(node(req, res)).catch((error: unknown) => {
    if (!res.headersSent) res.writeHead(500).end(String(error));
  });
});
let sockets = 0;
http.on('connection', () => sockets++);
http.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp\n`);
});
process.stdin.resume();
process.stdin.on('end', () => {
  // How many TCP connections the clients opened in all: with keep-alive, about one per call in flight.
  process.stdout.write(`connections ${sockets}\n`);
  void handler.close();
  http.closeAllConnections();
  http.close(() => process.exit(0));
});
