import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import type { Channel } from '../../src/transport/channel.js';

/** The official SDK's `Transport` over one of our channels, so an SDK client can talk to the gateway in memory. */
export class ChannelTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  constructor(private readonly channel: Channel) {}

  async start(): Promise<void> {
    this.channel.onMessage((message) => this.onmessage?.(message as unknown as JSONRPCMessage));
    this.channel.onClose(() => this.onclose?.());
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.channel.send(message as never);
  }

  close(): Promise<void> {
    return this.channel.close();
  }
}
