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
  // The machine-to-machine scenarios: a client that authenticates as itself, no user.
  if (scenario.startsWith('auth/client-credentials-')) oauth.grant = 'client_credentials';
  if (context.private_key_pem) oauth.privateKey = context.private_key_pem;
  if (context.signing_algorithm) oauth.signingAlgorithm = context.signing_algorithm;
  return oauth;
}

/** Elicitation: accept with no content of our own, so that the schema's defaults are what is sent. */
const handlers = { elicitation: async () => ({ action: 'accept', content: {} }) };

/** What each scenario's tool wants as arguments, when the scenario does not name its calls. */
const toolArguments = { add_numbers: { a: 5, b: 3 }, valid_tool: { region: 'us-west1' } };

/**
 * The calls a scenario wants, in order: the ones its context names (`toolCalls`), the
 * JSON Schema preservation round trip (the focal tool's schema as listed, echoed back),
 * else every listed tool once.
 */
function plannedCalls(tools) {
  // lazy-mcp refuses arguments that do not fit the tool's inputSchema before sending them
  // (invalid-arguments), and `null` fits no `type: boolean`: a null the scenario names for an
  // optional parameter is left out instead, the "not provided" case of the same rule.
  if (Array.isArray(context.toolCalls)) return context.toolCalls.map((c) => ({ name: c.name, args: withoutNulls(c.arguments ?? {}) }));
  if (scenario === 'json-schema-2020-12-preservation') {
    const focal = tools.find((t) => t.tool.name === 'json_schema_2020_12_tool');
    return focal ? [{ name: 'json_schema_echo', args: { schema: focal.tool.inputSchema } }] : [];
  }
  if (scenario === 'initialize') return [];
  return tools.map((t) => ({ name: t.tool.name, args: toolArguments[t.tool.name] ?? {} }));
}

function withoutNulls(args) {
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null));
}

/** A host asks its user to log in again once, not in a loop (scope-retry-limit counts the attempts). */
let relogins = 0;
const refusedAgain = (error) => (error?.status ?? error?.cause?.status) === 401;
const reloginOnce = () => relogins++ === 0;

/**
 * As a host does when a call says the server needs authorization again (its tokens were
 * revoked, it moved to another authorization server): log in, then retry once.
 */
async function withLogin(operation) {
  try {
    return await operation();
  } catch (error) {
    if (error?.code !== 'auth-required' || !refusedAgain(error) || !reloginOnce()) throw error;
    log(`auth-required, logging in again: ${error.message}`);
    await manager.login('server');
    return operation();
  }
}

const stateDir = mkdtempSync(join(tmpdir(), 'lazy-mcp-conformance-'));
const oauth = oauthConfig();
const manager = McpServerManager.fromConfig(
  { mcpServers: { server: { type: 'http', url, ...(oauth ? { oauth } : {}) } } },
  { stateDir, authorize, handlers, clientInfo: { name: 'lazy-mcp-conformance', version: '1.0.0' } },
);
let code = 0;
try {
  // A listing does not throw for a server that needs authorization: it says so in its status.
  let tools = await manager.listTools();
  if (manager.status().server.state === 'needs-auth') {
    await manager.login('server');
    tools = await manager.listTools();
  }
  // Refused again (401: revoked, or the server moved to another authorization server), not
  // short of scope after the step-ups lazy-mcp already made (403): log in once more.
  if (manager.status().server.state === 'needs-auth' && refusedAgain(manager.status().server.lastError) && reloginOnce()) {
    await manager.login('server');
    tools = await manager.listTools();
  }
  const status = manager.status().server;
  if (status.state !== 'ready') throw status.lastError ?? new Error(`the server is ${status.state}`);
  log(`${scenario}: ${tools.length} tools (${status.era}, ${status.protocolVersion})`);
  for (const { name, args } of plannedCalls(tools)) {
    const result = await withLogin(() => manager.callServerTool('server', name, args));
    log(`${name}:`, JSON.stringify(result.content).slice(0, 300));
  }
} catch (error) {
  log(`${scenario}: ${error?.code ?? ''} ${error?.message ?? error}`);
  code = 1;
} finally {
  await manager.shutdown();
  rmSync(stateDir, { recursive: true, force: true });
}
process.exitCode = code;
