import { createRequire } from 'node:module';

// Two of Node's own modules cost more to load than this whole package: node:crypto (~13 ms:
// it pulls in streams and WebCrypto) and node:child_process (~11 ms: net, dgram, streams).
// The modules that load when the package is imported reach them through here, on first use,
// so that an import or a listing from the cache does not pay for them (issue 34). Modules
// loaded only with their feature (the daemon, the cluster, the gateway) import them directly.
const require = createRequire(import.meta.url);

/**
 * node:fs, taken through `require`. It is loaded with Node itself, but an ESM import of a
 * builtin reads every one of its exports, and fs's getters (`promises`, `ReadStream`) load
 * the whole stream stack: thirty modules at import, for a package that reads a few files.
 */
export const fs = require('node:fs') as typeof import('node:fs');

let crypto: typeof import('node:crypto') | undefined;
let childProcess: typeof import('node:child_process') | undefined;
let os: typeof import('node:os') | undefined;

export const nodeCrypto = (): typeof import('node:crypto') => (crypto ??= require('node:crypto') as typeof import('node:crypto'));
export const nodeChildProcess = (): typeof import('node:child_process') => (childProcess ??= require('node:child_process') as typeof import('node:child_process'));

/** The user's home folder (node:os is not loaded with Node: it waits for the first question). */
export const homedir = (): string => (os ??= require('node:os') as typeof import('node:os')).homedir();

/** The SHA-256 digest of `data`. */
export const sha256 = (data: string | Uint8Array, encoding: 'hex' | 'base64url'): string => nodeCrypto().createHash('sha256').update(data).digest(encoding);

/** `bytes` random bytes in hex: a unique suffix for a temporary file. */
export const randomHex = (bytes: number): string => nodeCrypto().randomBytes(bytes).toString('hex');
