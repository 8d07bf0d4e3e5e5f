import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import { fixture, textOf, waitFor } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';

const managers: McpServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
});
function manage(config: object, options: ConstructorParameters<typeof McpServerManager>[1] = {}) {
  const manager = McpServerManager.fromConfig(config, options);
  managers.push(manager);
  const starts: string[] = [];
  manager.on('stateChange', ({ server, to }) => to === 'starting' && starts.push(server));
  return { manager, starts };
}
const features = (env?: Record<string, string>) => ({ ...fixture('host-features.mjs'), ...(env ? { env } : {}) });

describe('prompts', () => {
  it('are listed under public names in their own namespace and fetched by them', async () => {
    const { manager } = manage({ mcpServers: { 'my server': features(), echo: fixture('echo-server.mjs') } });
    const prompts = await manager.listPrompts();
    expect(prompts.map((p) => [p.name, p.server, p.prompt.name])).toEqual([['mcp__my_server__greet', 'my server', 'greet']]);
    expect(prompts[0].prompt.arguments).toEqual([{ name: 'who', required: true }]);
    const result = await manager.getPrompt('mcp__my_server__greet', { who: 'Ada' });
    expect(result.messages[0].content).toEqual({ type: 'text', text: 'Say hello to Ada' });
    expect(manager.status()['my server'].prompts).toBe(1);
    expect(manager.status().echo.prompts).toBe(0);
  });

  it('an unknown prompt names close matches and starts at most its own server', async () => {
    const { manager, starts } = manage({ mcpServers: { f: features(), g: features() } });
    const error = await manager.getPrompt('mcp__f__gret').catch((e) => e);
    expect(error).toMatchObject({ code: 'unknown-prompt', server: 'f', phase: 'prompts/get' });
    expect(error.message).toBe('server "f": no prompt named "mcp__f__gret"; did you mean mcp__f__greet?');
    expect(starts).toEqual(['f']);
    await expect(manager.getPrompt('nothing-like-it')).rejects.toMatchObject({ code: 'unknown-prompt' });
    const missing = await manager.getPrompt('mcp__f__greet').catch((e) => e);
    expect(missing).toMatchObject({ code: 'invalid-arguments', message: 'server "f": invalid arguments for prompt "mcp__f__greet": `who` is required' });
    await expect(manager.getPrompt('mcp__f__greet', { who: 3 as never })).rejects.toMatchObject({
      code: 'invalid-arguments',
      message: expect.stringContaining('`who` must be a string, got 3 (number)'),
    });
    // A tool's name is not a prompt's.
    await expect(manager.getPrompt('mcp__f__ask')).rejects.toMatchObject({ code: 'unknown-prompt' });
  });

  it('a public name whose server part names no configured server is unknown-server, and starts nothing', async () => {
    const { manager, starts } = manage({ mcpServers: { files: features(), other: features() } });
    const error = await manager.getPrompt('mcp__nosuchserver__x').catch((e) => e);
    expect(error).toMatchObject({ code: 'unknown-server', phase: 'prompts/get' });
    expect(error.message).toBe('no server named "nosuchserver" for prompt "mcp__nosuchserver__x" (configured: files, other)');
    const typo = await manager.getPrompt('mcp__file__greet').catch((e) => e);
    expect(typo).toMatchObject({ code: 'unknown-server' });
    expect(typo.message).toContain('did you mean files?');
    expect(starts).toEqual([]);
  });

  it('sessions list and get only their own servers\' prompts', async () => {
    const { manager } = manage({ mcpServers: { f: features(), g: features() } });
    const session = manager.session({ servers: ['g'] });
    expect((await session.listPrompts()).map((p) => p.name)).toEqual(['mcp__g__greet']);
    await expect(session.getPrompt('mcp__f__greet', { who: 'x' })).rejects.toMatchObject({ code: 'unknown-prompt' });
    expect((await session.getPrompt('mcp__g__greet', { who: 'x' })).messages).toHaveLength(1);
  });

  it('are kept in the manifest cache: a second manager lists them with zero spawns', async () => {
    const dir = tempDir();
    const config = { mcpServers: { f: features() } };
    const first = manage(config, { cacheDir: dir });
    const listed = await first.manager.listPrompts();
    const second = manage(config, { cacheDir: dir });
    expect(await second.manager.listPrompts()).toEqual(listed);
    expect(second.starts).toEqual([]);
    const info = await second.manager.serverInfo('f');
    expect(info).toEqual({
      serverInfo: { name: 'host-features', version: '2.0.0', title: 'Host features' },
      protocolVersion: '2025-11-25',
      era: 'legacy',
      capabilities: expect.objectContaining({ prompts: { listChanged: true } }),
      instructions: 'Use greet to say hello.',
    });
    expect(second.starts).toEqual([]);
  });

  it('list_changed emits promptsChanged and the prompts are listed again', async () => {
    const { manager } = manage({ mcpServers: { f: features() } });
    await manager.listPrompts();
    const changed: string[] = [];
    manager.on('promptsChanged', ({ server }) => changed.push(server));
    await manager.callTool('mcp__f__notify', { kind: 'prompts' });
    expect(await waitFor(() => changed.length === 1, 5000)).toBe(true);
    expect((await manager.listPrompts()).map((p) => p.name)).toEqual(['mcp__f__greet']);
    expect(manager.status().f.restarts).toBe(0);
  });

  it('the first start of a second manager revalidates cached prompts and emits promptsChanged when they differ', async () => {
    const dir = tempDir();
    const setFile = join(tempDir(), 'prompt-set');
    writeFileSync(setFile, 'one');
    const config = { mcpServers: { f: features({ PROMPT_SET_FILE: setFile }) } };
    await manage(config, { cacheDir: dir }).manager.listPrompts();
    writeFileSync(setFile, 'two');
    const second = manage(config, { cacheDir: dir });
    expect((await second.manager.listPrompts()).map((p) => p.name)).toEqual(['mcp__f__greet']);
    expect(second.starts).toEqual([]);
    const events: string[] = [];
    second.manager.on('promptsChanged', ({ server }) => events.push(server));
    await second.manager.callTool('mcp__f__record');
    // The start was ready on the cached lists; the live ones follow the call, and a listing waits for them.
    expect((await second.manager.listPrompts()).map((p) => p.name)).toEqual(['mcp__f__greet', 'mcp__f__part']);
    expect(events).toEqual(['f']);
    // The cache holds the new list for the next manager.
    const third = manage(config, { cacheDir: dir });
    expect((await third.manager.listPrompts()).map((p) => p.name)).toEqual(['mcp__f__greet', 'mcp__f__part']);
    expect(third.starts).toEqual([]);
  });
});

describe('completion, subscriptions, server info, log level', () => {
  it('complete() sends the ref with the server\'s own prompt name and the context', async () => {
    const { manager } = manage({ mcpServers: { f: features() } });
    await manager.listPrompts();
    const completion = await manager.complete('f', { type: 'ref/prompt', name: 'mcp__f__greet' }, { name: 'who', value: 'al' }, { context: { arguments: { x: '1' } } });
    expect(completion).toMatchObject({ values: ['alice', 'albert'], total: 2, ref: { type: 'ref/prompt', name: 'greet' }, context: { arguments: { x: '1' } } });
    const session = manager.session({ servers: ['f'] });
    expect((await session.complete('f', { type: 'ref/resource', uri: 'mem://{x}' }, { name: 'x', value: 'b' })).values).toEqual(['bob']);
    await expect(manager.session({ servers: [] }).complete('f', { type: 'ref/prompt', name: 'greet' }, { name: 'who', value: '' })).rejects.toMatchObject({
      code: 'unknown-server',
    });
  });

  it('subscribeResource is counted per uri across sessions and unsubscribes when the last one leaves', async () => {
    const { manager } = manage({ mcpServers: { f: features() } });
    const one = manager.session();
    const two = manager.session();
    const seen: string[] = [];
    const stopOne = await one.subscribeResource('f', 'mem://a', (uri) => seen.push(`one ${uri}`));
    const stopTwo = await two.subscribeResource('f', 'mem://a', (uri) => seen.push(`two ${uri}`));
    await manager.callTool('mcp__f__touch', { uri: 'mem://a' });
    await manager.callTool('mcp__f__touch', { uri: 'mem://other' });
    expect(await waitFor(() => seen.length === 2, 5000)).toBe(true);
    expect(seen.sort()).toEqual(['one mem://a', 'two mem://a']);
    await stopOne();
    await stopOne();
    let record = JSON.parse(textOf(await manager.callTool('mcp__f__record')));
    expect(record).toMatchObject({ subscribed: ['mem://a'], unsubscribed: [] });
    two.close(); // a closing session ends its subscriptions
    await stopTwo();
    record = JSON.parse(textOf(await manager.callTool('mcp__f__record')));
    expect(record).toMatchObject({ subscribed: ['mem://a'], unsubscribed: ['mem://a'] });
    seen.length = 0;
    await manager.callTool('mcp__f__touch', { uri: 'mem://a' });
    await manager.callTool('mcp__f__record');
    expect(seen).toEqual([]);
  });

  it('a restarted server is subscribed again', async () => {
    const { manager } = manage({ mcpServers: { f: features() } });
    const seen: string[] = [];
    const stop = await manager.subscribeResource('f', 'mem://a', (uri) => seen.push(uri));
    await manager.restart('f');
    const record = JSON.parse(textOf(await manager.callTool('mcp__f__record')));
    expect(record.subscribed).toEqual(['mem://a']);
    await manager.callTool('mcp__f__touch', { uri: 'mem://a' });
    expect(await waitFor(() => seen.length === 1, 5000)).toBe(true);
    await stop();
  });

  it('resourcesChanged, serverInfo from the running server and setLogLevel', async () => {
    const { manager, starts } = manage({ mcpServers: { f: features(), e: fixture('echo-server.mjs') } });
    const changed: string[] = [];
    manager.on('resourcesChanged', ({ server }) => changed.push(server));
    const info = await manager.serverInfo('e');
    expect(info).toMatchObject({ serverInfo: { name: 'echo-server' }, era: 'legacy', instructions: 'Echoes things back.' });
    expect(starts).toEqual(['e']);
    await manager.callTool('mcp__f__notify', { kind: 'resources' });
    expect(await waitFor(() => changed.length === 1, 5000)).toBe(true);
    await manager.setLogLevel('f', 'warning');
    await manager.session().setLogLevel('f', 'debug');
    await expect(manager.setLogLevel('f', 'loud' as never)).rejects.toMatchObject({ code: 'invalid-arguments' });
    expect(JSON.parse(textOf(await manager.callTool('mcp__f__record'))).levels).toEqual(['warning', 'debug']);
    await expect(manager.serverInfo('nope')).rejects.toMatchObject({ code: 'unknown-server' });
  });
});
