import { AbstractMessageReader, type DataCallback, type Disposable, type Message, type MessageReader } from 'vscode-jsonrpc';

/** A decoded message that is not a request from the server. */
export type NonRequestMessage =
  | { kind: 'response'; id: unknown; result?: unknown; error?: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'invalid'; message: unknown };

/**
 * Hands the server's requests to vscode-jsonrpc's connection and everything else
 * (answers to our requests, notifications) straight to the client, synchronously and
 * in arrival order.
 *
 * Why: the connection processes one incoming message per event-loop turn
 * (`setImmediate` each), which caps throughput with many calls in flight, and it keeps
 * a cancelled request's promise until an answer comes that MCP says should not come.
 * Answers and notifications are the hot path and are ours to match; server requests
 * (ping, roots/list, anything unsupported → -32601) stay with the connection.
 */
export class MessageSplit extends AbstractMessageReader {
  private subscription: Disposable | undefined;

  constructor(
    private readonly inner: MessageReader,
    private readonly onOther: (message: NonRequestMessage) => void,
  ) {
    super();
    inner.onError((error) => this.fireError(error));
    inner.onClose(() => this.fireClose());
    inner.onPartialMessage((info) => this.firePartialMessage(info));
  }

  listen(callback: DataCallback): Disposable {
    this.subscription = this.inner.listen((message: Message) => {
      const m = message as unknown as Record<string, unknown>;
      if (typeof m.method === 'string') {
        if (m.id === undefined) this.onOther({ kind: 'notification', method: m.method, params: m.params });
        else callback(message);
      } else if (m.id !== undefined && ('result' in m || 'error' in m)) {
        this.onOther({ kind: 'response', id: m.id, result: m.result, error: m.error });
      } else {
        this.onOther({ kind: 'invalid', message });
      }
    });
    return this.subscription;
  }

  override dispose(): void {
    super.dispose();
    this.subscription?.dispose();
    this.inner.dispose();
  }
}
