/**
 * What an MCP tool's refusal says to the agent, besides the problem's own title and detail: the
 * arguments refused (each once, with what to send instead), the next step for this caller by the
 * problem's code, tools named there that this key cannot call, REST's words for the idempotency
 * record in the tool's, and what a retry does when the database is away. ./run-tool.ts puts them
 * together; hints key on codes, never on a message.
 */
import type * as z from 'zod';
import type { ProblemCode, ProblemError } from '../kernel/problem.js';
import type { BoundTool } from './kit/tool.js';
import { ARGUMENT_HINTS } from './kit/inputs.js';
import { BY_NAME } from './catalogue.js';

/** How long to wait before retrying when the database cannot be reached: REST's Retry-After. */
export const RETRY_AFTER_S = 5;

/**
 * The refused arguments, each said once: zod goes on checking a field after its type is wrong (a
 * string for a list is also "too big" for the list's length), and two rules of one field may
 * share a message. A string sent for a list says what to send instead.
 */
export const issues = (error: z.ZodError, args: unknown, input: z.ZodObject): string => {
  const mistyped = new Set(error.issues.filter((i) => i.code === 'invalid_type').map((i) => i.path.join('.')));
  const said = new Set<string>();
  const lines: string[] = [];
  for (const issue of error.issues) {
    const at = issue.path.join('.');
    if (mistyped.has(at) && issue.code !== 'invalid_type') continue;
    const line = at ? `${issue.message} at ${at}` : issue.message;
    if (said.has(line)) continue;
    said.add(line);
    lines.push(`${line}${asList(issue, args, input)}`);
  }
  return lines.join('; ');
};
/**
 * For one string where a list is expected: the list to send, e.g. `["planned"]`, when that list
 * is one the argument takes; else only that it is a list.
 */
function asList(issue: z.ZodError['issues'][number], args: unknown, input: z.ZodObject): string {
  if (issue.code !== 'invalid_type' || issue.expected !== 'array' || issue.path.length !== 1) return '';
  if (typeof args !== 'object' || args === null) return '';
  const field = String(issue.path[0]);
  const value = (args as Record<string, unknown>)[field];
  if (typeof value !== 'string') return '';
  const list = [value];
  return input.shape[field]?.safeParse(list).success ? ` (send a list: ${JSON.stringify(list)})` : ' (send a list)';
}
/** What to send instead, for each refused argument that has a hint (./kit/inputs.ts). */
export const hints = (error: z.ZodError): string => {
  const fields = new Set(error.issues.map((i) => String(i.path[0] ?? '')));
  return [...fields].map((f) => (ARGUMENT_HINTS[f] ? ` ${ARGUMENT_HINTS[f]}` : '')).join('');
};

const YOUR_PROJECTS =
  'list_my_projects gives the ids of the projects you own, and with role "member" those you were added to.';
/** What to do after a refusal, by its code (src/kernel/problem.ts): what is true for this caller. */
const NEXT_STEP: Partial<Record<ProblemCode, string>> = {
  'unknown-project': ` No project you can see has that id. ${YOUR_PROJECTS}`,
  'member-not-owner':
    " You are a member of this project: members post build logs (create_build_log); only the project's owner edits its roadmap.",
  'stranger-not-owner': ` You are neither the owner nor a member of this project, so you cannot change it. ${YOUR_PROJECTS}`,
  'not-a-contributor': ` You are neither the owner nor a member of this project. ${YOUR_PROJECTS}`,
};
/** What to do after a refusal: by its code, or for a 404 of a tool whose path names more than the project, the tool's own. */
export const nextStep = (tool: BoundTool, err: ProblemError): string =>
  (err.reason && NEXT_STEP[err.reason]) || (err.code === 'not-found' && tool.notFound ? ` ${tool.notFound}` : '');

/**
 * A refusal of the idempotency record as an agent sent it: the argument `idempotencyKey`, where
 * REST's texts name the header. Keyed on the code, as every hint is.
 */
const IDEMPOTENCY_CODES: ReadonlySet<string> = new Set([
  'idempotency-key-reused',
  'idempotency-in-progress',
  'idempotency-resource-gone',
]);
export const asToolWords = (err: ProblemError, text: string) =>
  IDEMPOTENCY_CODES.has(err.code) ? text.replaceAll('Idempotency-Key', 'idempotencyKey') : text;

let toolNames: { name: string; scope: string; named: RegExp }[] | undefined;
/**
 * The tools a text tells the agent to call that this key cannot call, and the scope each needs:
 * an error's next step is written for a key that has them ("list_my_projects gives the ids").
 * Only the server's own words are read: a refused argument's name is the caller's.
 */
export function outOfReach(text: string, scopes: readonly string[]): string {
  toolNames ??= [...BY_NAME].map(([name, tool]) => ({ name, scope: tool.scope, named: new RegExp(`\\b${name}\\b`) }));
  const needed = new Map<string, string[]>();
  for (const { name, scope, named } of toolNames) {
    if (scopes.includes(scope) || !named.test(text)) continue;
    needed.set(scope, [...(needed.get(scope) ?? []), name]);
  }
  return [...needed]
    .map(
      ([scope, names]) =>
        ` This key cannot call ${names.join(' or ')}: ${names.length > 1 ? 'they need' : 'it needs'} the '${scope}' scope.`,
    )
    .join('');
}

/**
 * The database went away during the call (REST answers 503 with Retry-After): say so, when to try
 * again, and what a retry does for this tool.
 */
export function unavailableText(tool: BoundTool): string {
  const retry = tool.annotations.readOnlyHint
    ? 'Retry the same call then.'
    : tool.creates
      ? 'Retry the same call then, with the same idempotencyKey: the create happens at most once, and if it was made before the outage the retry returns it instead of making a second one. Without an idempotencyKey, list first to check whether it was made.'
      : tool.operation.startsWith('delete')
        ? 'Retry the same call then: it is safe to repeat (if the delete was done before the outage, the retry answers that the milestone is not found).'
        : 'Retry the same call then: it sets the same values again, so repeating it is safe.';
  return `Service unavailable: the database cannot be reached right now, so ${tool.name} may not have run. Wait about ${RETRY_AFTER_S} seconds. ${retry}`;
}

/** Said after the headline of a create answered from its idempotency record (REST: `Idempotent-Replayed: true`). */
export const REPLAYED =
  'Replayed: an earlier call with this idempotencyKey made it, and this is that answer; nothing new was created.';
/** Said after a refusal answered from the idempotency record: a corrected call needs a key of its own. */
export const REPLAYED_REFUSAL =
  'Replayed: an earlier call with this idempotencyKey was refused so, and this is that answer. Send the corrected call with a new idempotencyKey.';
