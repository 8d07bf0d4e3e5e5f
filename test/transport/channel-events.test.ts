import { describe, expect, it } from '@jest/globals';
import { McpError } from '../../src/errors.js';
import type { JsonRpcMessage, MessageContext } from '../../src/transport/channel.js';
import { ChannelEvents } from '../../src/transport/channel-events.js';

/** The least a transport does with ChannelEvents: fire what arrives, close once. */
class Events extends ChannelEvents {
  readonly sent: JsonRpcMessage[] = [];
  refuse: McpError | undefined;
  override send(message: JsonRpcMessage): Promise<void> {
    if (this.refuse) return Promise.reject(this.refuse);
    this.sent.push(message);
    return Promise.resolve();
  }
  deliver(message: JsonRpcMessage, context: MessageContext = {}): void {
    this.messages.fire(message, context);
  }
  skip(text: string): void {
    this.noise.fire(text);
  }
  end(reason: McpError): boolean {
    return this.fireClose(reason);
  }
  get reason(): McpError | undefined {
    return this.closeReason;
  }
}

const ping = { jsonrpc: '2.0', method: 'ping', id: 1 } as JsonRpcMessage;

describe('ChannelEvents', () => {
  it('delivers to every listener in order, and a throwing one reaches neither the others nor the transport', () => {
    const events = new Events();
    const seen: string[] = [];
    events.onMessage(() => {
      seen.push('first');
      throw new Error('listener bug');
    });
    events.onMessage((message, context) => seen.push(`second ${(message as { method: string }).method} ${String(context.relatedTo)}`));
    events.onNoise(() => {
      throw new Error('noise listener bug');
    });
    events.onNoise((text) => seen.push(`noise ${text}`));
    expect(() => events.deliver(ping, { relatedTo: 7 })).not.toThrow();
    expect(() => events.skip('hello')).not.toThrow();
    expect(seen).toEqual(['first', 'second ping 7', 'noise hello']);
  });

  it('stops calling a disposed listener; disposing twice is harmless', () => {
    const events = new Events();
    const seen: JsonRpcMessage[] = [];
    const registration = events.onMessage((message) => seen.push(message));
    events.deliver(ping);
    registration.dispose();
    registration.dispose();
    events.deliver(ping);
    expect(seen).toHaveLength(1);
  });

  it('closes once: every close listener gets the first reason, even past a throwing one', () => {
    const events = new Events();
    const reasons: string[] = [];
    events.onClose(() => {
      throw new Error('close listener bug');
    });
    events.onClose((reason) => reasons.push(reason.code));
    const first = new McpError('peer-eof', 'the peer went away');
    expect(events.reason).toBeUndefined();
    expect(events.end(first)).toBe(true);
    expect(events.end(new McpError('closed', 'closed again'))).toBe(false);
    expect(reasons).toEqual(['peer-eof']);
    expect(events.reason).toBe(first);
  });

  it('delivers nothing after the close, to listeners added before or after it', () => {
    const events = new Events();
    const seen: string[] = [];
    events.onMessage(() => seen.push('early message'));
    events.onNoise(() => seen.push('early noise'));
    events.end(new McpError('closed', 'the connection was closed'));
    events.onMessage(() => seen.push('late message')).dispose();
    events.onMessage(() => seen.push('late message'));
    events.onNoise(() => seen.push('late noise'));
    events.onClose(() => seen.push('late close'));
    events.deliver(ping);
    events.skip('text');
    events.end(new McpError('closed', 'closed again'));
    expect(seen).toEqual([]);
  });

  describe('what a transport with nothing of its own does (the seam has no optional member)', () => {
    it('abandon sends notifications/cancelled naming the request and the reason; nothing once closed', async () => {
      const events = new Events();
      events.abandon(4, 'timed out');
      events.end(new McpError('closed', 'the connection was closed'));
      events.abandon(5, 'too late');
      await Promise.resolve();
      expect(events.sent).toEqual([{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 4, reason: 'timed out' } }]);
    });

    it('post is send with the failure reported once, with the message', async () => {
      const events = new Events();
      const failures: [string, JsonRpcMessage][] = [];
      events.post(ping, (error, message) => failures.push([(error as McpError).code, message]));
      events.refuse = new McpError('protocol-error', 'refused');
      events.post(ping, (error, message) => failures.push([(error as McpError).code, message]));
      await new Promise((resolve) => setImmediate(resolve));
      expect(events.sent).toEqual([ping]);
      expect(failures).toEqual([['protocol-error', ping]]);
    });

    it('the era and tool marks change nothing; stderr and exit never fire, and their registrations dispose', () => {
      const events = new Events();
      events.setProtocolVersion('2026-07-28');
      events.setToolHeaders(new Map());
      const seen: unknown[] = [];
      events.onStderr((line) => seen.push(line)).dispose();
      events.onExit((status) => seen.push(status)).dispose();
      events.end(new McpError('closed', 'the connection was closed'));
      expect(seen).toEqual([]);
      expect(events.sent).toEqual([]);
    });
  });
});
