/**
 * Reads a V8 .cpuprofile (node --cpu-prof) and prints where the time went: self time by
 * package or source file, then the heaviest functions. `BENCH_PROFILE=1 make bench` runs it.
 * Usage: node --import tsx bench/profile-summary.ts FILE.cpuprofile [TOP=25]
 */
import { readFileSync } from 'node:fs';

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [TOP]');
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfMs = new Map<number, number>();
for (const [i, id] of profile.samples.entries())
  selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
const total = [...selfMs.values()].reduce((a, b) => a + b, 0);

/** node_modules/<pkg> (or @scope/pkg), a file of ours, node internals, or V8's own buckets. */
function owner(url: string, name: string): string {
  if (!url) return `(${name || 'anonymous'})`;
  const mod = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (mod) return mod[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const ours = /\/(src|codegen|bench)\/(.+)$/.exec(url);
  return ours ? `${ours[1]}/${ours[2]}` : url;
}

const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const byOwner = new Map<string, number>();
const byFunction = new Map<string, number>();
for (const [id, ms] of selfMs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  add(byOwner, owner(url, functionName), ms);
  add(byFunction, `${functionName || '(anonymous)'}  ${owner(url, functionName)}:${lineNumber + 1}`, ms);
}
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, ms] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${ms.toFixed(0).padStart(8)} ms ${((ms / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
  }
};
// Inclusive: the time each package or file was anywhere on the stack.
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
const inclusive = new Map<string, number>();
for (const [id, ms] of selfMs) {
  const seen = new Set<string>();
  for (let p: number | undefined = id; p !== undefined; p = parentOf.get(p)) {
    const { url, functionName } = byId.get(p)!.callFrame;
    if (url) seen.add(owner(url, functionName));
  }
  for (const o of seen) add(inclusive, o, ms);
}
console.log(`${file}: ${total.toFixed(0)} ms sampled`);
print('self time by package / file', byOwner);
print('inclusive time by package / file (on the stack)', inclusive);
print('self time by function', byFunction);

// Who calls the heaviest functions: their most expensive caller chains (5 frames up).
const parent = parentOf;
const label = (id: number) => {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  return `${functionName || '(anonymous)'}@${owner(url, functionName)}:${lineNumber + 1}`;
};
const chains = new Map<string, Map<string, number>>();
for (const [id, ms] of selfMs) {
  const key = label(id).replace(/@/, '  ');
  const up: string[] = [];
  for (let p = parent.get(id), i = 0; p !== undefined && i < 5; p = parent.get(p), i++) up.push(label(p));
  const m = chains.get(key) ?? new Map<string, number>();
  add(m, up.join(' ← '), ms);
  chains.set(key, m);
}
console.log('\ncallers of the heaviest functions');
for (const [k] of [...byFunction]
  .filter(([k]) => !k.startsWith('('))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Math.min(top, 12))) {
  const m = chains.get(`${k.replace(/:\d+$/, '').replace(/\s+$/, '')}:${k.split(':').pop()}`) ?? chains.get(k);
  if (!m) continue;
  console.log(`  ${k}`);
  for (const [chain, ms] of [...m].sort((a, b) => b[1] - a[1]).slice(0, 2))
    console.log(`    ${ms.toFixed(0).padStart(6)} ms ← ${chain}`);
}
