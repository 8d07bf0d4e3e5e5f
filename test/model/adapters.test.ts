import Ajv2020 from 'ajv/dist/2020.js';
import {
  anthropicSchema,
  geminiSchema,
  openAiSchema,
  toAnthropicTool,
  toAnthropicToolReferences,
  toAnthropicToolResult,
  toGeminiFunctionDeclaration,
  toGeminiFunctionResponse,
  toOpenAiChatTool,
  toOpenAiChatToolMessage,
  toOpenAiFunctionCallOutput,
  toOpenAiResponsesTool,
} from '../../src/adapters.js';
import type { JsonSchema } from '../../src/model/schema-transform.js';
import type { CallToolResult } from '../../src/protocol/types.js';

const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, validateFormats: false });
const tool = (inputSchema: object, name = 'do_it') => ({ name: `mcp__srv__${name}`, server: 'srv', tool: { name, description: 'Does it', inputSchema: inputSchema as never } });

/** Every subschema of a schema, with its path. */
function* nodes(schema: unknown, path = ''): Generator<[JsonSchema, string]> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return;
  const node = schema as JsonSchema;
  yield [node, path];
  if (node.properties) for (const [k, v] of Object.entries(node.properties as object)) yield* nodes(v, `${path}/properties/${k}`);
  if (node.items) yield* nodes(node.items, `${path}/items`);
  for (const key of ['anyOf', 'oneOf', 'allOf']) for (const [i, v] of ((node[key] as unknown[]) ?? []).entries()) yield* nodes(v, `${path}/${key}/${i}`);
  if (typeof node.additionalProperties === 'object') yield* nodes(node.additionalProperties, `${path}/additionalProperties`);
}

// A schema as servers write them: shared definitions, a recursive tree, unions, formats, optional fields.
const tricky = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    point: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] },
    node: { type: 'object', properties: { label: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['label'] },
  },
  properties: {
    from: { $ref: '#/$defs/point', description: 'Start' },
    to: { $ref: '#/$defs/point' },
    when: { type: 'string', format: 'date-time' },
    email: { type: 'string', format: 'email' },
    site: { type: 'string', format: 'uri' },
    mode: { enum: ['fast', 'slow'] },
    level: { enum: [1, 2, 3] },
    kind: { const: 'draw' },
    grid: { type: 'array', items: { type: 'array', items: { type: 'integer', exclusiveMinimum: 0 } } },
    note: { type: ['string', 'null'] },
    shape: { oneOf: [{ type: 'string' }, { $ref: '#/$defs/point' }] },
    style: { allOf: [{ type: 'object', properties: { color: { type: 'string' } }, required: ['color'] }, { properties: { width: { type: 'number' } } }] },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    tree: { $ref: '#/$defs/node' },
    anything: {},
  },
  required: ['from', 'to', 'mode'],
};

describe('shared schema work', () => {
  it('inlines local $refs, cuts cycles with a note, and never changes its input', () => {
    const before = JSON.stringify(tricky);
    const { schema, report } = anthropicSchema(tricky);
    expect(JSON.stringify(tricky)).toBe(before);
    const text = JSON.stringify(schema);
    expect(text).not.toContain('$ref');
    expect(text).not.toContain('$defs');
    expect(schema.properties).toMatchObject({ from: { type: 'object', description: 'Start', required: ['x', 'y'] }, to: { type: 'object' } });
    // Expanded once, then cut where it recurses.
    const tree = (schema.properties as any).tree;
    expect(tree.properties.label).toEqual({ type: 'string' });
    expect(tree.properties.children.items.description).toMatch(/Recursive: the same shape as "node"/);
    expect(report.cycles).toBe(true);
    expect(report.notes).toEqual(expect.arrayContaining(['inlined #/$defs/point at /properties/from']));
  });

  it('survives a self-referencing root and hostile depth without blowing the stack', () => {
    const self = { type: 'object', properties: { next: { $ref: '#' } } };
    expect((anthropicSchema(self).schema.properties as any).next.description).toMatch(/Recursive: the same shape as the whole input/);
    let deep: object = { type: 'string' };
    for (let i = 0; i < 5000; i++) deep = { type: 'object', properties: { a: deep } };
    expect(() => geminiSchema(deep)).not.toThrow();
    expect(JSON.stringify(geminiSchema(deep).schema)).toContain('too large or too deep');
  });
});

describe('OpenAI', () => {
  const STRICT_KEYWORDS = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'anyOf', 'description', 'title', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems']);
  /** OpenAI's strict-mode rules, checked on every subschema. */
  function expectStrictValid(schema: JsonSchema): void {
    expect(schema.type).toBe('object');
    for (const [node, path] of nodes(schema)) {
      for (const key of Object.keys(node)) expect([path, key, STRICT_KEYWORDS.has(key)]).toEqual([path, key, true]);
      if (node.properties) {
        expect([path, node.additionalProperties]).toEqual([path, false]);
        expect([path, [...(node.required as string[])].sort()]).toEqual([path, Object.keys(node.properties as object).sort()]);
      }
    }
  }

  it('uses strict mode when the schema can be made strict without changing its meaning', () => {
    const schema = {
      type: 'object',
      $defs: { unit: { type: 'string', enum: ['c', 'f'] } },
      properties: {
        city: { type: 'string', description: 'City' },
        unit: { $ref: '#/$defs/unit' },
        days: { type: 'array', items: { type: 'array', items: { type: 'integer', minimum: 1 } } },
        when: { type: 'string', format: 'uri', default: 'x' },
        note: { type: ['string', 'null'] },
        mode: { const: 'fast' },
      },
      required: ['city', 'unit', 'days', 'when', 'mode'],
    };
    const { parameters, strict, report } = openAiSchema(schema);
    expect(strict).toBe(true);
    expectStrictValid(parameters);
    expect((parameters.properties as any).when).toEqual({ type: 'string', description: '(format: uri)' });
    expect((parameters.properties as any).mode).toEqual({ enum: ['fast'] });
    expect(report.notes).toContain('listed the nullable optional property "note" as required at /');
    // Every value the strict schema accepts is one the tool accepts.
    const instance = { city: 'Oslo', unit: 'c', days: [[1, 2]], when: 'x', note: null, mode: 'fast' };
    expect(ajv.validate(parameters, instance)).toBe(true);
    expect(ajv.validate(schema, instance)).toBe(true);
    expect(ajv.validate(parameters, { ...instance, extra: 1 })).toBe(false);
  });

  it('falls back to non-strict, keeping the schema as written, when strict would change its meaning', () => {
    const optional = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'] };
    const result = openAiSchema(optional);
    expect(result.strict).toBe(false);
    expect(result.parameters).toEqual(optional);
    expect(result.report.notes.at(-1)).toMatch(/not strict: the optional property "b" at \/, which does not accept null/);
    for (const schema of [
      { type: 'object', properties: { m: { type: 'object', additionalProperties: { type: 'string' } } }, required: ['m'] },
      { type: 'object', properties: { s: { type: 'string', minLength: 2 } }, required: ['s'] },
      { type: 'object', properties: { u: { oneOf: [{ type: 'string' }, { type: 'number' }] } }, required: ['u'] },
      { type: 'object', properties: { any: {} }, required: ['any'] },
      tricky,
    ]) {
      const out = openAiSchema(schema);
      expect(out.strict).toBe(false);
      expect(JSON.stringify(out.parameters)).not.toContain('$ref');
    }
    expect(openAiSchema({ type: 'object', properties: {} }).strict).toBe(false);
    expect(openAiSchema({ type: 'object', properties: { a: { type: 'string' } } }, { strict: false }).strict).toBe(false);
  });

  it('builds Chat Completions and Responses tools, with defer_loading for tool search', () => {
    const t = tool({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
    expect(toOpenAiChatTool(t)).toEqual({
      type: 'function',
      function: { name: 'mcp__srv__do_it', description: 'Does it', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false }, strict: true },
    });
    expect(toOpenAiResponsesTool(t, { deferLoading: true })).toMatchObject({ type: 'function', name: 'mcp__srv__do_it', strict: true, defer_loading: true });
    expect(toOpenAiResponsesTool(t)).not.toHaveProperty('defer_loading');
    expect(toOpenAiChatTool(tool({})).function.parameters).toEqual({ type: 'object' });
  });
});

describe('Anthropic', () => {
  it('gives an input_schema with no $ref and no top-level union, and defer_loading on request', () => {
    const union = { anyOf: [{ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }] };
    const out = toAnthropicTool(tool(union), { deferLoading: true });
    expect(out).toMatchObject({ name: 'mcp__srv__do_it', description: 'Does it', defer_loading: true });
    expect(out.input_schema).toMatchObject({ type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } });
    expect(out.input_schema).not.toHaveProperty('required'); // neither property is required by every branch
    expect(out.input_schema.description).toBe('Give one of these sets of properties: (id) or (name).');
    for (const key of ['anyOf', 'oneOf', 'allOf']) expect(out.input_schema).not.toHaveProperty(key);
    const merged = anthropicSchema({ allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'number' } }, required: ['b'] }] }).schema;
    expect(merged).toEqual({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a', 'b'] });
    // Nested unions, formats, enums and additionalProperties are JSON Schema Claude accepts: kept.
    const kept = anthropicSchema(tricky).schema.properties as any;
    expect(kept.shape.oneOf).toHaveLength(2);
    expect(kept.site.format).toBe('uri');
    expect(kept.tags.additionalProperties).toEqual({ type: 'string' });
    expect(toAnthropicToolReferences([{ name: 'mcp__a__b' }])).toEqual([{ type: 'tool_reference', tool_name: 'mcp__a__b' }]);
  });
});

describe('Gemini', () => {
  const ALLOWED = new Set(['type', 'format', 'title', 'description', 'nullable', 'enum', 'items', 'properties', 'required', 'propertyOrdering', 'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'minProperties', 'maxProperties', 'anyOf', 'default', 'example']);
  const FORMATS: Record<string, string[]> = { string: ['enum', 'date-time'], number: ['float', 'double'], integer: ['int32', 'int64'] };

  it('keeps to the Schema subset Gemini accepts, without making anything required', () => {
    const schema = geminiSchema(tricky).schema!;
    for (const [node, path] of nodes(schema)) {
      for (const key of Object.keys(node)) expect([path, key, ALLOWED.has(key)]).toEqual([path, key, true]);
      if (node.type !== undefined) expect([path, typeof node.type]).toEqual([path, 'string']);
      if (node.type === undefined) expect([path, Array.isArray(node.anyOf) || Array.isArray(node.enum)]).toEqual([path, true]);
      if (node.enum) expect([path, (node.enum as unknown[]).every((v) => typeof v === 'string'), node.type]).toEqual([path, true, 'string']);
      if (node.format) expect([path, FORMATS[node.type as string]?.includes(node.format as string)]).toEqual([path, true]);
      if (node.type === 'array') expect(node.items).toBeDefined();
      if (node.required) for (const name of node.required as string[]) expect(Object.keys(node.properties as object)).toContain(name);
    }
    const p = schema.properties as any;
    expect(schema.required).toEqual(['from', 'to', 'mode']);
    expect(p.when).toEqual({ type: 'string', format: 'date-time' });
    expect(p.email.description).toBe('(format: email)');
    expect(p.note).toEqual({ type: 'string', nullable: true });
    expect(p.level.description).toBe('(one of: 1, 2, 3)');
    expect(p.kind).toEqual({ type: 'string', enum: ['draw'] });
    expect(p.shape.anyOf).toHaveLength(2);
    expect(p.style).toMatchObject({ type: 'object', properties: { color: { type: 'string' }, width: { type: 'number' } }, required: ['color'] });
    expect(p.grid.items.items).toEqual({ type: 'integer', description: '(greater than 0)' });
    expect(p.tags).toEqual({ type: 'object', description: '(an object with any keys)' });
    expect(p.anything.anyOf.map((b: { type: string }) => b.type)).toEqual(['string', 'number', 'boolean', 'object']);
  });

  it('leaves parameters unset for a tool without any', () => {
    expect(toGeminiFunctionDeclaration(tool({ type: 'object', properties: {} }))).toEqual({ name: 'mcp__srv__do_it', description: 'Does it' });
    expect(toGeminiFunctionDeclaration(tool({ type: 'object', properties: { a: { type: 'string' } } })).parameters).toEqual({ type: 'object', properties: { a: { type: 'string' } } });
  });
});

describe('tool results', () => {
  const png = { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' } as const;
  const result: CallToolResult = {
    content: [
      { type: 'text', text: 'hello' },
      png,
      { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'file:///r.txt', name: 'r.txt', mimeType: 'text/plain' },
      { type: 'resource', resource: { uri: 'file:///notes.md', mimeType: 'text/markdown', text: '# Notes' } },
      { type: 'resource', resource: { uri: 'file:///doc.pdf', mimeType: 'application/pdf', blob: 'JVBERi0=' } },
    ],
  };

  it('Anthropic: text, images, PDFs as documents, links and resources as text with their URI, audio noted, is_error', () => {
    const out = toAnthropicToolResult('toolu_1', { ...result, isError: true });
    expect(out).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true });
    expect(out.content).toEqual([
      { type: 'text', text: 'hello' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'text', text: expect.stringMatching(/^\[audio \(audio\/wav, \d+ bytes\) left out/) },
      { type: 'text', text: '[resource link file:///r.txt — r.txt (text/plain)]' },
      { type: 'text', text: '[resource file:///notes.md (text/markdown)]\n# Notes' },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
    ]);
    expect(toAnthropicToolResult('t', { content: [{ type: 'text', text: 'ok' }] })).not.toHaveProperty('is_error');
  });

  it('OpenAI: text-only tool messages for Chat Completions, images and files for Responses, errors said in words', () => {
    const chat = toOpenAiChatToolMessage('call_1', { ...result, isError: true });
    expect(chat.role).toBe('tool');
    expect(chat.content.split('\n')[0]).toBe('The tool reported an error:');
    expect(chat.content).toContain('[image (image/png, 9 bytes) left out');
    expect(chat.content).toContain('[resource link file:///r.txt');
    const responses = toOpenAiFunctionCallOutput('call_1', result);
    expect(responses.output).toEqual([
      { type: 'input_text', text: 'hello' },
      { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
      { type: 'input_text', text: expect.stringContaining('[audio') },
      { type: 'input_text', text: '[resource link file:///r.txt — r.txt (text/plain)]' },
      { type: 'input_text', text: '[resource file:///notes.md (text/markdown)]\n# Notes' },
      { type: 'input_file', filename: 'doc.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
    ]);
  });

  it('Gemini: output or error text, images and PDFs as inline parts, structuredContent as JSON when not already in the text', () => {
    const out = toGeminiFunctionResponse('mcp__srv__do_it', result);
    expect(out.functionResponse.name).toBe('mcp__srv__do_it');
    expect((out.functionResponse.response as { output: string }).output).toContain('hello\n[audio');
    expect(out.functionResponse.parts).toEqual([{ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }, { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } }]);
    const failed = toGeminiFunctionResponse('f', { content: [{ type: 'text', text: 'boom' }], isError: true });
    expect(failed.functionResponse.response).toEqual({ error: 'boom' });
    const structured = toGeminiFunctionResponse('s', { content: [], structuredContent: { sum: 3 } });
    expect(structured.functionResponse.response).toEqual({ output: '{"sum":3}' });
    const repeated = toGeminiFunctionResponse('s', { content: [{ type: 'text', text: '{"sum":3}' }], structuredContent: { sum: 3 } });
    expect(repeated.functionResponse.response).toEqual({ output: '{"sum":3}' });
  });
});
