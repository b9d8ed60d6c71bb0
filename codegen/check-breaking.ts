/**
 * The breaking-change gate (`make check-breaking`): the current contract against the released
 * one (openapi/released/v1.json), compared by api-smart-diff operation by operation (references
 * resolved, so each change is judged where it is used: in a request, a response or a parameter).
 *
 * It fails when a change it classifies as breaking is not accepted in docs/api-changes.md under
 * the current `info.version`, in the "Breaking" list, as `<add|remove|replace|rename> <pattern>`
 * followed by the reason (the pattern is a JSON Pointer in which `*` stands for one segment and
 * `**` for any number); when an accepted pattern matches nothing (a stale entry); and when the
 * contract changed but `info.version` did not move past the released one, or has no entry.
 *
 * `make release-contract` (`--release`) makes the current contract the released one, once it
 * passes.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiCompare } from 'api-smart-diff';

type Doc = { info: { version: string; [key: string]: unknown }; paths: object; [key: string]: unknown };
export type Change = { action: string; type: string; pointer: string; description: string };
export type Accepted = { action: string; pattern: string; reason: string };

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** Every change between the two contracts' operations, with the JSON Pointer of where it is. */
export function changes(released: Doc, current: Doc): Change[] {
  const { diffs } = apiCompare(released, current);
  return diffs
    .filter((d) => d.path[0] === 'paths' && d.type !== 'annotation' && d.type !== 'unclassified')
    .map((d) => ({
      action: d.action,
      type: d.type,
      pointer: `/${d.path.map((s) => escapePointer(String(s))).join('/')}`,
      description: d.description ?? '',
    }));
}

/** The "Breaking" entries of a version's section of the changelog. */
export function acceptedIn(changelog: string, version: string): { found: boolean; accepted: Accepted[] } {
  const sections = changelog.split(/^## /m).slice(1);
  const section = sections.find((s) => s.startsWith(`${version} `) || s.startsWith(`${version}\n`));
  if (!section) return { found: false, accepted: [] };
  const breaking = section.split(/^### /m).find((s) => /^Breaking/.test(s)) ?? '';
  const accepted = [...breaking.matchAll(/^- `(add|remove|replace|rename) ([^`]+)`\s*[—–-]\s*(.+)$/gm)].map((m) => ({
    action: m[1]!,
    pattern: m[2]!,
    reason: m[3]!.trim(),
  }));
  return { found: true, accepted };
}

function patternRegExp(pattern: string): RegExp {
  const segments = pattern.replace(/^\//, '').split('/');
  const body = segments
    .map((seg) =>
      seg === '**' ? '(?:/[^/]+)*' : seg === '*' ? '/[^/]+' : `/${seg.replace(/[.+?^${}()|[\]\\]/g, '\\$&')}`,
    )
    .join('');
  return new RegExp(`^${body}$`);
}

const newer = (a: string, b: string) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if (x![i] !== y![i]) return (x![i] ?? 0) > (y![i] ?? 0);
  return false;
};

/** What stops the current contract from passing the gate (empty when it passes). */
export function gate(released: Doc, current: Doc, changelog: string): string[] {
  const all = changes(released, current);
  if (all.length === 0) return [];
  const version = current.info.version;
  const problems: string[] = [];
  if (!newer(version, released.info.version))
    problems.push(
      `the contract changed but info.version is still ${version} (released: ${released.info.version}): move it on, by semver`,
    );
  const { found, accepted } = acceptedIn(changelog, version);
  if (!found) problems.push(`docs/api-changes.md has no section "## ${version} — <date>" for this contract`);
  const used = new Set<Accepted>();
  for (const change of all.filter((c) => c.type === 'breaking')) {
    const match = accepted.find((a) => a.action === change.action && patternRegExp(a.pattern).test(change.pointer));
    if (match) used.add(match);
    else
      problems.push(
        `breaking, not accepted in the changelog: ${change.action} ${change.pointer} (${change.description || 'no description'})`,
      );
  }
  for (const a of accepted)
    if (!used.has(a))
      problems.push(`the changelog accepts \`${a.action} ${a.pattern}\`, which matches no breaking change: remove it`);
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(fileURLToPath(import.meta.url), '../..');
  const releasedFile = resolve(root, 'openapi/released/v1.json');
  const currentFile = resolve(root, 'codegen/generated/openapi.json');
  const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Doc;
  const problems = gate(
    read(releasedFile),
    read(currentFile),
    readFileSync(resolve(root, 'docs/api-changes.md'), 'utf8'),
  );
  if (problems.length) {
    process.stderr.write(`check-breaking: the contract cannot ship as it is:\n  ${problems.join('\n  ')}\n`);
    process.exit(1);
  }
  if (process.argv.includes('--release')) {
    copyFileSync(currentFile, releasedFile);
    process.stdout.write(`released contract ${read(currentFile).info.version} -> openapi/released/v1.json\n`);
  } else {
    process.stdout.write('check-breaking: every change is compatible or accepted in docs/api-changes.md\n');
  }
}
