import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/fixtures.js';
import { runCli, scratchDir } from './run-cli.js';

// The bundled examples/mcp.json, named with --config from a folder that has no config of
// its own: the reference servers come from this package's node_modules, whatever the
// working directory. (Without --config such a folder has no config: see config-discovery.)
let scratch: ReturnType<typeof scratchDir>;
let run: (args: string[]) => ReturnType<typeof runCli>;
beforeAll(() => {
  scratch = scratchDir();
  run = (args) => runCli([...args, '--config', join(repoRoot, 'examples/mcp.json')], { cwd: scratch.path, env: { LAZY_MCP_TMP: scratch.path } });
});
afterAll(() => scratch.remove());

it('lists the tools of all four servers', async () => {
  const result = await run(['tools', '--json']);
  expect(result).toMatchObject({ code: 0, stderr: '' });
  const tools = JSON.parse(result.stdout) as { name: string; server: string }[];
  expect(new Set(tools.map((t) => t.server))).toEqual(new Set(['everything', 'fs', 'memory', 'dice']));
  expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__fs__read_text_file', 'mcp__memory__read_graph', 'mcp__dice__roll']));
});

it('calls a tool of our example server, starting only that server', async () => {
  const result = await run(['call', 'mcp__dice__roll', '{"dice":"3d6+1"}', '--json', '--verbose']);
  expect(result.code).toBe(0);
  const { structuredContent } = JSON.parse(result.stdout);
  expect(structuredContent.rolls).toHaveLength(3);
  expect(structuredContent.total).toBe(structuredContent.rolls.reduce((a: number, b: number) => a + b, 1));
  expect(result.stderr.match(/starting \w+/g)).toEqual(['starting dice']);
});

it('exits 1 when the example tool reports its own failure', async () => {
  const result = await run(['call', 'mcp__dice__roll', '{"dice":"0d0"}']);
  expect(result).toMatchObject({ code: 1, stdout: '' });
  expect(result.stderr).toBe('lazy-mcp: mcp__dice__roll failed: cannot roll "0d0": write NdS+M, e.g. "2d6" or "d20+3", with 1 to 100 dice of 2 to 1000 sides\n');
});

it('summarises an image of the everything server by type and size', async () => {
  const result = await run(['call', 'mcp__everything__get-tiny-image']);
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/^\[image image\/png, \d+\.\d KiB\]$/m);
});

it('reads the repo\'s examples folder through the filesystem server', async () => {
  const file = join(repoRoot, 'examples/mcp.json');
  const result = await run(['call', 'mcp__fs__read_text_file', JSON.stringify({ path: file })]);
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toHaveProperty('mcpServers.dice');
});

it('keeps the memory server\'s graph in LAZY_MCP_TMP across runs', async () => {
  const entity = { entities: [{ name: 'lazy-mcp', entityType: 'project', observations: ['starts servers lazily'] }] };
  expect((await run(['call', 'mcp__memory__create_entities', JSON.stringify(entity)])).code).toBe(0);
  expect(existsSync(join(scratch.path, 'memory.json'))).toBe(true);
  const graph = await run(['call', 'mcp__memory__read_graph']);
  expect(graph.stdout).toContain('starts servers lazily');
});

it('lists resources and reads one', async () => {
  const list = await run(['resources']);
  expect(list.code).toBe(0);
  expect(list.stdout).toMatch(/^dice:\/\/rules\s+dice\s+rules\s+text\/plain$/m);
  expect(list.stdout).toMatch(/^demo:\/\/resource\/dynamic\/text\/\{resourceId\}\s+everything/m);
  const read = await run(['read', 'dice', 'dice://rules']);
  expect(read).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Dice notation: NdS\+M/) });
});

it('shows every server ready after starting them', async () => {
  const result = await run(['status', '--json']);
  expect(result.code).toBe(0);
  const status = JSON.parse(result.stdout) as Record<string, { state: string; tools: number }>;
  expect(Object.values(status).map((s) => s.state)).toEqual(['ready', 'ready', 'ready', 'ready']);
  expect(status.dice.tools).toBe(2);
});
