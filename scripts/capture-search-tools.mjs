#!/usr/bin/env node
// Captures the reference servers' tools/list answers (server-everything, -filesystem,
// -memory: dev dependencies) as the fixtures the tool-search recall test ranks over, so the
// test needs no server and its numbers change only when the fixtures are captured again.
// Run after `npm run build`: `node scripts/capture-search-tools.mjs`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServerManager } from '../dist/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const reference = (pkg, ...args) => ({ command: process.execPath, args: [join(root, `node_modules/@modelcontextprotocol/server-${pkg}/dist/index.js`), ...args] });
const dir = mkdtempSync(join(tmpdir(), 'lazy-mcp-capture-'));
const manager = McpServerManager.fromConfig({
  mcpServers: {
    everything: reference('everything', 'stdio'),
    filesystem: reference('filesystem', dir),
    memory: { ...reference('memory'), env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } },
  },
});
try {
  for (const server of ['everything', 'filesystem', 'memory']) {
    const tools = (await manager.listTools({ servers: [server] })).map((t) => t.tool);
    writeFileSync(join(root, 'test/model/search-queries', `${server}.tools.json`), `${JSON.stringify(tools, null, 2)}\n`);
    process.stdout.write(`${server}: ${tools.length} tools\n`);
  }
} finally {
  await manager.shutdown();
  rmSync(dir, { recursive: true, force: true });
}
