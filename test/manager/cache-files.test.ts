import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import { MAX_CACHE_FILE_BYTES } from '../../src/manager/catalog/manifest-cache.js';
import { textOf, waitFor } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';
import { config, jsonFiles, manage, primed, track } from './cache-support.js';

/** Settles with the value, or with 'still waiting' after `ms`: a hang shows as a failed expectation, not a stuck test. */
const within = <T>(ms: number, work: Promise<T>) =>
  Promise.race([work, new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), ms).unref())]);

describe('hostile cache files', () => {
  const SECRET = 'top-secret-token-1234';

  it('does not read a file over the cap, and does not quote it', async () => {
    const { dir, file } = await primed();
    writeFileSync(file, `${SECRET} `);
    truncateSync(file, MAX_CACHE_FILE_BYTES + 1); // sparse: large on paper, cheap on disk
    const next = manage(dir);
    expect((await next.manager.listTools()).map((t) => t.tool.name)).toEqual(['a']);
    expect(next.starts).toEqual(['s']);
    const said = next.logs.map((l) => String(l.data));
    expect(said).toEqual([expect.stringMatching(/server "s".*more than the 8388608 a cache file may have/)]);
    expect(said.join('\n')).not.toContain(SECRET);
  });

  it('refuses a symlink planted as the cache file without quoting what it points to', async () => {
    const { dir, file } = await primed();
    const target = join(tempDir(), 'secret.txt');
    writeFileSync(target, `${SECRET}\n`);
    unlinkSync(file);
    symlinkSync(target, file);
    const next = manage(dir);
    expect((await next.manager.listTools()).map((t) => t.tool.name)).toEqual(['a']);
    const said = next.logs.map((l) => String(l.data));
    expect(said).toEqual([expect.stringMatching(/server "s".*not a regular file/)]);
    expect(said.join('\n')).not.toContain(SECRET);
  });

  it('never quotes a corrupt file (the JSON parser would)', async () => {
    const { dir, file } = await primed();
    writeFileSync(file, 'hunter2!'); // V8 quotes the first ten characters of what it cannot parse
    const next = manage(dir);
    expect((await next.manager.listTools()).map((t) => t.tool.name)).toEqual(['a']);
    const said = next.logs.map((l) => String(l.data));
    expect(said).toEqual([expect.stringMatching(/server "s".*not valid JSON/)]);
    expect(said.join('\n')).not.toContain('hunter2');
  });

  it('does not wait on a FIFO planted as the cache file', async () => {
    const { dir, file } = await primed();
    unlinkSync(file);
    execFileSync('mkfifo', [file]);
    const next = manage(dir);
    const listed = await within(5000, next.manager.listTools());
    expect(listed === 'still waiting' ? listed : listed.map((t) => t.tool.name)).toEqual(['a']);
    expect(next.logs.map((l) => String(l.data))).toEqual([expect.stringMatching(/not a regular file/)]);
  });
});

describe('cache writes', () => {
  it('never delay a start or a call, even where mkdir({ recursive: true }) spins forever', async () => {
    const manager = track(McpServerManager.fromConfig(config, { cacheDir: '/proc/self/root/proc/lazy-mcp-test/cache' }));
    const logs: string[] = [];
    manager.on('log', ({ data }) => logs.push(String(data)));
    const listed = await within(5000, manager.listTools());
    expect(listed === 'still waiting' ? listed : listed.map((t) => t.tool.name)).toEqual(['a']);
    expect(textOf(await manager.callTool('mcp__s__a'))).toBe('called a');
    expect(await waitFor(() => logs.some((l) => l.includes('cannot write the tool cache of server "s"')), 5000)).toBe(true);
  });

  it('go on after a failed write, with no unhandled rejection', async () => {
    const root = tempDir();
    const dir = join(root, 'cache');
    writeFileSync(dir, 'a file where the folder should be');
    const { manager, logs } = manage(dir);
    await manager.listTools();
    expect(await waitFor(() => logs.some((l) => String(l.data).includes('cannot write the tool cache')), 5000)).toBe(true);

    rmSync(dir);
    mkdirSync(dir);
    await manager.restart('s'); // a fresh listing: a fresh write
    expect(await waitFor(() => jsonFiles(dir).length === 1, 5000)).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('are on disk once shutdown() resolves', async () => {
    const dir = tempDir();
    const { manager } = manage(dir);
    await manager.listTools();
    await manager.shutdown();
    expect(jsonFiles(dir)).toHaveLength(1);
  });
});
