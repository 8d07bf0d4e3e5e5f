// `npm run conformance`: the official MCP conformance suite's client scenarios, one after
// another (the suite's own parallel mode overloads a small machine into time-outs), against
// scripts/conformance/client.mjs. Everything listens on localhost; nothing leaves the machine.
// Writes conformance/client-<spec>.json and .md and exits 1 when a scenario fails.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const suite = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const pkg = JSON.parse(readFileSync(join(root, 'node_modules/@modelcontextprotocol/conformance/package.json'), 'utf8'));
const hook = join(root, 'scripts/conformance/register-fs-glob.mjs');
const specs = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const only = process.argv.find((a) => a.startsWith('--scenario='))?.slice('--scenario='.length);
const conformance = (args, options = {}) =>
  spawnSync(process.execPath, ['--import', hook, suite, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000, ...options });

let failedAny = false;
for (const spec of specs.length > 0 ? specs : ['2025-11-25']) {
  const listed = conformance(['list', '--client', '--spec-version', spec]);
  if (listed.status !== 0) throw new Error(`conformance list failed: ${listed.stderr}`);
  let scenarios = [...listed.stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
  if (only) scenarios = scenarios.filter((s) => s === only);
  const rows = [];
  for (const scenario of scenarios) {
    const out = mkdtempSync(join(tmpdir(), 'lazy-mcp-conformance-out-'));
    const run = conformance(['client', '--command', `"${process.execPath}" scripts/conformance/client.mjs`, '--scenario', scenario, '-o', out]);
    const checks = readChecks(out);
    rmSync(out, { recursive: true, force: true });
    const failed = checks.filter((c) => c.status === 'FAILURE');
    const row = {
      scenario,
      passed: checks.filter((c) => c.status === 'SUCCESS').length,
      failed: failed.length,
      warnings: checks.filter((c) => c.status === 'WARNING').length,
      ok: run.status === 0 && failed.length === 0,
      ...(failed.length > 0 ? { failures: failed.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`) } : {}),
    };
    if (!row.ok && failed.length === 0) row.failures = [`the suite exited ${run.status}: ${(run.stdout + run.stderr).split('\n').filter((l) => /error|timed out/i.test(l)).join(' ').slice(0, 300)}`];
    rows.push(row);
    process.stdout.write(`${row.ok ? 'PASS' : 'FAIL'} ${scenario} (${row.passed} passed, ${row.failed} failed, ${row.warnings} warnings)\n`);
    for (const f of row.failures ?? []) process.stdout.write(`     ${f}\n`);
  }
  const passed = rows.filter((r) => r.ok).length;
  failedAny ||= passed < rows.length;
  if (only) continue;
  const dir = join(root, 'conformance');
  mkdirSync(dir, { recursive: true });
  const summary = { suite: `${pkg.name} ${pkg.version}`, spec, node: process.version, date: new Date().toISOString().slice(0, 10), passed, total: rows.length, scenarios: rows };
  writeFileSync(join(dir, `client-${spec}.json`), `${JSON.stringify(summary, null, 2)}\n`);
  const lines = [
    `# Client conformance, spec ${spec}`,
    '',
    `${summary.suite}, Node ${process.version}, ${summary.date}: **${passed}/${rows.length} scenarios pass**.`,
    '',
    '| scenario | result | checks passed | failed | warnings |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.scenario} | ${r.ok ? 'pass' : 'FAIL'} | ${r.passed} | ${r.failed} | ${r.warnings} |`),
    '',
  ];
  writeFileSync(join(dir, `client-${spec}.md`), lines.join('\n'));
  process.stdout.write(`${spec}: ${passed}/${rows.length} scenarios pass\n`);
}
process.exitCode = failedAny ? 1 : 0;

/** Every check the scenario recorded (its checks.json, wherever the suite put it under `dir`). */
function readChecks(dir) {
  const found = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name === 'checks.json') found.push(...JSON.parse(readFileSync(path, 'utf8')));
    }
  };
  walk(dir);
  return found;
}
