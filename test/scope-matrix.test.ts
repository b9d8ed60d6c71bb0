/**
 * Generated from the contract: for every operation, a key holding every scope but the required
 * one gets 403, and a key holding only the required one gets past the scope check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, userWithKey, raw, keyFor, uniqueName, fileForm, type TestServer } from './harness.js';
import { uploadMedia } from '../src/media/media.service.js';
import { png } from './fixtures/images.js';

import { loadContract, listOperations, type Operation } from '../src/http/contract.js';
import { SCOPE_IDS } from '../src/keys/scopes.js';
import { createProject } from '../src/projects/projects.service.js';
import { addMember } from '../src/projects/members.service.js';
import { createMilestone } from '../src/milestones/milestones.service.js';
import { createPost } from '../src/posts/posts.service.js';
import { createComment } from '../src/comments/comments.service.js';
import { addReaction } from '../src/reactions/reactions.service.js';
import { createUser } from '../src/users/users.service.js';
import type { Actor } from '../src/http/actor.js';

const contract = loadContract();
const operations = listOperations(contract);
const scoped = operations.filter((op): op is Operation & { access: { kind: 'scope' } } => op.access.kind === 'scope');

let t: TestServer;
beforeAll(async () => {
  t = await startServer();
});
afterAll(async () => {
  await t?.close();
});

/** A fresh owner with a project (one milestone, one member, one build log) and a request for `op`. */
async function requestFor(op: Operation) {
  const owner = await userWithKey(t);
  const actor: Actor = { userId: owner.user.id, via: 'key', scopes: SCOPE_IDS };
  const em = t.db.orm.em.fork();
  const project = await createProject(em, actor, { name: uniqueName('p') });
  const milestone = await createMilestone(em.fork(), actor, project.id, { title: 'First' });
  const memberName = uniqueName('m');
  await createUser(em, { username: memberName, email: `${memberName}@example.test` });
  await addMember(em.fork(), actor, project.id, memberName);
  const post = await createPost(em.fork(), actor, { kind: 'build_log', projectId: project.id, title: 't', body: 'b' });
  const comment = await createComment(em.fork(), actor, post.id, { body: 'first' });
  await addReaction(em.fork(), actor, post.id, 'rocket');
  const media = await uploadMedia(em.fork(), t.storage, actor, png(2, 2));
  const newcomer = uniqueName('n');
  await createUser(em, { username: newcomer, email: `${newcomer}@example.test` });

  const params: Record<string, string> = { projectId: project.id, milestoneId: milestone.id, postId: post.id, commentId: comment.id, mediaId: media.id, username: memberName, kind: 'rocket' };
  const query: Record<string, string> = { search: '?q=first' };
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => params[name]!) + (query[op.operationId] ?? '');
  const item = contract.paths[op.path]![op.method] as { requestBody?: { content: Record<string, { example?: any }> } };
  let body = item.requestBody?.content['application/json']?.example;
  if (body) {
    body = structuredClone(body);
    if (op.operationId === 'createPost') body.projectId = project.id;
    if (op.operationId === 'addProjectMember') body.username = newcomer;
    if (op.operationId === 'reorderMilestones') body.milestoneIds = [milestone.id];
  }
  if (item.requestBody?.content['multipart/form-data']) body = fileForm(png(4, 4));
  return { owner, path, body };
}

describe('scope matrix (from the spec)', () => {
  it('covers every scoped operation of the contract', () => {
    expect(scoped.length).toBeGreaterThanOrEqual(26);
  });

  for (const op of scoped) {
    const required = op.access.scope;
    it(`${op.operationId} (${op.method.toUpperCase()} ${op.path}) needs exactly ${required}`, async () => {
      const { owner, path, body } = await requestFor(op);

      const others = SCOPE_IDS.filter((s) => s !== required);
      const denied = await raw(t, op.method.toUpperCase(), path, { token: await keyFor(t, owner.user.id, others), body });
      expect(denied.status).toBe(403);
      expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(denied.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="${required}"`);
      expect(denied.json).toMatchObject({ type: 'https://shipyard.dev/problems/insufficient-scope', requiredScope: required });
      expect([...denied.json.grantedScopes].sort()).toEqual([...others].sort());

      const allowed = await raw(t, op.method.toUpperCase(), path, { token: await keyFor(t, owner.user.id, [required]), body });
      expect(allowed.status, JSON.stringify(allowed.json)).toBeLessThan(300);
    });
  }

  it('serves the spec without a key', async () => {
    const json = await raw(t, 'GET', '/openapi.json');
    expect(json.status).toBe(200);
    expect(json.json.openapi).toBe('3.1.0');
    const yaml = await raw(t, 'GET', '/openapi.yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(yaml.text).toContain('openapi: 3.1.0');
  });
});

describe('fail closed', () => {
  it('refuses to boot on an operation with no scope tag', () => {
    const doc = structuredClone(contract);
    delete doc.paths['/projects']!.get!['x-required-scope'];
    expect(() => listOperations(doc)).toThrow(/listProjects/);
  });

  it('refuses to boot on an unknown scope', () => {
    const doc = structuredClone(contract);
    doc.paths['/projects']!.get!['x-required-scope'] = 'projects.admin';
    expect(() => listOperations(doc)).toThrow(/unguarded/);
  });
});
