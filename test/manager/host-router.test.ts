import { HostRouter, validateElicitation } from '../../src/manager/scope/host-handlers.js';
import type { HostHandlers, HostRequestContext } from '../../src/protocol/types.js';

const ctx = (server = 's'): HostRequestContext => ({ server, signal: new AbortController().signal });
const named = (name: string): HostHandlers => ({ elicitation: async () => ({ action: 'accept', content: { name } }) });

describe('HostRouter', () => {
  it('declares only what the manager handles or names', () => {
    expect(Object.keys(new HostRouter().connectionHandlers())).toEqual([]);
    expect(Object.keys(new HostRouter(named('m')).connectionHandlers())).toEqual(['elicitation']);
    expect(Object.keys(new HostRouter({}, { sampling: true, roots: true }).connectionHandlers()).sort()).toEqual(['roots', 'sampling']);
    expect(Object.keys(new HostRouter({}, {}, [{ uri: 'file:///a' }]).connectionHandlers())).toEqual(['roots']);
  });

  it('a session keeps the manager handlers it does not override', () => {
    const sampling: HostHandlers['sampling'] = async () => ({ role: 'assistant', content: {}, model: 'm' });
    const router = new HostRouter({ ...named('m'), sampling });
    const caller = router.caller({ elicitation: named('s').elicitation, sampling: undefined });
    expect(caller.handlers.sampling).toBe(sampling);
    expect(caller.handlers.elicitation).not.toBe(router.root.handlers.elicitation);
    expect(router.caller(undefined)).toBe(router.root);
  });

  it('no handler anywhere: elicitation declines, sampling and roots are -32601', async () => {
    const handlers = new HostRouter({}, { elicitation: true, sampling: true, roots: true }).connectionHandlers();
    expect(await handlers.elicitation!({ message: '?' }, ctx())).toEqual({ action: 'decline' });
    await expect(handlers.sampling!({ messages: [] }, ctx())).rejects.toMatchObject({ rpc: { code: -32601 } });
    await expect(handlers.roots!(ctx())).rejects.toMatchObject({ rpc: { code: -32601 } });
  });
});

describe('validateElicitation', () => {
  const requestedSchema = { type: 'object', properties: { name: { type: 'string' }, n: { type: 'integer', default: 3 } }, required: ['name'] };

  it('applies defaults to a copy and rejects an answer that does not fit', async () => {
    const content = { name: 'Ada' };
    expect(await validateElicitation({ message: '?', requestedSchema }, { action: 'accept', content })).toEqual({ action: 'accept', content: { name: 'Ada', n: 3 } });
    expect(content).toEqual({ name: 'Ada' });
    // Once the validator is loaded (above), the check is synchronous.
    expect(() => validateElicitation({ message: '?', requestedSchema }, { action: 'accept', content: { n: 'x' } })).toThrow('`name` is required');
  });

  it('passes URL-mode answers as they are', () => {
    const result = { action: 'accept' as const };
    expect(validateElicitation({ mode: 'url', message: 'Sign in', url: 'https://example.test/x', elicitationId: 'e1' }, result)).toBe(result);
  });
});
