import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/fixtures.js';
import { runCli, scratchDir } from './run-cli.js';

// Where the CLI finds its config, end to end as a child process. HOME (and XDG_CONFIG_HOME)
// point into the scratch folder so the user's own application configs are never read.
let scratch: ReturnType<typeof scratchDir>;
let home: string;
let homeEnv: Record<string, string>;
beforeAll(() => {
  scratch = scratchDir();
  home = join(scratch.path, 'home');
  mkdirSync(home);
  homeEnv = { HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
});
afterAll(() => scratch.remove());

const echoServer = join(repoRoot, 'test/fixtures/echo-server.mjs');
const echoEntry = (extra = {}) => ({ command: process.execPath, args: [echoServer], ...extra });

function write(path: string, text: string): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

it('says in one line where it looked when there is no config, exit 2', async () => {
  const empty = join(scratch.path, 'empty');
  mkdirSync(empty);
  const run = await runCli(['tools'], { cwd: empty, env: homeEnv });
  expect(run).toMatchObject({ code: 2, stdout: '' });
  expect(run.stderr).toBe(
    `lazy-mcp: no config found; looked at $LAZY_MCP_CONFIG (not set); .mcp.json, .vscode/mcp.json, .cursor/mcp.json in ${empty} and every folder above it; give --config FILE, set LAZY_MCP_CONFIG, or read an app's with --from claude-desktop|claude-code|cursor|vscode\n`,
  );
});

it('finds a parent folder\'s .vscode/mcp.json (JSONC, ${workspaceFolder} = the folder holding .vscode)', async () => {
  const project = join(scratch.path, 'project');
  // The server is reached only through ${workspaceFolder}, so the call proves its value.
  write(join(project, 'tools', 'echo.mjs'), `import ${JSON.stringify(echoServer)};\n`);
  write(
    join(project, '.vscode', 'mcp.json'),
    `{
  // VS Code's own format
  "servers": {
    "echo": { "type": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": ["\${workspaceFolder}/tools/echo.mjs"], },
    "secret": { "command": "x", "env": { "KEY": "\${input:key}" } },
  },
  "inputs": [{ "type": "promptString", "id": "key", "description": "API key" }],
}`,
  );
  const below = join(project, 'src', 'deep');
  mkdirSync(below, { recursive: true });
  const [call, status] = await Promise.all([
    runCli(['call', 'mcp__echo__echo', '{"text":"from the workspace"}', '--verbose'], { cwd: below, env: homeEnv }),
    runCli(['status', '--json'], { cwd: below, env: homeEnv }),
  ]);
  expect(call).toMatchObject({ code: 0, stdout: 'from the workspace\n' });
  expect(call.stderr).toContain(`lazy-mcp: using config ${join(project, '.vscode', 'mcp.json')} (found from ${below})\n`);
  const secret = JSON.parse(status.stdout).secret;
  expect(secret).toMatchObject({ state: 'invalid', lastError: { code: 'invalid-config' } });
  expect(secret.lastError.message).toMatch(/^server "secret": config field "env\.KEY" asks VS Code to prompt for input "key" \("API key"\)/);
});

it('reads the file named by LAZY_MCP_CONFIG, and reports a syntax error with its line and column, exit 2', async () => {
  const folder = join(scratch.path, 'env-named');
  write(join(folder, 'good.json'), JSON.stringify({ mcpServers: { echo: echoEntry() } }));
  write(join(folder, 'bad.json'), '{\n  "mcpServers": {\n    "echo": { "command": "x" }\n    "b": {}\n  }\n}\n');
  const [good, bad] = await Promise.all([
    runCli(['call', 'mcp__echo__echo', '{"text":"named"}'], { cwd: folder, env: { ...homeEnv, LAZY_MCP_CONFIG: 'good.json' } }),
    runCli(['tools'], { cwd: folder, env: { ...homeEnv, LAZY_MCP_CONFIG: 'bad.json' } }),
  ]);
  expect(good).toMatchObject({ code: 0, stdout: 'named\n' });
  expect(bad).toMatchObject({ code: 2, stdout: '', stderr: `lazy-mcp: ${join(folder, 'bad.json')}: config is not valid JSON: comma expected at line 4, column 5\n` });
});

it('reads an application\'s config with --from, and says where it looked when it has none', async () => {
  write(join(home, '.claude.json'), JSON.stringify({ mcpServers: { echo: echoEntry() }, projects: {} }));
  const [claude, cursor, wrong] = await Promise.all([
    runCli(['call', 'mcp__echo__echo', '{"text":"from claude code"}', '--from', 'claude-code'], { cwd: scratch.path, env: homeEnv }),
    runCli(['tools', '--from', 'cursor'], { cwd: scratch.path, env: homeEnv }),
    runCli(['tools', '--from', 'claude'], { cwd: scratch.path, env: homeEnv }),
  ]);
  expect(claude).toMatchObject({ code: 0, stdout: 'from claude code\n' });
  expect(cursor).toMatchObject({ code: 2, stderr: `lazy-mcp: no config found; looked at ${join(home, '.cursor', 'mcp.json')}\n` });
  expect(wrong).toMatchObject({ code: 2 });
  expect(wrong.stderr).toMatch(/^lazy-mcp: --from must be one of claude-desktop, claude-code, cursor, vscode, got "claude"/);
});
