import { McpClient } from '../../src/protocol/client.js';

const clients: McpClient[] = [];

/** `McpClient.connect`, with the client closed after each test of the file that imports this. */
export async function connect(...args: Parameters<typeof McpClient.connect>): Promise<McpClient> {
  const client = await McpClient.connect(...args);
  clients.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
