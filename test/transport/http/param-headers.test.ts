import { describe, expect, it } from '@jest/globals';
import { headerValue, paramHeaders, scanHeaderParams } from '../../../src/transport/http/param-headers.js';

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });
const reason = (schema: unknown) => {
  const scan = scanHeaderParams(schema);
  return scan.ok ? undefined : scan.reason;
};

describe('scanHeaderParams (SEP-2243 x-mcp-header marks)', () => {
  it('collects marked string, integer and boolean parameters, nested ones by their properties path', () => {
    const scan = scanHeaderParams(
      object({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        priority: { type: 'integer', 'x-mcp-header': 'Priority' },
        query: { type: 'string' },
        target: object({ zone: { type: 'boolean', 'x-mcp-header': 'Zone-Only' } }),
      }),
    );
    expect(scan).toEqual({
      ok: true,
      params: [
        { path: ['region'], name: 'Region' },
        { path: ['priority'], name: 'Priority' },
        { path: ['target', 'zone'], name: 'Zone-Only' },
      ],
    });
    expect(scanHeaderParams({ type: 'object' })).toEqual({ ok: true, params: [] });
    expect(scanHeaderParams(undefined)).toEqual({ ok: true, params: [] });
  });

  it.each([
    ['an empty name', object({ v: { type: 'string', 'x-mcp-header': '' } }), 'must be a non-empty string'],
    ['a name that is not a string', object({ v: { type: 'string', 'x-mcp-header': 7 } }), 'must be a non-empty string, got 7'],
    ['a space in the name', object({ v: { type: 'string', 'x-mcp-header': 'My Region' } }), 'is not an HTTP header name token'],
    ['a colon in the name', object({ v: { type: 'string', 'x-mcp-header': 'Region:Primary' } }), 'is not an HTTP header name token'],
    ['a non-ASCII name', object({ v: { type: 'string', 'x-mcp-header': 'Région' } }), 'is not an HTTP header name token'],
    ['a control character in the name', object({ v: { type: 'string', 'x-mcp-header': 'Region\t1' } }), 'is not an HTTP header name token'],
    ['CR LF in the name', object({ v: { type: 'string', 'x-mcp-header': 'A\r\nX-Injected: 1' } }), 'is not an HTTP header name token'],
    ['an object property', object({ v: { type: 'object', 'x-mcp-header': 'Data' } }), 'needs type string, integer or boolean, got "object"'],
    ['an array property', object({ v: { type: 'array', items: { type: 'string' }, 'x-mcp-header': 'Items' } }), 'got "array"'],
    ['a null property', object({ v: { type: 'null', 'x-mcp-header': 'Nil' } }), 'got "null"'],
    ['a number property', object({ v: { type: 'number', 'x-mcp-header': 'Ratio' } }), 'got "number"'],
    ['a property without a type', object({ v: { 'x-mcp-header': 'Any' } }), 'got undefined'],
    ['a repeated name', object({ a: { type: 'string', 'x-mcp-header': 'Region' }, b: { type: 'string', 'x-mcp-header': 'Region' } }), 'repeats "Region"'],
    ['names equal but for case', object({ a: { type: 'string', 'x-mcp-header': 'MyField' }, b: { type: 'string', 'x-mcp-header': 'myfield' } }), 'repeats "MyField"'],
    ['a mark under items', object({ list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } }), 'not reachable from the root'],
    ['a mark in an anyOf branch', object({}, { anyOf: [object({ v: { type: 'string', 'x-mcp-header': 'V' } })] }), 'not reachable from the root'],
    ['a mark in $defs', object({}, { $defs: { d: { type: 'string', 'x-mcp-header': 'D' } } }), 'not reachable from the root'],
    ['a mark on the root', { type: 'object', 'x-mcp-header': 'Root' }, 'on the schema root'],
  ])('refuses %s', (_what, schema, why) => {
    expect(reason(schema)).toContain(why);
  });

  it('refuses a schema nested past its depth bound instead of walking it', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 200; i++) deep = object({ n: deep });
    expect(reason(deep)).toContain('nests deeper than 64 levels');
  });
});

describe('paramHeaders and headerValue (SEP-2243 value encoding)', () => {
  const marks = [
    { path: ['region'], name: 'Region' },
    { path: ['priority'], name: 'Priority' },
    { path: ['verbose'], name: 'Verbose' },
    { path: ['target', 'zone'], name: 'Zone' },
  ];

  it('mirrors strings as they are, integers in decimal, booleans in lower case; nested by path', () => {
    expect(paramHeaders(marks, { region: 'us-west1', priority: 42, verbose: false, target: { zone: 'b' }, query: 'SELECT 1' })).toEqual({
      'mcp-param-region': 'us-west1',
      'mcp-param-priority': '42',
      'mcp-param-verbose': 'false',
      'mcp-param-zone': 'b',
    });
  });

  it('leaves out null and absent arguments, and values the mark cannot carry (objects, fractions, unsafe integers)', () => {
    expect(paramHeaders(marks, { region: null, priority: 2 ** 60, verbose: { x: 1 }, target: null })).toEqual({});
    expect(paramHeaders(marks, { priority: 1.5 })).toEqual({});
    expect(paramHeaders(marks, undefined)).toEqual({});
    expect(paramHeaders(marks, { target: 'not an object' })).toEqual({});
  });

  it.each([
    ['us-west1', 'us-west1'],
    ['us west 1', 'us west 1'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    [' us-west1', `=?base64?${Buffer.from(' us-west1').toString('base64')}?=`],
    ['us-west1 ', `=?base64?${Buffer.from('us-west1 ').toString('base64')}?=`],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['line1\r\nline2', `=?base64?${Buffer.from('line1\r\nline2').toString('base64')}?=`],
    ['\tindented', `=?base64?${Buffer.from('\tindented').toString('base64')}?=`],
    ['a\tb', `=?base64?${Buffer.from('a\tb').toString('base64')}?=`],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
    ['', '=?base64??='],
  ])('%j is sent as %s', (value, header) => {
    expect(headerValue(value)).toBe(header);
    const wrapped = /^=\?base64\?(.*)\?=$/.exec(header);
    expect(wrapped ? Buffer.from(wrapped[1]!, 'base64').toString('utf8') : header).toBe(value);
  });
});
