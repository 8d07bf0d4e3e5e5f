#!/usr/bin/env node
// A small MCP server of our own, written against the protocol directly (no SDK) to show
// how little a stdio server needs: newline-delimited JSON-RPC on stdin/stdout, the
// `initialize` handshake, `tools/*` and `resources/*`. It starts in tens of
// milliseconds, which makes the lazy start of one server easy to see next to the
// reference servers. Run it with `node examples/servers/dice-server.mjs`.
import { randomInt } from 'node:crypto';
import { createInterface } from 'node:readline';

const SERVER_INFO = { name: 'lazy-mcp-example-dice', version: '1.0.0' };
const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];
const NOTATION = /^(\d*)d(\d+)([+-]\d+)?$/i;

const RULES = `Dice notation: NdS+M — roll N dice with S sides and add M.
"d20" is one twenty-sided die, "3d6" three six-sided dice, "2d8-1" two eight-sided dice minus one.
N is 1 to 100, S is 2 to 1000.`;

const tools = {
  roll: {
    description: 'Roll dice in NdS+M notation, e.g. "2d6" or "d20+3"\nReturns each die, the modifier and the total.',
    inputSchema: {
      type: 'object',
      properties: { dice: { type: 'string', description: 'Dice notation, default "1d6"' } },
    },
    outputSchema: {
      type: 'object',
      properties: { rolls: { type: 'array', items: { type: 'integer' } }, modifier: { type: 'integer' }, total: { type: 'integer' } },
      required: ['rolls', 'modifier', 'total'],
    },
    run: ({ dice = '1d6' }) => {
      const match = NOTATION.exec(String(dice).trim());
      const count = match ? Number(match[1] || 1) : 0;
      const sides = match ? Number(match[2]) : 0;
      if (!match || count < 1 || count > 100 || sides < 2 || sides > 1000) {
        // A tool's own failure is a result with isError, not a protocol error: the model should see it.
        const why = 'write NdS+M, e.g. "2d6" or "d20+3", with 1 to 100 dice of 2 to 1000 sides';
        return { content: [{ type: 'text', text: `cannot roll ${JSON.stringify(dice)}: ${why}` }], isError: true };
      }
      const rolls = Array.from({ length: count }, () => randomInt(1, sides + 1));
      const modifier = Number(match[3] ?? 0);
      const total = rolls.reduce((a, b) => a + b, modifier);
      const shown = `${rolls.join(' + ')}${modifier ? ` (${modifier > 0 ? '+' : ''}${modifier})` : ''}`;
      return {
        content: [{ type: 'text', text: rolls.length === 1 && !modifier ? `${dice}: ${total}` : `${dice}: ${shown} = ${total}` }],
        structuredContent: { rolls, modifier, total },
      };
    },
  },
  flip_coin: {
    description: 'Flip a coin',
    inputSchema: { type: 'object', properties: {} },
    run: () => ({ content: [{ type: 'text', text: randomInt(2) === 0 ? 'heads' : 'tails' }] }),
  },
};

const resources = [{ uri: 'dice://rules', name: 'rules', description: 'How to write dice notation', mimeType: 'text/plain', text: RULES }];

/** JSON-RPC error with the protocol's own numeric codes. */
const rpcError = (code, message) => Object.assign(new Error(message), { code });

const handlers = {
  initialize: (params) => ({
    // Answer the client's revision when we speak it, else our newest (the client decides).
    protocolVersion: PROTOCOL_VERSIONS.includes(params.protocolVersion) ? params.protocolVersion : PROTOCOL_VERSIONS[0],
    capabilities: { tools: {}, resources: {} },
    serverInfo: SERVER_INFO,
  }),
  ping: () => ({}),
  'tools/list': () => ({ tools: Object.entries(tools).map(([name, { run, ...definition }]) => ({ name, ...definition })) }),
  'tools/call': (params) => {
    const tool = tools[params.name];
    if (!tool) throw rpcError(-32602, `Unknown tool: ${params.name}`);
    return tool.run(params.arguments ?? {});
  },
  'resources/list': () => ({ resources: resources.map(({ text, ...entry }) => entry) }),
  'resources/templates/list': () => ({ resourceTemplates: [] }),
  'resources/read': (params) => {
    const resource = resources.find((r) => r.uri === params.uri);
    if (!resource) throw rpcError(-32002, `Resource not found: ${params.uri}`);
    return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text: resource.text }] };
  },
};

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);

function handle(line) {
  if (!line.trim()) return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    send({ id: null, error: { code: -32700, message: 'Parse error' } });
    return;
  }
  // Notifications (initialized, cancelled, …) need no answer; this server has nothing to cancel.
  if (message.id === undefined || typeof message.method !== 'string') return;
  const handler = handlers[message.method];
  if (!handler) {
    send({ id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } });
    return;
  }
  try {
    send({ id: message.id, result: handler(message.params ?? {}) });
  } catch (error) {
    send({ id: message.id, error: { code: error.code ?? -32603, message: error.message } });
  }
}

// stdout carries protocol messages only; anything for people goes to stderr.
process.stderr.write(`${SERVER_INFO.name} ${SERVER_INFO.version} ready on stdio\n`);
const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on('line', handle);
// The MCP stdio way to stop a server is closing its stdin: then nothing keeps the event
// loop alive and the process ends by itself, after its last answers are written.
