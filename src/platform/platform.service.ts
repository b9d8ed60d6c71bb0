/**
 * Public facts about the platform. The scope list is read from the contract itself (the
 * x-scopes table and each operation's x-required-scope), never kept by hand.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Limits, ScopeList, Stats, TermCountList, Versions } from '../../codegen/generated/api/types.gen.js';
import { basePath, listOperations, type OpenApiDocument } from '../http/contract.js';
import { MAX_KEY_DAYS, MAX_ACTIVE_KEYS } from '../keys/keys.service.js';
import { MAX_COMMENT_DEPTH } from '../comments/comment.entity.js';
import { REQUEST_BODY_BYTES, TAGS_PER_ITEM } from '../http/limits.js';
import { MCP_PROTOCOL_VERSIONS } from '../mcp/versions.js';
import type { RateLimits } from '../http/rate-limit.js';

export function scopeList(doc: OpenApiDocument): ScopeList {
  const base = basePath(doc);
  const ops = listOperations(doc);
  return {
    items: doc['x-scopes'].map((scope) => ({
      id: scope.id,
      label: scope.label,
      description: scope.description,
      routes: scope.opens,
      operations: ops
        .filter((op) => op.access.kind === 'scope' && op.access.scope === scope.id)
        .map((op) => ({
          operationId: op.operationId,
          method: op.method.toUpperCase(),
          path: base + op.path,
          summary: String(doc.paths[op.path]![op.method]!.summary ?? ''),
        })),
    })),
  };
}

/** The `limit` parameter every list takes: its default and its maximum page size. */
export function pageSize(doc: OpenApiDocument): { default: number; max: number } {
  const limit = (doc.components as { parameters: Record<string, { schema: { default: number; maximum: number } }> })
    .parameters.Limit!.schema;
  return { default: limit.default, max: limit.maximum };
}

export function limits(doc: OpenApiDocument, uploadBytes: number, rateLimit: RateLimits): Limits {
  return {
    rateLimit: {
      requestsPerMinutePerKey: rateLimit.requestsPerMinutePerKey,
      requestsPerMinutePerUser: rateLimit.requestsPerMinutePerUser,
      failedAuthPerMinutePerAddress: rateLimit.failedAuthPerMinutePerAddress,
    },
    pageSize: pageSize(doc),
    requestBodyBytes: REQUEST_BODY_BYTES,
    uploadBytes,
    keyLifetimeDays: MAX_KEY_DAYS,
    activeKeysPerUser: MAX_ACTIVE_KEYS,
    commentDepth: MAX_COMMENT_DEPTH,
    tagsPerItem: TAGS_PER_ITEM,
  };
}

export function versions(doc: OpenApiDocument): Versions {
  return {
    apiVersion: String((doc.info as { version: string }).version),
    mcpProtocolVersions: [...MCP_PROTOCOL_VERSIONS],
  };
}

/** Tags of visible posts (not hidden, not on a private project) and of public projects: the `top` most used. */
export async function popularTags(em: EntityManager, top: number): Promise<TermCountList> {
  const countedAt = new Date().toISOString();
  const rows = await em.execute<{ name: string; count: number }[]>(
    `select tag as name, count(*)::int as count from (
       select unnest(p.tags) as tag from posts p left join projects pr on pr.id = p.project_id
        where p.hidden_at is null and (p.project_id is null or pr.visibility = 'public')
       union all
       select unnest(tags) from projects where visibility = 'public'
     ) t group by tag order by count desc, tag asc limit ?`,
    [top],
  );
  return { items: rows.map((r) => ({ name: r.name, count: Number(r.count) })), countedAt };
}

/** Skills people list and public projects look for: the `top` most used. */
export async function popularSkills(em: EntityManager, top: number): Promise<TermCountList> {
  const countedAt = new Date().toISOString();
  const rows = await em.execute<{ name: string; count: number }[]>(
    `select skill as name, count(*)::int as count from (
       select unnest(skills) as skill from users
       union all
       select unnest(wanted_skills) from projects where visibility = 'public'
     ) s group by skill order by count desc, skill asc limit ?`,
    [top],
  );
  return { items: rows.map((r) => ({ name: r.name, count: Number(r.count) })), countedAt };
}

export async function stats(em: EntityManager): Promise<Stats> {
  const countedAt = new Date().toISOString();
  const [row] = await em.execute<Record<Exclude<keyof Stats, 'countedAt'>, number>[]>(
    `with visible_posts as (
       select p.id, p.kind from posts p left join projects pr on pr.id = p.project_id
        where p.hidden_at is null and (p.project_id is null or pr.visibility = 'public')
     )
     select
       (select count(*) from users)::int as users,
       (select count(*) from projects where visibility = 'public')::int as projects,
       (select count(*) from milestones m join projects pr on pr.id = m.project_id where pr.visibility = 'public')::int as milestones,
       (select count(*) from visible_posts)::int as posts,
       (select count(*) from visible_posts where kind = 'build_log')::int as "buildLogs",
       (select count(*) from comments c join visible_posts v on v.id = c.post_id
         where c.deleted_at is null and c.hidden_at is null)::int as comments`,
  );
  return {
    users: Number(row!.users),
    projects: Number(row!.projects),
    milestones: Number(row!.milestones),
    posts: Number(row!.posts),
    buildLogs: Number(row!.buildLogs),
    comments: Number(row!.comments),
    countedAt,
  };
}
