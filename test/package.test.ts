import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './support/fixtures.js';
import { tempDir } from './support/temp-dirs.js';

const run = promisify(execFile);

// The package as users get it: `npm pack`, unpacked into a new project's node_modules
// (an offline install: the registry cannot be reached here, so the dependencies are
// linked from this repo's node_modules), type-checked from a strict consumer and imported.
let project: string;
let unpacked: string;
beforeAll(async () => {
  const packs = tempDir('lazy-mcp-pack-');
  // dist/ is what the global setup just built; prepack (checked below) builds it the same way.
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packs], { cwd: repoRoot, timeout: 60_000 });
  const [{ filename }] = JSON.parse(stdout) as { filename: string }[];
  project = tempDir('lazy-mcp-consumer-');
  unpacked = join(project, 'node_modules', 'lazy-mcp');
  mkdirSync(unpacked, { recursive: true });
  await run('tar', ['-xzf', join(packs, filename), '-C', unpacked, '--strip-components=1'], { timeout: 30_000 });
  const manifest = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const name of [...Object.keys(manifest.dependencies), '@types/node', 'typescript']) {
    const link = join(project, 'node_modules', name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(repoRoot, 'node_modules', name), link);
  }
}, 90_000);

it('builds dist/ before packing', () => {
  const { scripts } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  expect(scripts.prepack).toMatch(/tsc -p tsconfig\.build\.json/);
});

it('holds the built JS and types, the adapters entry, the CLI, the example config and the LICENSE, and no sources or maps', () => {
  for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/adapters.js', 'dist/adapters.d.ts', 'dist/cli/main.js', 'examples/mcp.json', 'LICENSE', 'package.json']) {
    expect([file, existsSync(join(unpacked, file))]).toEqual([file, true]);
  }
  const top = readdirSync(unpacked).sort();
  expect(top).not.toContain('src');
  expect(top).not.toContain('test');
  expect(readdirSync(join(unpacked, 'dist')).filter((f) => f.endsWith('.map'))).toEqual([]);
  expect(readFileSync(join(unpacked, 'LICENSE'), 'utf8')).toMatch(/MIT License/);
});

it('type-checks a strict consumer that narrows tool content on its type', async () => {
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, noEmit: true, types: ['node'] }, files: ['consumer.ts'] }),
  );
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  writeFileSync(
    join(project, 'consumer.ts'),
    `import { McpClient, McpServerManager, isMcpError, type CallToolResult, type Channel, type ContentBlock, type ExitStatus, type RequestOptions } from 'lazy-mcp';
import { toAnthropicTool } from 'lazy-mcp/adapters';

export function describe(block: ContentBlock): string {
  if (block.type === 'text') {
    const text: string = block.text; // fails if the union did not narrow (unknown)
    // @ts-expect-error: a string is not a number (unused, and so an error, if text were any)
    const wrong: number = block.text;
    return text + String(wrong);
  }
  if (block.type === 'image') return block.mimeType;
  if (block.type === 'resource_link') return block.uri;
  return block.type;
}

export async function firstText(manager: McpServerManager): Promise<string> {
  try {
    const result: CallToolResult = await manager.callTool('mcp__fs__read_file', { path: '/x' });
    return result.content.map(describe).join('');
  } catch (error) {
    return isMcpError(error) ? error.code : 'other';
  } finally {
    await manager.shutdown();
  }
}

export const tools = async (manager: McpServerManager) => (await manager.listTools()).map((t) => toAnthropicTool(t));

// McpClient.over a host's own channel, and connect to a remote entry (#25 item 13).
export function over(channel: Channel): Promise<McpClient> {
  return McpClient.over(channel, { name: 'own' });
}
export const remote = (): Promise<McpClient> => McpClient.connect({ type: 'http', url: 'http://127.0.0.1:9/mcp' });
export const quick: RequestOptions = { timeout: 1000 };
export const exited = (status: ExitStatus): string => String(status.exitCode ?? status.signal);
`,
  );
  const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await run(process.execPath, [tsc, '-p', project], { cwd: project, timeout: 80_000 }).catch((error: { stdout: string; code: number }) => error);
  expect(result.stdout).toBe('');
}, 90_000);

it('imports by name from the installed package, ESM only', async () => {
  const script = `import { McpServerManager, McpError } from 'lazy-mcp';
import * as adapters from 'lazy-mcp/adapters';
const manager = McpServerManager.fromConfig({ mcpServers: { a: { command: 'x', disabled: true } } });
console.log(JSON.stringify({ state: manager.status().a.state, error: typeof McpError, adapters: typeof adapters.toOpenAiResponsesTool }));
await manager.shutdown();`;
  writeFileSync(join(project, 'probe.mjs'), script);
  const { stdout } = await run(process.execPath, [join(project, 'probe.mjs')], { cwd: project, timeout: 30_000 });
  expect(JSON.parse(stdout)).toEqual({ state: 'disabled', error: 'function', adapters: 'function' });
}, 30_000);
