import * as z from 'zod';
import { zProject, zProjectHealthInput } from '../../codegen/generated/api/zod.gen.js';
import { defineTool } from '../mcp/kit/tool.js';
import { listMyProjects, myProjectList } from './projects.service.js';
import { detailInput, pageInput } from '../mcp/kit/inputs.js';
import { listed, listOutput, plural } from '../mcp/kit/answers.js';
import { cursorAfterId } from '../kernel/cursor.js';
import type { Project } from '../../codegen/generated/api/types.gen.js';
import { STALE_AFTER_DAYS } from './pulse.js';
import { pageLimit } from '../kernel/contract.js';

const SUMMARY = ['id', 'name', 'slug'] as const;

/**
 * How the projects on the page are going, counted: health reported, and stale ones (no build log
 * for a while). Counts only: a project's name is its owner's words, which the headline never
 * carries (each project's own line has them, fenced when they are someone else's).
 */
function pulseCounts(projects: readonly Project[]): string {
  const counts = new Map<string, number>();
  for (const p of projects) {
    const health = p.health?.status.replace('_', ' ') ?? 'no health reported';
    counts.set(health, (counts.get(health) ?? 0) + 1);
  }
  const stale = projects.filter((p) => p.stale).length;
  const parts = [...counts].map(([health, n]) => `${n} ${health}`);
  if (stale) parts.push(`${stale} stale (no build log for over ${STALE_AFTER_DAYS} days)`);
  return parts.join(', ');
}

export const projectsTools = [
  defineTool({
    name: 'list_my_projects',
    operation: 'listProjects',
    title: 'List my projects',
    description:
      'The projects you own, newest first, with their ids. Start here: every other tool takes a projectId from ' +
      'this list. role "member" lists the projects you are a member of instead (you may post build logs there).',
    input: z
      .object({
        role: z
          .enum(['owner', 'member'])
          .optional()
          .describe('owner (the default): projects you own; member: projects you were added to as a member.'),
        health: zProjectHealthInput.optional().describe('Only projects whose latest health is this one.'),
        ...pageInput,
        ...detailInput(SUMMARY),
      })
      .strict(),
    output: listOutput(zProject, SUMMARY),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    run: async (args, { em, actor, attribute }) => {
      const role = args.role ?? 'owner';
      const page = await listMyProjects(em, actor, {
        limit: pageLimit(args.limit),
        cursor: args.cursor,
        role,
        health: args.health,
      });
      // A project's name and text are its owner's: the caller's own, or (role member) someone else's.
      const owners = new Map(page.items.map((p) => [p.id, p.owner.username]));
      attribute?.((item) =>
        role === 'owner' ? { by: 'you' } : { by: 'owner', username: owners.get(item.id as string) },
      );
      return listed(page, args.detail ?? 'standard', 'list_my_projects', SUMMARY, ['description']);
    },
    headline: (page, args) =>
      `${plural(page.items.length, 'project')} you ${args.role === 'member' ? 'are a member of' : 'own'}${args.health ? ` (${args.health})` : ''}, newest first${page.items.length && args.detail !== 'summary' ? ` (${pulseCounts(page.items as Project[])})` : ''}`,
    followUp: async (page, args, { em, actor }) => {
      if (page.items.length || args.cursor) return undefined;
      // Projects there may be; none whose health is the one asked for.
      if (args.health)
        return `None has "${args.health}" as its latest health: call list_my_projects without health to list them all.`;
      if ((args.role ?? 'owner') !== 'owner') return undefined;
      const member = await listMyProjects(em, actor, { limit: 1, role: 'member' });
      return member.items.length
        ? 'You are a member of other projects: call list_my_projects with role "member" to list them.'
        : 'Create a project first (POST /api/v1/projects, or on the web), or ask an owner to add you as a member.';
    },
    texts: ['description'],
    cursorAfter: async (kept, _page, args, { actor }) =>
      cursorAfterId(kept.at(-1) as { id: string }, myProjectList(actor, args.role ?? 'owner', args.health)),
  }),
];
