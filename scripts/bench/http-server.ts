// The HTTP figure's server, run as a child of the bench: the SDK v2 Streamable HTTP
// handler (`createMcpHandler`: 2026-07-28 per request, stateless legacy serving) on
// 127.0.0.1 with one tool, `echo`. Prints its URL on stdout once listening; exits when
// its stdin ends (the bench closing it or dying), printing how many TCP connections it accepted.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

function echoServer(): McpServer {
  const server = new McpServer({ name: 'bench-http-echo', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes text', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

const handler = createMcpHandler(() => echoServer());
const node = toNodeHandler(handler);
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
