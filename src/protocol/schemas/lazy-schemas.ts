import type * as Schemas from './schemas.js';

// zod (behind the result schemas) is the second largest module a client needs, and only
// once it talks to a server: loaded with the first connection, never by an import of the
// package, a gateway answering from its cache, or a CLI command that spawns nothing.
let loaded: typeof Schemas | undefined;
let loading: Promise<typeof Schemas> | undefined;

/** Loads the result schemas; a connection awaits this before it reads its first answer. */
export function loadSchemas(): Promise<typeof Schemas> {
  return (loading ??= import('./schemas.js').then((module) => (loaded = module)));
}

/** The result schemas, once {@link loadSchemas} has resolved (every connection awaits it first). */
export function resultSchemas(): typeof Schemas {
  if (loaded === undefined) throw new Error('result schemas used before loadSchemas() resolved');
  return loaded;
}
