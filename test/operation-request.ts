/**
 * A realistic request for any operation of the contract: a fresh owner with a project (one
 * milestone, one member, one build log with a comment and a reaction, one image), the path
 * filled with their ids and the body taken from the operation's own example.
 */
import { userWithKey, uniqueName, linkProvenGithub, fileForm, type TestServer } from './harness.js';
import type { Operation, OpenApiDocument } from '../src/kernel/contract.js';
import { SCOPE_IDS } from '../src/kernel/scopes.js';
import { createProject } from '../src/projects/projects.service.js';
import { addMember } from '../src/projects/members.service.js';
import { createMilestone } from '../src/milestones/milestones.service.js';
import { createPost } from '../src/posts/posts.service.js';
import { createComment } from '../src/comments/comments.service.js';
import { addReaction } from '../src/reactions/reactions.service.js';
import { createUser } from '../src/users/users.service.js';
import { uploadMedia } from '../src/media/media.service.js';
import { createJob } from '../src/jobs/jobs.service.js';
import type { Actor } from '../src/kernel/actor.js';
import { png } from './fixtures/images.js';
import { createWebhook, pingWebhook } from '../src/webhooks/webhooks.service.js';
import { SecretBox } from '../src/webhooks/secrets.js';
import { randomBytes } from 'node:crypto';

export async function operationRequest(t: TestServer, contract: OpenApiDocument, op: Operation) {
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
  const job = await createJob(em.fork(), actor, {
    title: 'Engineer',
    company: 'Engines',
    description: 'Build',
    remotePolicy: 'remote',
    employmentType: 'contract',
    applyUrl: 'https://jobs.example/1',
  });
  const webhook = await createWebhook(
    em.fork(),
    actor,
    project.id,
    { url: 'http://127.0.0.1:9/hook', events: ['milestone.created'] },
    { box: new SecretBox(randomBytes(32)), urls: { allowLocal: true } },
  );
  const delivery = await pingWebhook(em.fork(), actor, project.id, webhook.id);
  await linkProvenGithub(t, owner.user.id, 'octocat');
  const newcomer = uniqueName('n');
  await createUser(em, { username: newcomer, email: `${newcomer}@example.test` });

  const params: Record<string, string> = {
    projectId: project.id,
    milestoneId: milestone.id,
    postId: post.id,
    commentId: comment.id,
    mediaId: media.id,
    jobId: job.id,
    webhookId: webhook.id,
    deliveryId: delivery.id,
    username: memberName,
    kind: 'rocket',
  };
  const query: Record<string, string> = { search: '?q=first' };
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => params[name]!) + (query[op.operationId] ?? '');
  const item = contract.paths[op.path]![op.method] as { requestBody?: { content: Record<string, { example?: any }> } };
  let body = item.requestBody?.content['application/json']?.example;
  if (body) {
    body = structuredClone(body);
    if (op.operationId === 'createPost') body.projectId = project.id;
    if (op.operationId === 'addProjectMember') body.username = newcomer;
    if (op.operationId === 'reorderMilestones') body.milestoneIds = [milestone.id];
    // A public address that needs no DNS (TEST-NET-3, never routed): the example's host does not resolve offline.
    if (typeof body.url === 'string' && op.path.includes('/webhooks')) body.url = 'https://203.0.113.10/hook';
  }
  if (item.requestBody?.content['multipart/form-data']) body = fileForm(png(4, 4));
  return { owner, path, body, params };
}
