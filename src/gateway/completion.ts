import type { ToolSession } from '../manager/scope/session.js';
import { INVALID_PARAMS, rpcFailure } from './error-map.js';
import { type ResourceRouter, serverUri } from './resource-router.js';

/**
 * `completion/complete` for a gateway client: a prompt (by its public name) or a resource
 * template, asked of the server that has it; the pool maps the public prompt name to the
 * server's own. A template no listing named yet is looked for by listing first.
 */
export async function complete(
  session: ToolSession,
  router: ResourceRouter,
  listTemplates: () => Promise<unknown>,
  params: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const { ref, argument, context } = params as { ref?: Record<string, unknown>; argument?: Record<string, unknown>; context?: unknown };
  if (!argument || typeof argument.name !== 'string' || typeof argument.value !== 'string') {
    throw rpcFailure(INVALID_PARAMS, `completion/complete needs "argument" with string "name" and "value", got ${JSON.stringify(argument) ?? 'nothing'}`);
  }
  const contextArgs = (context as { arguments?: unknown } | undefined)?.arguments;
  if (context !== undefined && (typeof context !== 'object' || context === null || (contextArgs !== undefined && (typeof contextArgs !== 'object' || contextArgs === null)))) {
    throw rpcFailure(INVALID_PARAMS, `completion/complete "context" must be { arguments?: object }, got ${JSON.stringify(context)}`);
  }
  const options = { signal, ...(contextArgs ? { context: { arguments: contextArgs as Record<string, string> } } : {}) };
  const wanted = { name: argument.name, value: argument.value };
  if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
    const name = ref.name;
    const prompt = (await session.listPrompts()).find((p) => p.name === name);
    if (!prompt) throw rpcFailure(INVALID_PARAMS, `completion/complete: no prompt named ${JSON.stringify(name)} in this gateway`, { ref });
    return { completion: await session.complete(prompt.server, { type: 'ref/prompt', name }, wanted, options) };
  }
  if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
    const uri = ref.uri;
    let route = router.routeTemplate(uri);
    if (route === undefined) {
      await listTemplates();
      route = router.routeTemplate(uri);
    }
    if (route === undefined) throw rpcFailure(INVALID_PARAMS, `completion/complete: no server of this gateway lists the resource template ${JSON.stringify(uri)}`, { ref });
    if ('shared' in route) throw rpcFailure(INVALID_PARAMS, `completion/complete: servers ${route.shared.join(', ')} all list ${JSON.stringify(uri)}; name one as ${route.shared.map((server) => serverUri(server, uri)).join(', ')}`, { ref });
    return { completion: await session.complete(route.server, { type: 'ref/resource', uri: route.uri }, wanted, options) };
  }
  throw rpcFailure(INVALID_PARAMS, `completion/complete "ref" must be { type: "ref/prompt", name } or { type: "ref/resource", uri }, got ${JSON.stringify(ref) ?? 'nothing'}`);
}
