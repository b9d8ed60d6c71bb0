import * as z from 'zod';
import { zId, zPost, zPostCreate, zPostSummary } from '../../codegen/generated/api/zod.gen.js';
import { defineTool } from '../mcp/kit/tool.js';
import { detailInput, pageInput, projectIdInput } from '../mcp/kit/inputs.js';
import { listed, listOutput, plural, unmatched } from '../mcp/kit/answers.js';
import { cursorAfterId } from '../kernel/cursor.js';
import { buildLogList, createPost, listBuildLogs } from './posts.service.js';
import { PAGE_SIZE, pageLimit } from '../kernel/contract.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Post, PostSummary } from '../../codegen/generated/api/types.gen.js';
import type { Page } from '../kernel/cursor.js';
import type { Author, WrittenBy } from '../mcp/kit/authorship.js';
import { membersAmong } from '../projects/projects.service.js';

const SUMMARY = ['id', 'title', 'createdAt'] as const;
/** A summary's fields: what identifies a build log, and its excerpt (the REST list's `view=summary`). */
const SUMMED_UP = [...SUMMARY, 'excerpt'] as const;
/** The `since` argument as the service takes it. */
const sinceOf = (since: string | undefined) => (since === undefined ? undefined : new Date(since));

/**
 * Whose words each build log is: the caller's, the owner's, a member's, or someone's no longer in
 * the project (a member removed since), by its author; one query for the authors who are neither
 * the caller nor the owner.
 */
async function buildLogAuthors(
  em: EntityManager,
  projectId: string,
  posts: readonly Pick<Post, 'id' | 'author'>[],
  callerId: string,
  ownerId: string,
): Promise<WrittenBy> {
  const others = [...new Set(posts.map((p) => p.author.id).filter((id) => id !== callerId && id !== ownerId))];
  const members = await membersAmong(em, projectId, others);
  const authors = new Map<unknown, Author>(
    posts.map((p) => {
      const { id, username } = p.author;
      const by = id === callerId ? 'you' : id === ownerId ? 'owner' : members.has(id) ? 'member' : 'outside';
      return [p.id, by === 'you' ? { by } : { by, username }];
    }),
  );
  return (item) => authors.get(item.id) ?? { by: 'outside' };
}

export const postsTools = [
  defineTool({
    name: 'list_build_logs',
    operation: 'listBuildLogs',
    title: "List a project's build logs",
    description:
      `The build logs posted for a project, newest first, ${PAGE_SIZE.default} at a time unless limit says otherwise; since ` +
      'keeps the recent ones. Long bodies are shortened unless detail is "full"; "summary" gives an excerpt.',
    input: z
      .object({
        ...projectIdInput,
        since: z.iso
          .datetime({ offset: true })
          .or(z.iso.date())
          .optional()
          .describe('Only build logs posted at or after this time (YYYY-MM-DD or an ISO 8601 date-time).'),
        postIds: z
          .array(zId)
          .min(1)
          .max(100)
          .optional()
          .describe('Only these build logs (ids from an earlier answer), e.g. to read one in full with detail "full".'),
        ...pageInput,
        ...detailInput(SUMMED_UP),
      })
      .strict(),
    output: listOutput(zPost.extend({ excerpt: zPostSummary.shape.excerpt }), SUMMARY),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    run: async (args, { em, actor, attribute }) => {
      let owner = '';
      const detail = args.detail ?? 'standard';
      const page = await listBuildLogs(
        em,
        actor,
        args.projectId,
        {
          limit: pageLimit(args.limit),
          cursor: args.cursor,
          since: sinceOf(args.since),
          ids: args.postIds,
          view: detail === 'summary' ? ('summary' as const) : ('full' as const),
        },
        (access) => {
          owner = access.owner.id;
        },
      );
      if (attribute) attribute(await buildLogAuthors(em, args.projectId, page.items, actor.userId, owner));
      return detail === 'summary'
        ? listed(page as Page<PostSummary>, detail, 'list_build_logs', SUMMED_UP, [])
        : listed(page as Page<Post>, detail, 'list_build_logs', SUMMARY, ['body']);
    },
    headline: (page, args) =>
      `${plural(page.items.length, 'build log')}${args.since ? ` since ${args.since}` : ''}, newest first${unmatched(args.cursor ? undefined : args.postIds, page, args.since !== undefined)}`,
    texts: ['body'],
    cursorAfter: async (kept, _page, args) =>
      cursorAfterId(
        kept.at(-1) as { id: string },
        buildLogList(args.projectId, { since: sinceOf(args.since), ids: args.postIds }),
      ),
    wholeAt: { operation: 'getPost', path: (p) => `/posts/${p.id}` },
  }),
  defineTool({
    name: 'create_build_log',
    operation: 'createPost',
    title: 'Post a build log',
    description:
      'Publishes a build log (a markdown post about progress) on a project you own or are a member of. It is public wherever the project is. With health it is also a status update; name the milestones it advanced and link its commits.',
    input: z
      .object({
        ...projectIdInput,
        title: zPostCreate.shape.title.describe('The headline: one line, 1-200 characters.'),
        body: zPostCreate.shape.body.describe('The build log itself, markdown.'),
        tags: zPostCreate.shape.tags.describe('Up to 10 tags, e.g. ["release", "backend"]; kept lowercase, each once.'),
        health: zPostCreate.shape.health.describe(
          "How the project is going; makes this a status update that sets the project's health.",
        ),
        milestoneIds: zPostCreate.shape.milestoneIds.describe(
          'Milestones this work moved forward (ids from get_roadmap).',
        ),
        links: zPostCreate.shape.links.describe('Commits, pull requests or releases it links to.'),
      })
      .strict(),
    output: zPost,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    creates: {
      request: ({ projectId, ...post }) => ({ params: {}, body: { kind: 'build_log', projectId, ...post } }),
      location: (p) => `/posts/${p.id}`,
    },
    run: ({ projectId, ...post }, { em, actor }) => createPost(em, actor, { kind: 'build_log', projectId, ...post }),
    headline: (p) =>
      `Posted the build log "${p.title}"${p.health ? `, health ${p.health}` : ''}${p.milestoneIds.length ? `, moving ${plural(p.milestoneIds.length, 'milestone')} forward` : ''} — id ${p.id}.`,
    texts: ['body'],
    wholeAt: { operation: 'getPost', path: (p) => `/posts/${p.id}` },
  }),
];
