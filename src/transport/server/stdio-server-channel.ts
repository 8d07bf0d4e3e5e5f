import type { Readable, Writable } from 'node:stream';
import type { Message, MessageWriter } from 'vscode-jsonrpc';
import { McpError } from '../../errors.js';
import type { Channel, ChannelInfo, Disposable, JsonRpcMessage, MessageContext } from '../channel.js';
import { createMessageIO, type FramingOptions } from '../framing/framing.js';
import { ChannelEvents } from '../channel-events.js';

/**
 * The server end of MCP stdio: messages from a client on `input` (our stdin), answers on
 * `output` (our stdout), one JSON object per line. The client closing our stdin (EOF) ends
 * the channel with `peer-eof`; `close()` stops reading and leaves the streams to their owner.
 */
export class StdioServerChannel extends ChannelEvents implements Channel {
  readonly info: ChannelInfo = { transport: 'stdio', stderrTail: () => [] };
  private readonly writer: MessageWriter;
  private readonly reading: Disposable;

  constructor(input: Readable, output: Writable, options?: FramingOptions) {
    super();
    const { reader, writer } = createMessageIO('newline', input, output, options);
    this.writer = writer;
    reader.onNoise((text) => this.noise.fire(text));
    reader.onError((error) => {
      if (error instanceof McpError) this.end(error);
    });
    reader.onClose(() => this.end(new McpError('peer-eof', 'the client closed the gateway\'s stdin')));
    // A client that stops reading our stdout (it exited) is the end of the conversation too.
    writer.onError(() => this.end(new McpError('peer-eof', 'the client stopped reading the gateway\'s stdout')));
    const context: MessageContext = {};
    // After the close there is no listener left to call (ChannelEvents drops them).
    this.reading = reader.listen((message) => this.messages.fire(message as JsonRpcMessage, context));
  }

  get isOpen(): boolean {
    return this.closeReason === undefined;
  }

  send(message: JsonRpcMessage): Promise<void> {
    if (this.closeReason) return Promise.reject(this.closeReason);
    return this.writer.write(message as Message).catch((error: unknown) => {
      throw this.closeReason ?? new McpError('peer-eof', `cannot write to the client: ${(error as Error).message}`, { cause: error });
    });
  }

  close(): Promise<void> {
    this.end(new McpError('closed', 'the gateway closed the connection'));
    return Promise.resolve();
  }

  private end(reason: McpError): void {
    if (this.fireClose(reason)) this.reading.dispose();
  }
}
