import { McpError } from '../../errors.js';
import { type ToolFilter, toolFilterProblem, toolPredicate, type ToolPredicate } from '../../manager/catalog/tool-filter.js';
import type { Identity } from './jwt-front.js';

/**
 * One policy: when a token matches `when` (every scope listed held, every claim equal;
 * no `when`: every token), `tools` (allow / deny globs over public names) applies to it.
 */
export interface Policy {
  when?: { scopes?: string[]; claims?: Record<string, string | number | boolean> };
  tools: ToolFilter;
}

/**
 * What a caller may use, from the policies its token matches: a tool is usable when no
 * matching policy denies it and, if any matching policy has `allow`, one of those allows it.
 * No matching policy with `allow`: every tool not denied.
 */
export function policyFilter(policies: readonly Policy[], identity: Identity): ToolPredicate | undefined {
  const matching = policies.filter((policy) => matches(policy, identity));
  const allows = matching.filter((p) => p.tools.allow !== undefined).map((p) => toolPredicate({ allow: p.tools.allow ?? [] }) as ToolPredicate);
  const denies = matching.filter((p) => p.tools.deny && p.tools.deny.length > 0).map((p) => toolPredicate({ deny: p.tools.deny }) as ToolPredicate);
  if (allows.length === 0 && denies.length === 0) return undefined;
  return (name) => (allows.length === 0 || allows.some((allowed) => allowed(name))) && denies.every((notDenied) => notDenied(name));
}

function matches(policy: Policy, identity: Identity): boolean {
  const when = policy.when;
  if (!when) return true;
  if (when.scopes && !when.scopes.every((scope) => identity.scopes.includes(scope))) return false;
  for (const [claim, wanted] of Object.entries(when.claims ?? {})) {
    const value = identity.claims[claim];
    // A list claim (groups, roles) matches when it holds the value.
    if (Array.isArray(value) ? !value.includes(wanted) : value !== wanted) return false;
  }
  return true;
}

/** Checks `gateway.policies`, naming the field and the value; throws `invalid-config`. */
export function checkPolicies(value: unknown, where = 'gateway.policies'): Policy[] {
  const fail = (field: string, message: string) => new McpError('invalid-config', `${field} ${message}`, { phase: 'config' });
  if (!Array.isArray(value)) throw fail(where, `must be an array of { when?, tools }, got ${JSON.stringify(value)}`);
  return value.map((item: unknown, i) => {
    const at = `${where}[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw fail(at, `must be an object { when?, tools }, got ${JSON.stringify(item)}`);
    const { when, tools, ...rest } = item as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw fail(`${at}.${extra}`, 'is not a policy field; use "when" and "tools"');
    const problem = toolFilterProblem(tools);
    if (problem) throw fail(`${at}.${problem.field}`, problem.message);
    if (when !== undefined) {
      if (typeof when !== 'object' || when === null || Array.isArray(when)) throw fail(`${at}.when`, `must be an object { scopes?, claims? }, got ${JSON.stringify(when)}`);
      const { scopes, claims, ...other } = when as Record<string, unknown>;
      const unknown = Object.keys(other)[0];
      if (unknown !== undefined) throw fail(`${at}.when.${unknown}`, 'is not a condition; use "scopes" and "claims"');
      if (scopes !== undefined && !(Array.isArray(scopes) && scopes.every((s) => typeof s === 'string' && s !== ''))) throw fail(`${at}.when.scopes`, `must be an array of scopes, got ${JSON.stringify(scopes)}`);
      if (claims !== undefined) {
        if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) throw fail(`${at}.when.claims`, `must be an object of claim values, got ${JSON.stringify(claims)}`);
        for (const [claim, wanted] of Object.entries(claims)) {
          if (!['string', 'number', 'boolean'].includes(typeof wanted)) throw fail(`${at}.when.claims.${claim}`, `must be a string, number or boolean, got ${JSON.stringify(wanted)}`);
        }
      }
    }
    return item as Policy;
  });
}
