import type { ManagedResource, ManagedResourceTemplate } from '../manager/scope/scope.js';
import type { Resource, ResourceTemplate } from '../protocol/types.js';

/**
 * The scheme of a resource URI the gateway made because two servers list the same URI (or
 * URI template): `lazy-mcp:<server>/<the server's own URI>`, the server name
 * percent-encoded (so it holds no `/` or `:`). Reversible: the gateway reads it from that
 * server with the server's own URI. A URI only one server lists is shown unchanged.
 */
export const SERVER_URI_SCHEME = 'lazy-mcp:';

/** `lazy-mcp:<server>/<uri>`: one server's resource (or template) as the gateway shows it when its URI is shared. */
export function serverUri(server: string, uri: string): string {
  return `${SERVER_URI_SCHEME}${encodeURIComponent(server)}/${uri}`;
}

/** The server and its own URI behind a {@link serverUri}, else undefined. */
export function parseServerUri(uri: string): { server: string; uri: string } | undefined {
  if (!uri.startsWith(SERVER_URI_SCHEME)) return undefined;
  const slash = uri.indexOf('/', SERVER_URI_SCHEME.length);
  if (slash <= SERVER_URI_SCHEME.length) return undefined;
  try {
    return { server: decodeURIComponent(uri.slice(SERVER_URI_SCHEME.length, slash)), uri: uri.slice(slash + 1) };
  } catch {
    return undefined;
  }
}

/** Where a URI a client gave goes: one server and that server's own URI, or several that all list it. */
export type ResourceRoute = { server: string; uri: string } | { shared: string[] };

/**
 * Which server a resource URI belongs to. Resources keep their servers' own URIs (a tool
 * result may link to them), so the gateway learns the owner from the listings it served:
 * exact URIs first, then the URI templates (RFC 6570, matched loosely: each expression
 * stands for any text, `/` included only for `{+x}`, `{/x}` and friends). A URI that more
 * than one server lists is shown once per server as a {@link serverUri}; the bare URI is
 * then ambiguous and never sent to one of them by guess.
 */
export class ResourceRouter {
  private readonly exact = new Map<string, Set<string>>();
  private templates: { server: string; uriTemplate: string; pattern: RegExp }[] = [];

  /** Learns a listing (it replaces what was known of the servers in it) and gives it as clients see it. */
  learnResources(resources: readonly ManagedResource[]): Resource[] {
    const listed = new Set(resources.map((r) => r.server));
    for (const [uri, servers] of this.exact) {
      for (const server of listed) servers.delete(server);
      if (servers.size === 0) this.exact.delete(uri);
    }
    for (const { server, resource } of resources) {
      const servers = this.exact.get(resource.uri);
      if (servers) servers.add(server);
      else this.exact.set(resource.uri, new Set([server]));
    }
    return resources.map(({ server, resource }) => ((this.exact.get(resource.uri)?.size ?? 0) > 1 ? { ...resource, uri: serverUri(server, resource.uri) } : resource));
  }

  /** As {@link learnResources}, for URI templates: one listed by several servers is shown once per server. */
  learnTemplates(templates: readonly ManagedResourceTemplate[]): ResourceTemplate[] {
    const learned = templates.map(({ server, resourceTemplate }) => ({
      server,
      uriTemplate: resourceTemplate.uriTemplate,
      pattern: templatePattern(resourceTemplate.uriTemplate),
    }));
    const servers = new Set(learned.map((t) => t.server));
    this.templates = [...this.templates.filter((t) => !servers.has(t.server)), ...learned];
    return templates.map(({ server, resourceTemplate }) =>
      this.templateServers(resourceTemplate.uriTemplate).length > 1 ? { ...resourceTemplate, uriTemplate: serverUri(server, resourceTemplate.uriTemplate) } : resourceTemplate,
    );
  }

  /** Where `uri` goes, or undefined when no listing named it. */
  route(uri: string): ResourceRoute | undefined {
    const owners = this.exact.get(uri);
    if (owners) return owners.size === 1 ? { server: first(owners), uri } : { shared: [...owners] };
    const named = parseServerUri(uri);
    if (named) return named;
    const matching = new Set(this.templates.filter((t) => t.pattern.test(uri)).map((t) => t.server));
    if (matching.size === 0) return undefined;
    return matching.size === 1 ? { server: first(matching), uri } : { shared: [...matching] };
  }

  /** Where a completion's `ref/resource` goes: the server whose listing has exactly this URI template, else as {@link route}. */
  routeTemplate(uriTemplate: string): ResourceRoute | undefined {
    const servers = this.templateServers(uriTemplate);
    if (servers.length === 1) return { server: servers[0], uri: uriTemplate };
    if (servers.length > 1) return { shared: servers };
    return this.route(uriTemplate);
  }

  private templateServers(uriTemplate: string): string[] {
    return [...new Set(this.templates.filter((t) => t.uriTemplate === uriTemplate).map((t) => t.server))];
  }
}

function first(set: ReadonlySet<string>): string {
  return set.values().next().value as string;
}

const MAX_TEMPLATE_LENGTH = 2048;

function templatePattern(template: string): RegExp {
  if (template.length > MAX_TEMPLATE_LENGTH) return /$^/;
  let source = '';
  let last = 0;
  for (const match of template.matchAll(/\{([^{}]*)\}/g)) {
    source += escape(template.slice(last, match.index));
    const operator = match[1][0];
    // Reserved (+), fragment (#) and path (/) expansions may hold slashes; the rest may not.
    source += operator === '+' || operator === '#' || operator === '/' ? '.*' : '[^/]*';
    last = match.index + match[0].length;
  }
  source += escape(template.slice(last));
  return new RegExp(`^${source}$`);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
