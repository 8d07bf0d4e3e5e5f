import { McpError } from '../../errors.js';
import type { JsonRpcMessage } from '../../transport/channel.js';
import type { SocketChannel } from './socket-channel.js';
import { fromWire, HELLO_ID } from './wire.js';

/**
 * The first exchange on a daemon connection: one request, one answer, before any MCP.
 * Rejects with the daemon's refusal (its own code), the connection's end, a time-out or
 * the caller's abort; on any failure the channel is closed.
 */
export function hello<T>(channel: SocketChannel, method: string, params: object, timeoutMs: number, server?: string, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const subscriptions: { dispose(): void }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => fail(new McpError('cancelled', `${server === undefined ? '' : `server ${JSON.stringify(server)}: `}attaching to the pool daemon was cancelled`, { server }));
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      for (const s of subscriptions) s.dispose();
    };
    const fail = (error: McpError) => {
      done();
      void channel.close();
      reject(error);
    };
    subscriptions.push(
      channel.onMessage((message) => {
        const m = message as unknown as { id?: unknown; result?: unknown; error?: { message?: unknown; data?: unknown } };
        if (m.id !== HELLO_ID) return fail(new McpError('protocol-error', `the pool daemon answered the attach with something else: ${JSON.stringify(message).slice(0, 200)}`, { server }));
        if (m.error) return fail(fromWire(m.error.data ?? { code: 'unavailable', message: m.error.message }, server));
        done();
        resolve(m.result as T);
      }),
      channel.onClose((reason) => fail(reason)),
    );
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => fail(new McpError('timeout', `${server === undefined ? '' : `server ${JSON.stringify(server)}: `}the pool daemon did not answer the attach within ${timeoutMs} ms`, { server })), timeoutMs);
    channel.send({ jsonrpc: '2.0', id: HELLO_ID, method, params } as JsonRpcMessage).catch((error: unknown) => fail(error instanceof McpError ? error : new McpError('unavailable', String(error), { server })));
  });
}
