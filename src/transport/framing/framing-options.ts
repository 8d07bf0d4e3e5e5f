import { McpError } from '../../errors.js';

export interface FramingOptions {
  /**
   * Largest accepted message, in bytes of UTF-8 (a line without its line break, or a
   * `Content-Length` body). A bigger one is a `protocol-error` and ends the reader.
   * Default: {@link DEFAULT_MAX_MESSAGE_BYTES} (64 MiB).
   */
  maxMessageBytes?: number;
}

/** 64 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export function resolveMaxMessageBytes(options: FramingOptions | undefined): number {
  const value = options?.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isSafeInteger(value) || value <= 0) throw invalidOption('maxMessageBytes', 'a positive integer', value);
  return value;
}

/** The `invalid-config` error for an option whose value is not `expected`. */
export function invalidOption(name: string, expected: string, value: unknown): McpError {
  return new McpError('invalid-config', `Expected the \`${name}\` option to be ${expected}, got \`${String(value)}\` (${typeof value})`, {
    phase: 'config',
  });
}
