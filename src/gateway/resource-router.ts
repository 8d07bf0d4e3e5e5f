import type { ManagedResource, ManagedResourceTemplate } from '../manager/manager.js';

/**
 * Which server a resource URI belongs to. Resources keep their servers' own URIs (a tool
 * result may link to them), so the gateway learns the owner from the listings it served:
 * exact URIs first, then the URI templates (RFC 6570, matched loosely: each expression
 * stands for any text, `/` included only for `{+x}`, `{/x}` and friends).
 */
export class ResourceRouter {
  private readonly exact = new Map<string, string>();
  private templates: { server: string; uriTemplate: string; pattern: RegExp }[] = [];

  learnResources(resources: readonly ManagedResource[]): void {
    for (const { server, resource } of resources) this.exact.set(resource.uri, server);
  }

  learnTemplates(templates: readonly ManagedResourceTemplate[]): void {
    const learned = templates.map(({ server, resourceTemplate }) => ({
      server,
      uriTemplate: resourceTemplate.uriTemplate,
      pattern: templatePattern(resourceTemplate.uriTemplate),
    }));
    const servers = new Set(learned.map((t) => t.server));
    this.templates = [...this.templates.filter((t) => !servers.has(t.server)), ...learned];
  }

  /** The server owning `uri`, or undefined when no listing named it. */
  serverOf(uri: string): string | undefined {
    return this.exact.get(uri) ?? this.templates.find((t) => t.pattern.test(uri))?.server;
  }

  /** The server whose listing has exactly this URI template (a completion's `ref/resource`), else the owner of `uri` as a URI. */
  serverOfTemplate(uri: string): string | undefined {
    return this.templates.find((t) => t.uriTemplate === uri)?.server ?? this.serverOf(uri);
  }
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
