import { fixtureConfig, runCli } from './run-cli.js';

// The prompt and tool-inspection commands, end to end as a child process.
const config = ['--config', fixtureConfig('cli-prompts.json')];

describe('prompts, prompt and tool commands', () => {
  it('prompts lists public name, server, arguments and description', async () => {
    const run = await runCli(['prompts', ...config]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^PROMPT\s+SERVER\s+ARGUMENTS\s+DESCRIPTION$/),
      expect.stringMatching(/^mcp__hf__greet\s+hf\s+who\s+Writes a greeting$/),
    ]);
    const json = await runCli(['prompts', '--json', ...config]);
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ name: 'mcp__hf__greet', server: 'hf' })]);
  });

  it('prompt gets one prompt with string arguments; a wrong name exits 1 with close matches', async () => {
    const run = await runCli(['prompt', 'mcp__hf__greet', '{"who":"Ada"}', ...config]);
    expect(run).toMatchObject({ code: 0, stderr: '', stdout: 'user:\nSay hello to Ada\n' });
    const wrong = await runCli(['prompt', 'mcp__hf__gret', ...config]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('did you mean mcp__hf__greet?');
    const notString = await runCli(['prompt', 'mcp__hf__greet', '{"who":3}', ...config]);
    expect(notString.code).toBe(2);
  });
});
