import { McpServerManager, type ManagerOptions } from '../../src/manager/manager.js';

/**
 * A `manage(servers, options)` for a test file: each manager it makes is shut down after
 * its test, so no server outlives the test that started it.
 */
export function managersShutAfterEach(): (servers: Record<string, object>, options?: ManagerOptions) => McpServerManager {
  const managers: McpServerManager[] = [];
  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.shutdown()));
  });
  return (servers, options = {}) => {
    const manager = McpServerManager.fromConfig({ mcpServers: servers }, options);
    managers.push(manager);
    return manager;
  };
}
