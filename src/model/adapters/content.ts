import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../protocol/engine/json-depth.js';
import type { CallToolResult, UnknownContentBlock } from '../../protocol/types.js';

/** A tool result's content in the few kinds chat APIs tell apart. */
export type Part =
  | { kind: 'text'; text: string }
  | { kind: 'image'; mimeType: string; data: string }
  | { kind: 'audio'; mimeType: string; data: string }
  /** A binary embedded resource (a PDF, an archive, …), base64. */
  | { kind: 'file'; mimeType: string; data: string; uri: string };

/**
 * The parts of a result, in order. Resource links and text resources become text that
 * names their URI (a model can only cite or fetch what it can read); binary resources stay
 * binary for the adapters that can pass them on. A content type from a newer revision
 * becomes a short text saying what was left out, never silence. `structuredContent` is
 * given as JSON text only when no content block carries it already (MCP asks servers to
 * repeat it as text; not all do).
 */
export function partsOf(result: CallToolResult): Part[] {
  const parts: Part[] = [];
  for (const block of result.content ?? []) {
    const b = block as Record<string, unknown>;
    switch (block.type) {
      case 'text':
        parts.push({ kind: 'text', text: String(b.text) });
        break;
      case 'image':
      case 'audio':
        parts.push({ kind: block.type, mimeType: String(b.mimeType), data: String(b.data) });
        break;
      case 'resource_link': {
        const about = [b.title ?? b.name, b.mimeType && `(${b.mimeType})`, b.description && `: ${b.description}`].filter(Boolean).join(' ');
        parts.push({ kind: 'text', text: `[resource link ${String(b.uri)}${about ? ` — ${about}` : ''}]` });
        break;
      }
      case 'resource': {
        const r = (b.resource ?? {}) as Record<string, unknown>;
        const uri = String(r.uri);
        if (typeof r.text === 'string') parts.push({ kind: 'text', text: `[resource ${uri}${r.mimeType ? ` (${r.mimeType})` : ''}]\n${r.text}` });
        else if (typeof r.blob === 'string') parts.push({ kind: 'file', mimeType: String(r.mimeType ?? 'application/octet-stream'), data: r.blob, uri });
        else parts.push({ kind: 'text', text: `[resource ${uri}]` });
        break;
      }
      default:
        parts.push({ kind: 'text', text: `[content of type ${JSON.stringify((block as UnknownContentBlock).type)} left out]` });
    }
  }
  if (result.structuredContent !== undefined && nestsDeeperThan(result.structuredContent, MAX_JSON_DEPTH)) {
    parts.push({ kind: 'text', text: `[structured content left out: it nests deeper than ${MAX_JSON_DEPTH} levels]` });
  } else if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    if (!parts.some((p) => p.kind === 'text' && p.text.includes(json))) parts.push({ kind: 'text', text: json });
  }
  return parts;
}

/** What a provider cannot take, said in text so the model knows something was there. */
export function omitted(part: Exclude<Part, { kind: 'text' }>, provider: string): string {
  const bytes = Math.floor((part.data.length * 3) / 4);
  const where = part.kind === 'file' ? ` ${part.uri}` : '';
  return `[${part.kind}${where} (${part.mimeType}, ${bytes} bytes) left out: ${provider} tool results cannot carry it]`;
}

/** A short lead for an `isError` result, for APIs without an error flag. */
export const ERROR_LEAD = 'The tool reported an error:';
