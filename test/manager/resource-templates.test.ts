import { McpServerManager } from '../../src/manager/manager.js';
import { fixture } from '../support/fixtures.js';

describe('resource templates', () => {
  let manager: McpServerManager;
  beforeEach(() => {
    manager = McpServerManager.fromConfig({ mcpServers: { db: fixture('resources-without-templates.mjs'), echo: fixture('echo-server.mjs') } });
  });
  afterEach(() => manager.shutdown());

  it('are none, not a failure, for a server that answers -32601', async () => {
    expect(await manager.listResourceTemplates('db')).toEqual([]);
    expect((await manager.listResources('db')).map((r) => r.resource.uri)).toEqual(['db://table/users']);
  });

  it('are listed on sessions too, within their view', async () => {
    const session = manager.session({ servers: ['echo', 'db'] });
    const all = await session.listResourceTemplates();
    expect(all.map((t) => t.server)).toEqual(['echo']);
    const onlyDb = manager.session({ servers: ['db'] });
    await expect(onlyDb.listResourceTemplates('echo')).rejects.toMatchObject({ code: 'unknown-server' });
    session.close();
    onlyDb.close();
  });
});
