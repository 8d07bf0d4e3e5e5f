// Lists every import between the top-level folders of src/ that goes up or sideways: `node scripts/import-directions.mjs [src]`.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, dirname, resolve, relative } from 'node:path';
const root = resolve(process.argv[2] ?? 'src');
// One way down (ARCHITECTURE.md): util ← transport ← protocol ← model ← manager ← share ← gateway ← cli ← the entry points.
const rank = { util: 0, 'errors.ts': -1, 'errors.js': -1, transport: 1, protocol: 2, model: 3, manager: 4, share: 5, gateway: 6, cli: 7, 'index.ts': 6.5, 'index.js': 6.5, 'adapters.ts': 6.5, 'adapters.js': 6.5 };
const files = [];
const walk = (d) => { for (const f of readdirSync(d)) { const p = join(d, f); statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') && files.push(p); } };
walk(root);
const top = (p) => relative(root, p).split('/')[0];
let bad = 0;
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const re = /(^|\n)\s*(import|export)\s+(type\s+)?[^;]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g;
  for (const m of text.matchAll(re)) {
    const spec = m[4] ?? m[5];
    const kind = m[5] ? 'dynamic' : m[3] ? 'type' : 'static';
    const target = resolve(dirname(file), spec);
    const a = top(file), b = top(target);
    if (a === b) continue;
    const ra = rank[a], rb = rank[b];
    if (ra === undefined || rb === undefined) { console.log('?', a, b); continue; }
    const dir = rb > ra ? 'UP' : rb === ra ? 'SIDEWAYS' : null;
    if (dir) { bad++; console.log(`${dir.padEnd(8)} ${kind.padEnd(7)} ${relative(root, file)} -> ${relative(root, target)}`); }
  }
}
console.log(`${bad} imports up or sideways`);
