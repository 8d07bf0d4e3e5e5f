import { createRequire } from 'node:module';
import type * as Disposables from 'vscode-jsonrpc/lib/common/disposable.js';
import type * as Events from 'vscode-jsonrpc/lib/common/events.js';
import type * as Readers from 'vscode-jsonrpc/lib/common/messageReader.js';
import type * as Writers from 'vscode-jsonrpc/lib/common/messageWriter.js';

// The parts of vscode-jsonrpc the framing builds on, from their own modules: the package's
// entry loads its whole connection layer (with net, crypto and child_process), about a
// third of a cold start here, for two abstract classes and an event emitter.

const require = createRequire(import.meta.url);
const { AbstractMessageReader } = require('vscode-jsonrpc/lib/common/messageReader.js') as typeof Readers;
const { AbstractMessageWriter } = require('vscode-jsonrpc/lib/common/messageWriter.js') as typeof Writers;
const { Emitter } = require('vscode-jsonrpc/lib/common/events.js') as typeof Events;
const { Disposable } = require('vscode-jsonrpc/lib/common/disposable.js') as typeof Disposables;
type Disposable = Disposables.Disposable;

export { AbstractMessageReader, AbstractMessageWriter, Disposable, Emitter };

/**
 * The classes above reach the runtime layer (RAL) only to log a listener's throw; the
 * entry installs Node's. When nothing has installed one yet, one is installed here whose
 * console and timers are Node's, and whose other parts (message buffers, the JSON codec)
 * install Node's own layer the first time anyone asks for them. An entry loaded
 * later installs its own over it, as it would anyway.
 */
interface Runtime {
  readonly console: Console;
  readonly timer: Record<'setTimeout' | 'setImmediate' | 'setInterval', (...args: never[]) => { dispose(): void }>;
  readonly applicationJson: unknown;
  readonly messageBuffer: unknown;
}
interface RuntimeLayer {
  (): Runtime;
  install(runtime: Runtime): void;
}

function ensureRuntime(): void {
  const ral = (require('vscode-jsonrpc/lib/common/ral.js') as { default: RuntimeLayer }).default;
  try {
    ral();
    return;
  } catch {
    // none installed yet
  }
  const node = (): Runtime => {
    (require('vscode-jsonrpc/lib/node/ril.js') as { default: { install(): void } }).default.install();
    return ral();
  };
  ral.install({
    console,
    timer: {
      setTimeout: (callback: (...args: unknown[]) => void, ms: number, ...args: unknown[]) => {
        const handle = setTimeout(callback, ms, ...args);
        return { dispose: () => clearTimeout(handle) };
      },
      setImmediate: (callback: (...args: unknown[]) => void, ...args: unknown[]) => {
        const handle = setImmediate(callback, ...args);
        return { dispose: () => clearImmediate(handle) };
      },
      setInterval: (callback: (...args: unknown[]) => void, ms: number, ...args: unknown[]) => {
        const handle = setInterval(callback, ms, ...args);
        return { dispose: () => clearInterval(handle) };
      },
    },
    get applicationJson() {
      return node().applicationJson;
    },
    get messageBuffer() {
      return node().messageBuffer;
    },
  });
}

ensureRuntime();
