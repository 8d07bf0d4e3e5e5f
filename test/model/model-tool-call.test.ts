import { callModelToolCall, parseModelToolCall, toOpenAiChatToolMessage } from '../../src/adapters.js';
import { fixture, textOf } from '../support/fixtures.js';
import { managersShutAfterEach } from '../support/managers.js';

const manage = managersShutAfterEach();

describe('a model tool call, as the chat APIs hand it back', () => {
  it('reads the name and arguments of OpenAI Chat, OpenAI Responses and Anthropic calls', () => {
    const expected = { name: 'mcp__a__add', arguments: { a: 2, b: 40 } };
    expect(parseModelToolCall({ id: 'call_1', type: 'function', function: { name: 'mcp__a__add', arguments: '{"a":2,"b":40}' } })).toEqual(expected);
    expect(parseModelToolCall({ type: 'function_call', call_id: 'fc_1', name: 'mcp__a__add', arguments: '{"a":2,"b":40}' })).toEqual(expected);
    expect(parseModelToolCall({ type: 'tool_use', id: 'toolu_1', name: 'mcp__a__add', input: { a: 2, b: 40 } })).toEqual(expected);
    // Some models send "" for a tool without parameters.
    expect(parseModelToolCall({ function: { name: 'mcp__a__ping', arguments: '' } })).toEqual({ name: 'mcp__a__ping', arguments: {} });
  });

  it('refuses arguments that are not a JSON object with invalid-arguments naming the tool and the text', () => {
    expect(() => parseModelToolCall({ function: { name: 'mcp__a__add', arguments: '{"a":2,' } })).toThrow(
      expect.objectContaining({ code: 'invalid-arguments', message: 'tool call "mcp__a__add": arguments must be a JSON object, got unparsable text "{\\"a\\":2,"' }),
    );
    expect(() => parseModelToolCall({ function: { name: 'mcp__a__add', arguments: '[1,2]' } })).toThrow(expect.objectContaining({ code: 'invalid-arguments', message: expect.stringContaining('got [1,2]') }));
    expect(() => parseModelToolCall({ name: 'mcp__a__add', input: 'x'.repeat(10_000) })).toThrow(expect.objectContaining({ message: expect.stringMatching(/…$/) }));
    expect(() => parseModelToolCall({ function: { name: 42 as unknown as string } })).toThrow(expect.objectContaining({ code: 'invalid-arguments', message: expect.stringContaining('"name"') }));
  });

  it('calls the tool on a manager or a session, and the result goes back as a tool message', async () => {
    const manager = manage({ a: fixture('echo-server.mjs') });
    const call = { id: 'call_7', type: 'function' as const, function: { name: 'mcp__a__add', arguments: '{"a":2,"b":40}' } };
    const result = await callModelToolCall(manager, call);
    expect(textOf(result)).toBe('42');
    expect(toOpenAiChatToolMessage(call.id, result)).toEqual({ role: 'tool', tool_call_id: 'call_7', content: '42\n{"sum":42}' });
    const session = manager.session();
    expect(textOf(await callModelToolCall(session, { type: 'tool_use', id: 't', name: 'mcp__a__echo', input: { text: 'hi' } }))).toBe('hi');
  });
});
