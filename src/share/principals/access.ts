import { McpError } from '../../errors.js';
import type { ToolSession } from '../../manager/scope/session.js';
import type { ToolPredicate } from '../../manager/catalog/tool-filter.js';
import type { Identity } from './jwt-front.js';
import { type BucketSpec, type LimitStore, MemoryLimitStore } from './limit-store.js';
import { checkPolicies, type Policy, policyFilter } from './policies.js';

/** Rate limits of a gateway's callers, as token buckets. */
export interface Limits {
  /** Each principal's tool calls, all tools together. */
  principal?: BucketSpec;
  /** Each principal's calls of any one tool. */
  tool?: BucketSpec;
}

/** What a verified caller may use: `policies` over public tool names and rate `limits`. */
export interface AccessOptions {
  policies?: Policy[];
  limits?: Limits;
  /** Where the buckets live. Default: this process's memory. */
  store?: LimitStore;
  /** The clock the buckets read, in ms. Default `Date.now`. */
  now?: () => number;
}

/** The gateway's access control: each verified caller's session, filtered by policy and limited in rate. */
export class AccessControl {
  private readonly store: LimitStore;
  private readonly now: () => number;

  constructor(private readonly options: AccessOptions) {
    this.store = options.store ?? new MemoryLimitStore();
    this.now = options.now ?? Date.now;
  }

  /** `session` as the caller of `identity` may use it. */
  guard(session: ToolSession, identity: Identity): ToolSession {
    const filter = policyFilter(this.options.policies ?? [], identity);
    const limited = this.options.limits?.principal !== undefined || this.options.limits?.tool !== undefined;
    if (!filter && !limited) return session;
    const check = (name: string): Promise<void> | void => {
      if (filter && !filter(name)) {
        throw new McpError('unknown-tool', `tool ${JSON.stringify(name)} is not available to principal ${JSON.stringify(identity.principal.id)} (the gateway's policies leave it out)`, {
          phase: 'tools/call',
        });
      }
      if (limited) return this.take(identity.principal.id, name);
    };
    return new Proxy(session, {
      get(target, key) {
        const value = Reflect.get(target, key, target) as unknown;
        switch (key) {
          case 'listTools':
            return async () => filtered(await target.listTools(), filter);
          case 'searchTools':
            return async (...args: Parameters<ToolSession['searchTools']>) => {
              const found = await target.searchTools(...args);
              if (!filter) return found;
              const kept = found.filter((t) => filter(t.name));
              return Object.defineProperties(kept, { nothingIndexed: { value: found.nothingIndexed }, unindexed: { value: found.unindexed } });
            };
          case 'callTool':
            return async (...args: Parameters<ToolSession['callTool']>) => {
              await check(args[0]);
              return target.callTool(...args);
            };
          case 'callServerTool':
            // The gateway calls by public name; a raw-name call could step around the policies.
            return () => Promise.reject(new McpError('unknown-tool', 'callServerTool is not available to a gateway caller; call by public name', { phase: 'tools/call' }));
          default:
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        }
      },
    });
  }

  private async take(principal: string, tool: string): Promise<void> {
    const { principal: perPrincipal, tool: perTool } = this.options.limits ?? {};
    const buckets = [
      ...(perPrincipal ? [{ key: `principal\0${principal}`, spec: perPrincipal }] : []),
      ...(perTool ? [{ key: `tool\0${principal}\0${tool}`, spec: perTool }] : []),
    ];
    const result = await this.store.take(buckets, this.now());
    if (result.ok) return;
    throw new McpError('rate-limited', `principal ${JSON.stringify(principal)} called ${JSON.stringify(tool)} too often; retry after ${result.retryAfterMs} ms`, {
      phase: 'tools/call',
      retryAfterMs: result.retryAfterMs,
    });
  }
}

function filtered<T extends { name: string }>(tools: T[], filter: ToolPredicate | undefined): T[] {
  return filter ? tools.filter((t) => filter(t.name)) : tools;
}

/** Checks `gateway.limits`, naming the field and the value; throws `invalid-config`. */
export function checkLimits(value: unknown, where = 'gateway.limits'): Limits {
  const fail = (field: string, message: string) => new McpError('invalid-config', `${field} ${message}`, { phase: 'config' });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail(where, `must be an object { principal?, tool? }, got ${JSON.stringify(value)}`);
  const out: Limits = {};
  for (const [key, spec] of Object.entries(value)) {
    if (key !== 'principal' && key !== 'tool') throw fail(`${where}.${key}`, 'is not a limit; use "principal" and "tool"');
    if (typeof spec !== 'object' || spec === null) throw fail(`${where}.${key}`, `must be an object { capacity, refillPerSecond }, got ${JSON.stringify(spec)}`);
    const { capacity, refillPerSecond } = spec as Record<string, unknown>;
    if (!(Number.isSafeInteger(capacity) && (capacity as number) >= 1)) throw fail(`${where}.${key}.capacity`, `must be a whole number of calls of at least 1, got ${JSON.stringify(capacity)}`);
    if (!(typeof refillPerSecond === 'number' && refillPerSecond > 0 && Number.isFinite(refillPerSecond))) {
      throw fail(`${where}.${key}.refillPerSecond`, `must be a positive number of calls per second, got ${JSON.stringify(refillPerSecond)}`);
    }
    out[key] = { capacity: capacity as number, refillPerSecond };
  }
  return out;
}

export { checkPolicies };
