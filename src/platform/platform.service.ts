/**
 * Public facts about the platform. The scope list is read from the contract itself (the
 * x-scopes table and each operation's x-required-scope), never kept by hand.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Limits, ScopeList, Stats, TermCountList, Versions } from '../../codegen/generated/api/types.gen.js';
import { basePath, listOperations, operationCosts, pageSize, type OpenApiDocument } from '../kernel/contract.js';
import { MAX_ACTIVE_KEYS } from '../keys/keys.service.js';
import { MAX_KEY_DAYS } from '../kernel/limits.js';
import { MAX_COMMENT_DEPTH } from '../comments/comment.entity.js';
import { IMAGE_PIXELS_MAX, REQUEST_BODY_BYTES, TAGS_PER_ITEM, type RateLimits } from '../kernel/limits.js';
import { MCP_PROTOCOL_VERSIONS } from '../kernel/versions.js';
import type { MediaLimits } from '../media/media.service.js';
import { platformCounts, skillCounts, tagCounts } from './platform.queries.js';

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

export function limits(
  doc: OpenApiDocument,
  media: MediaLimits,
  rateLimit: RateLimits,
  keyMaxDays = MAX_KEY_DAYS,
): Limits {
  return {
    rateLimit: {
      requestsPerMinutePerKey: rateLimit.requestsPerMinutePerKey,
      requestsPerMinutePerUser: rateLimit.requestsPerMinutePerUser,
      failedAuthPerMinutePerAddress: rateLimit.failedAuthPerMinutePerAddress,
    },
    requestCosts: { default: 1, operations: operationCosts(doc) },
    pageSize: pageSize(doc),
    requestBodyBytes: REQUEST_BODY_BYTES,
    uploadBytes: media.uploadBytes,
    imagePixels: IMAGE_PIXELS_MAX,
    storageBytesPerUser: media.quotaBytes,
    unattachedUploadHours: media.unattachedHours,
    keyLifetimeDays: keyMaxDays,
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

/** Tags of readable posts and of public projects: the `top` most used. */
export async function popularTags(em: EntityManager, top: number): Promise<TermCountList> {
  const countedAt = new Date().toISOString();
  return { items: await tagCounts(em, { top }), countedAt };
}

/** Skills people list and public projects look for: the `top` most used. */
export async function popularSkills(em: EntityManager, top: number): Promise<TermCountList> {
  const countedAt = new Date().toISOString();
  return { items: await skillCounts(em, { top }), countedAt };
}

export async function stats(em: EntityManager): Promise<Stats> {
  const countedAt = new Date().toISOString();
  const [counts] = await platformCounts(em, {});
  return { ...counts!, countedAt };
}
