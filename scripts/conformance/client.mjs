// The client under test for the official conformance suite (@modelcontextprotocol/conformance):
// the suite starts a scenario's server and runs `node client.mjs <server-url>` with
// MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT for credentials) set. It uses only
// lazy-mcp's public API from the built dist/, as an embedding app would: one manager with
// one remote server, a login when the server needs authorization, then the scenario's calls.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServerManager } from '../../dist/index.js';

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
const log = (...parts) => process.stderr.write(`${parts.join(' ')}\n`);

/** The browser of a test run: follows the authorization URL to where it redirects back, without going there. */
async function authorize(authorizationUrl) {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  await response.body?.cancel();
  const location = response.headers.get('location');
  if (!location) throw new Error(`the authorization endpoint answered ${response.status} without a redirect`);
  return new URL(location, authorizationUrl);
}

function oauthConfig() {
  if (!scenario.startsWith('auth/')) return undefined;
  const oauth = { clientMetadataUrl: 'https://conformance-test.local/client-metadata.json' };
  if (context.client_id) oauth.clientId = context.client_id;
  if (context.client_secret) oauth.clientSecret = context.client_secret;
  return oauth;
}

/** Elicitation: accept with no content of our own, so that the schema's defaults are what is sent. */
const handlers = { elicitation: async () => ({ action: 'accept', content: {} }) };

/** What each scenario's tool wants as arguments. */
const toolArguments = { add_numbers: { a: 5, b: 3 } };

const stateDir = mkdtempSync(join(tmpdir(), 'lazy-mcp-conformance-'));
const oauth = oauthConfig();
const manager = McpServerManager.fromConfig(
  { mcpServers: { server: { type: 'http', url, ...(oauth ? { oauth } : {}) } } },
  { stateDir, authorize, handlers, clientInfo: { name: 'lazy-mcp-conformance', version: '1.0.0' } },
);
let code = 0;
try {
  let tools = await manager.listTools();
  if (manager.status().server.state === 'needs-auth') {
    await manager.login('server');
    tools = await manager.listTools();
  }
  const status = manager.status().server;
  if (status.state !== 'ready') throw status.lastError ?? new Error(`the server is ${status.state}`);
  log(`${scenario}: ${tools.length} tools (${status.era}, ${status.protocolVersion})`);
  for (const tool of tools) {
    if (scenario === 'initialize') break;
    const result = await manager.callServerTool('server', tool.tool.name, toolArguments[tool.tool.name] ?? {});
    log(`${tool.tool.name}:`, JSON.stringify(result.content).slice(0, 300));
  }
} catch (error) {
  log(`${scenario}: ${error?.code ?? ''} ${error?.message ?? error}`);
  code = 1;
} finally {
  await manager.shutdown();
  rmSync(stateDir, { recursive: true, force: true });
}
process.exitCode = code;
