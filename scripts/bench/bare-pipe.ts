import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import type { ServerSpec } from './setup.js';

interface Waiter {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/**
 * More than the bench ever has in flight. Waiters sit in an array by id, not in a Map:
 * a Map whose keys keep changing keeps every call alive through the scavenges once any
 * full GC has run (src/protocol/request-table.ts), which would make this pipe slower than
 * the least a client can do.
 */
const SLOTS = 4096;

/**
 * The physical limit: the least a client can do over the same pipe. Newline-delimited
 * JSON-RPC out, lines split and parsed in, answers matched to requests by id. No
 * validation, timeouts, cancellation or stderr handling; the handshake is done by hand.
 */
export class BarePipe {
  private readonly waiting: (Waiter | undefined)[] = new Array<Waiter | undefined>(SLOTS).fill(undefined);
  private readonly exited: Promise<void>;
  private chunks: Buffer[] = [];
  private nextId = 0;
  /** The last bytes of stderr, to explain an unexpected exit. */
  private stderrTail = '';

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    child.stderr.on('data', (chunk: Buffer) => (this.stderrTail = (this.stderrTail + chunk.toString()).slice(-2000)));
    child.once('exit', (code, signal) => {
      const error = new Error(`the server exited (${signal ?? `code ${code}`}) with requests pending; stderr: ${this.stderrTail}`);
      for (const waiter of this.waiting) waiter?.reject(error);
      this.waiting.fill(undefined);
    });
  }

  /** Spawns the server (resolves once the OS has started it); no handshake yet. */
  static spawn(server: ServerSpec): Promise<BarePipe> {
    const child = spawn(server.command, server.args, { env: server.env, stdio: ['pipe', 'pipe', 'pipe'] });
    return new Promise((resolve, reject) => {
      child.once('spawn', () => resolve(new BarePipe(child)));
      child.once('error', reject);
    });
  }

  /** Spawn, `initialize`, `notifications/initialized`. */
  static async connect(server: ServerSpec): Promise<BarePipe> {
    const pipe = await BarePipe.spawn(server);
    await pipe.initialize();
    return pipe;
  }

  get pid(): number {
    return this.child.pid!;
  }

  async initialize(): Promise<void> {
    await this.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bare-pipe', version: '0' } });
    this.notify('notifications/initialized');
  }

  request(method: string, params: unknown = {}): Promise<unknown> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.waiting[id % SLOTS] = { resolve, reject };
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method: string, params: unknown = {}): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
  }

  callTool(name: string, args: Record<string, unknown>): Promise<unknown> {
    return this.request('tools/call', { name, arguments: args });
  }

  /** Ends stdin and waits for the exit. */
  async close(): Promise<void> {
    this.child.stdin.end();
    await this.exited;
  }

  /** Kills the child outright and waits for the exit. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }

  private onData(chunk: Buffer): void {
    let start = 0;
    let newline = chunk.indexOf(10);
    while (newline !== -1) {
      const piece = chunk.subarray(start, newline);
      if (this.chunks.length === 0) this.onLine(piece);
      else {
        this.chunks.push(piece);
        this.onLine(Buffer.concat(this.chunks));
        this.chunks = [];
      }
      start = newline + 1;
      newline = chunk.indexOf(10, start);
    }
    if (start < chunk.length) this.chunks.push(start === 0 ? chunk : chunk.subarray(start));
  }

  private onLine(line: Buffer): void {
    if (line.length === 0) return;
    const message = JSON.parse(line.toString('utf8')) as { id?: number; result?: unknown; error?: { message: string } };
    const slot = message.id === undefined ? -1 : message.id % SLOTS;
    const waiter = this.waiting[slot];
    if (!waiter) return;
    this.waiting[slot] = undefined;
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  }
}
