import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { isAlive, repoRoot, waitFor } from './support/fixtures.js';
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

it('builds dist/ on a git install and before packing (prepare)', () => {
  const { scripts } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  // npm runs `prepare` after a git dependency's install (with its devDependencies) and before `npm pack`.
  expect(scripts.prepare).toBe('npm run build');
  // dist/ from scratch: the types and per-module output from tsc, then the bundles over the entries.
  expect(scripts.build).toBe('node scripts/build.mjs');
});

it('holds the built JS and types, the adapters entry, the CLI, the example config and the LICENSE, and no sources', () => {
  for (const file of ['dist/index.js', 'dist/index.d.ts', 'dist/adapters.js', 'dist/adapters.d.ts', 'dist/cli/main.js', 'examples/mcp.json', 'LICENSE', 'package.json']) {
    expect([file, existsSync(join(unpacked, file))]).toEqual([file, true]);
  }
  const top = readdirSync(unpacked).sort();
  expect(top).not.toContain('src');
  expect(top).not.toContain('test');
  // The bundles' source maps only, each carrying its sources: debuggable without src/.
  const maps = readdirSync(join(unpacked, 'dist'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.map'));
  expect(maps.filter((f) => !existsSync(join(unpacked, 'dist', f.replace(/\.map$/, ''))))).toEqual([]);
  expect(maps.filter((f) => !/^(index|adapters|cli\/main|cli\/demo|share\/daemon\/main)\.js\.map$|^chunks\//.test(f))).toEqual([]);
  // The library's code sits in a chunk that dist/index.js re-exports: some map carries the manager's source.
  const sourceMaps = maps.map((f) => JSON.parse(readFileSync(join(unpacked, 'dist', f), 'utf8')) as { sources: string[]; sourcesContent: string[] });
  const managerMap = sourceMaps.find((map) => map.sources.some((source) => source.endsWith('src/manager/manager.ts')));
  expect(managerMap).toBeDefined();
  for (const map of sourceMaps) expect(map.sourcesContent.filter((content) => typeof content === 'string').length).toBe(map.sources.length);
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

/** The fenced block of `lang` that follows `heading` in the README. */
function readmeBlock(heading: string, lang: string): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const from = readme.indexOf(`\n${heading}\n`);
  expect(from).toBeGreaterThan(-1);
  const match = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(readme.slice(from));
  return match![1];
}

describe("the README's code, run against the packed package", () => {
  it('the quick start runs as written: search with warm-up, the OpenAI adapter, a call, the tool message, shutdown', async () => {
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    writeFileSync(join(project, 'quick-start.mjs'), readmeBlock('## Quick start', 'js'));
    const { stdout } = await run(process.execPath, [join(project, 'quick-start.mjs')], { cwd: project, timeout: 30_000 });
    expect(stdout).toContain("'mcp__dice__roll'");
    expect(stdout).toMatch(/role: 'tool',\s+tool_call_id: 'call_1',\s+content: '/);
    expect(stdout).toMatch(/total/);
  }, 40_000);

  it('the Manager API block is valid TypeScript, and the package types hold under exactOptionalPropertyTypes', async () => {
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    writeFileSync(join(project, 'manager-api.ts'), readmeBlock('### Manager API', 'ts'));
    writeFileSync(
      join(project, 'tsconfig.exact.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, exactOptionalPropertyTypes: true, noEmit: true, types: ['node'] },
        files: ['manager-api.ts', 'node_modules/lazy-mcp/dist/index.d.ts', 'node_modules/lazy-mcp/dist/adapters.d.ts'],
      }),
    );
    const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', join(project, 'tsconfig.exact.json')], { cwd: project, timeout: 170_000 }).catch((error: { stdout: string }) => error);
    expect(result.stdout).toBe('');
  }, 180_000);

  it('the SIGTERM line lets the host exit, and no server outlives it', async () => {
    const line = readFileSync(join(repoRoot, 'README.md'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith("process.once('SIGTERM'"));
    expect(line).toBeDefined();
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    writeFileSync(
      join(project, 'host.mjs'),
      `import { McpServerManager } from 'lazy-mcp';
const manager = McpServerManager.fromConfig({ mcpServers: { dice: { command: process.execPath, args: ['node_modules/lazy-mcp/examples/servers/dice-server.mjs'] } } });
await manager.callTool('mcp__dice__roll', { dice: 'd6' });
setInterval(() => undefined, 1000); // a host with work of its own keeps its event loop busy
${line}
console.log(manager.status().dice.pid);
`,
    );
    const child = spawn(process.execPath, [join(project, 'host.mjs')], { cwd: project, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    try {
      expect(await waitFor(() => /\d+\n/.test(out), 15_000)).toBe(true);
      const serverPid = Number(out.trim());
      child.kill('SIGTERM');
      expect(await exited).toBe('SIGTERM');
      expect(await waitFor(() => !isAlive(serverPid), 5000)).toBe(true);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 30_000);
});
