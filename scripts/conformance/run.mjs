// `npm run conformance`: the official MCP conformance suite's client scenarios for each named
// requirement set (a spec revision, frozen at its release, each run at its own wire version),
// one scenario after another (the suite's own parallel mode overloads a small machine into
// time-outs), against scripts/conformance/client.mjs. Everything listens on localhost; nothing
// leaves the machine. Writes conformance/client-<revision>.json and .md, prints per set
// `N/M scored client scenarios passed`, and exits 1 when a scored scenario fails.
// `--scenario=<name>` runs just that one (under each named set) and writes nothing.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const suite = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const pkg = JSON.parse(readFileSync(join(root, 'node_modules/@modelcontextprotocol/conformance/package.json'), 'utf8'));
const hook = join(root, 'scripts/conformance/register-fs-glob.mjs');
const revisions = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const only = process.argv.find((a) => a.startsWith('--scenario='))?.slice('--scenario='.length);
const verbose = process.argv.includes('--verbose');
const conformance = (args, options = {}) =>
  spawnSync(process.execPath, ['--import', hook, suite, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000, ...options });

/** The client scenarios a requirement set scores, and those it runs without scoring (with why). */
function requirementSet(revision) {
  const listed = conformance(['list', '--client', '--requirements', revision]);
  if (listed.status !== 0) throw new Error(`conformance list --requirements ${revision} failed: ${listed.stderr}`);
  const text = listed.stdout;
  const clientBlock = /Client scenarios \(test against a client\):\n((?:\s+- \S+\n)+)/.exec(text);
  if (!clientBlock) throw new Error(`conformance list --requirements ${revision}: no client scenarios in ${JSON.stringify(text.slice(0, 300))}`);
  const scored = [...clientBlock[1].matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
  const unscored = [];
  const rest = text.slice(text.indexOf('never scored:'));
  let reason = '';
  for (const line of rest.split('\n')) {
    const heading = /^\s+([\w-]+) \(\d+\):/.exec(line);
    if (heading) reason = heading[1];
    const entry = /^\s+- (\S+) \[client\]/.exec(line);
    if (entry) unscored.push({ scenario: entry[1], reason });
  }
  return { scored, unscored };
}

function runScenario(scenario, revision) {
  const out = mkdtempSync(join(tmpdir(), 'lazy-mcp-conformance-out-'));
  const run = conformance([
    'client', '--command', `"${process.execPath}" scripts/conformance/client.mjs`,
    '--scenario', scenario, '--spec-version', revision, '--force', '-o', out,
  ]);
  const checks = readChecks(out);
  rmSync(out, { recursive: true, force: true });
  const failed = checks.filter((c) => c.status === 'FAILURE');
  const row = {
    scenario,
    passed: checks.filter((c) => c.status === 'SUCCESS').length,
    failed: failed.length,
    warnings: checks.filter((c) => c.status === 'WARNING').length,
    // The requirement set's own verdict: a scenario passes when none of its checks fails.
    ok: checks.length > 0 && failed.length === 0,
    ...(failed.length > 0 ? { failures: failed.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`) } : {}),
  };
  if (checks.length === 0) row.failures = [`no checks recorded; the suite exited ${run.status}: ${(run.stdout + run.stderr).split('\n').filter((l) => /error|timed out/i.test(l)).join(' ').slice(0, 300)}`];
  if (verbose) process.stdout.write(run.stdout + run.stderr);
  return row;
}

let failedAny = false;
for (const revision of revisions.length > 0 ? revisions : ['2026-07-28', '2025-11-25']) {
  const set = requirementSet(revision);
  const plan = [...set.scored.map((scenario) => ({ scenario, reason: '' })), ...set.unscored]
    .filter((s) => !only || s.scenario === only);
  const rows = [];
  for (const { scenario, reason } of plan) {
    const row = { ...runScenario(scenario, revision), scored: reason === '', ...(reason ? { notScored: reason } : {}) };
    rows.push(row);
    const tag = row.scored ? '' : ` [not scored: ${reason}]`;
    process.stdout.write(`${row.ok ? 'PASS' : 'FAIL'} ${revision} ${scenario}${tag} (${row.passed} passed, ${row.failed} failed, ${row.warnings} warnings)\n`);
    for (const f of row.failures ?? []) process.stdout.write(`     ${f}\n`);
  }
  const scoredRows = rows.filter((r) => r.scored);
  const passed = scoredRows.filter((r) => r.ok).length;
  const extras = rows.filter((r) => !r.scored);
  failedAny ||= passed < scoredRows.length;
  process.stdout.write(`${revision}: ${passed}/${scoredRows.length} scored client scenarios passed` +
    (extras.length > 0 ? `; not scored: ${extras.filter((r) => r.ok).length}/${extras.length} passed` : '') + '\n');
  if (only) continue;
  const dir = join(root, 'conformance');
  mkdirSync(dir, { recursive: true });
  const checks = (list) => list.reduce((n, r) => n + r.passed + r.failed + r.warnings, 0);
  const summary = {
    suite: `${pkg.name} ${pkg.version}`, requirements: revision, node: process.version, date: new Date().toISOString().slice(0, 10),
    passed, total: scoredRows.length,
    checksPassed: scoredRows.reduce((n, r) => n + r.passed, 0), checks: checks(scoredRows),
    scenarios: rows,
  };
  writeFileSync(join(dir, `client-${revision}.json`), `${JSON.stringify(summary, null, 2)}\n`);
  const table = (list) => [
    '| scenario | result | checks passed | failed | warnings |',
    '|---|---|---|---|---|',
    ...list.map((r) => `| ${r.scenario}${r.scored ? '' : ` (${r.notScored})`} | ${r.ok ? 'pass' : 'FAIL'} | ${r.passed} | ${r.failed} | ${r.warnings} |`),
  ];
  const lines = [
    `# Client conformance, requirement set ${revision}`,
    '',
    `${summary.suite}, \`--requirements ${revision}\` (run at the ${revision} wire), Node ${process.version}, ${summary.date}:`,
    `**${passed}/${scoredRows.length} scored client scenarios passed** (${summary.checksPassed}/${summary.checks} checks).`,
    '',
    ...table(scoredRows),
    '',
    ...(extras.length > 0 ? ['Run and reported, never scored:', '', ...table(extras), ''] : []),
  ];
  writeFileSync(join(dir, `client-${revision}.md`), lines.join('\n'));
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
