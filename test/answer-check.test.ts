import { Writable } from 'node:stream';
import type { Request } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedForValidation, loadContract } from '../src/kernel/contract.js';
import { notFound } from '../src/kernel/problem.js';
import { answerCheck, answerChecks, AnswerMismatch } from '../src/http/answer-check.js';
import { raw, startServer, userWithKey, type TestServer } from './harness.js';

const doc = closedForValidation(loadContract());
type Responses = Parameters<ReturnType<typeof answerChecks>>[1];
const operation = (path: string, method: string) =>
  (doc.paths[path] as Record<string, { operationId: string; responses: Responses }>)[method]!;
const getProject = operation('/projects/{projectId}', 'get');
const deleteJob = operation('/jobs/{jobId}', 'delete');
const problem = { ...notFound('There is no project 42.').toProblem('/api/v1/projects/42'), requestId: '0a1b2c3d' };

describe('the answers checked against the contract', () => {
  const mismatch = answerChecks(doc);
  const asGetProject = (status: number, body: unknown, type = 'application/problem+json; charset=utf-8') =>
    mismatch(getProject.operationId, getProject.responses, status, type, body);

  it('lets through an answer the contract declares, with a body of its schema', () => {
    expect(asGetProject(404, problem)).toBeUndefined();
  });

  it('names what does not match: a field the schema does not have, a wrong type, a missing field', () => {
    expect(asGetProject(404, { ...problem, stack: 'at …' })).toMatch(/must NOT have additional properties/);
    expect(asGetProject(404, { ...problem, status: '404' })).toMatch(/^\/status must be integer/);
    const { detail: _, ...withoutDetail } = problem;
    expect(asGetProject(404, withoutDetail)).toMatch(/must have required property 'detail'/);
  });

  it('refuses a status the operation does not declare, and a body where the contract has none', () => {
    expect(asGetProject(409, problem)).toBe(`the contract declares no 409 answer for ${getProject.operationId}`);
    expect(mismatch(deleteJob.operationId, deleteJob.responses, 204, 'application/json', { deleted: true })).toMatch(
      /has no body in the contract/,
    );
    expect(mismatch(deleteJob.operationId, deleteJob.responses, 204, 'application/json', undefined)).toBeUndefined();
    expect(asGetProject(404, undefined)).toMatch(/has a body in the contract, and none was given/);
  });

  it('checks the form of a format, as a server that wrote the value itself needs', () => {
    const id = '9e95924e-784f-4b69-acbf-41a12f5e707a';
    const site = 'http://localhost:8080';
    const project = {
      id,
      name: 'Roadmap',
      slug: 'roadmap',
      tagline: '',
      description: '',
      stage: 'building',
      visibility: 'public',
      tags: [],
      links: [],
      lookingForCollaborators: false,
      wantedSkills: [],
      owner: { id: '01a22c2f-8aa2-7eaa-a5e2-3920e50cfc59', username: 'ada', displayName: 'Ada' },
      health: null,
      lastBuildLogAt: null,
      daysSinceLastBuildLog: null,
      stale: false,
      publicUrls: {
        page: `${site}/p/${id}`,
        atomFeed: `${site}/api/v1/feeds/projects/${id}.atom`,
        jsonFeed: `${site}/api/v1/feeds/projects/${id}.json`,
      },
      createdAt: '2026-11-30T11:20:42.927Z',
      updatedAt: '2026-11-30T11:20:42.927Z',
    };
    const answer = (body: unknown) =>
      mismatch(getProject.operationId, getProject.responses, 200, 'application/json; charset=utf-8', body);
    expect(answer(project)).toBeUndefined();
    expect(answer({ ...project, id: 'not-a-uuid' })).toMatch(/^\/id must match format "uuid"/);
    expect(answer({ ...project, createdAt: '30/11/2026' })).toMatch(/^\/createdAt must match format "date-time"/);
    expect(answer({ ...project, publicUrls: { ...project.publicUrls, page: '/p/1' } })).toMatch(/format "uri"/);
  });
});

describe("the check of a request's answer", () => {
  const check = answerCheck(doc);
  // As the validator leaves a request it matched: its operation on req.openapi.
  const matched = { openapi: { schema: getProject } } as unknown as Request;

  it('passes an answer that matches, and throws what does not match as an AnswerMismatch', () => {
    expect(() => check(matched, 404, problem, 'application/problem+json')).not.toThrow();
    expect(() => check(matched, 404, { ...problem, x: 1 }, 'application/problem+json')).toThrow(AnswerMismatch);
    expect(() => check(matched, 404, { ...problem, x: 1 }, 'application/problem+json')).toThrow(
      /the answer does not match the contract: .*must NOT have additional properties/,
    );
  });

  it("reads the operation's answers from the contract it was given, whatever the request carries beside its id", () => {
    const rewritten = {
      openapi: { schema: { operationId: getProject.operationId, responses: {} } },
    } as unknown as Request;
    expect(() => check(rewritten, 404, problem, 'application/problem+json')).not.toThrow();
    expect(() => check(rewritten, 404, { ...problem, x: 1 }, 'application/problem+json')).toThrow(AnswerMismatch);
  });

  it('leaves alone a 5xx answer and a request no operation matched', () => {
    expect(() => check(matched, 503, { anything: true })).not.toThrow();
    expect(() => check({} as Request, 200, { anything: true })).not.toThrow();
  });
});

describe('an answer outside the contract, through the running service', () => {
  // The contract bent as a handler's drift would bend it: GET project's answer no longer has a
  // tagline (closed, so the one the handler sends is unknown), and it declares no 404.
  const bent = loadContract();
  const read = bent.paths['/projects/{projectId}']!.get as { responses: Record<string, unknown> };
  const project = structuredClone(
    (bent.components as { schemas: Record<string, { properties: object }> }).schemas.Project!,
  );
  delete (project.properties as Record<string, unknown>).tagline;
  read.responses['200'] = {
    description: 'The project, without its tagline.',
    content: { 'application/json': { schema: project } },
  };
  delete read.responses['404'];

  let t: TestServer;
  const logged: string[] = [];
  beforeAll(async () => {
    const logTo = new Writable({
      write(chunk, _encoding, done) {
        logged.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    t = await startServer({ contract: bent, logTo });
  });
  afterAll(async () => {
    await t?.close();
  });
  /** The service's 'unhandled error' line for a request id (written before the 500 is sent; waited for all the same). */
  const lineOf = async (requestId: string) => {
    for (let waited = 0; waited < 5000; waited += 20) {
      const line = logged
        .map((l) => JSON.parse(l))
        .find((l) => l.requestId === requestId && l.msg === 'unhandled error');
      if (line) return line;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no log line for request ${requestId}`);
  };

  it("answers 500 problem+json for a handler's answer the contract does not allow, and logs what did not match", async () => {
    const ada = await userWithKey(t, ['projects.read', 'projects.write']);
    const created = await raw(t, 'POST', '/projects', { token: ada.token, body: { name: 'Drift', tagline: 'kept' } });
    expect(created.status).toBe(201);
    const { id } = created.json as { id: string };

    const res = await raw(t, 'GET', `/projects/${id}`, { token: ada.token });
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = res.json as { code: string; requestId: string; detail: string };
    expect(problem.code).toBe('internal');
    expect(problem.detail).not.toMatch(/tagline/); // what did not match is for the log, not the client
    const line = await lineOf(problem.requestId);
    expect(line.error.type).toBe('AnswerMismatch');
    expect(line.error.message).toMatch(/does not match the contract: \/ must NOT have additional properties/);
  });

  it("answers 500 for a handler's refusal the operation does not declare, and logs the refusal beside it", async () => {
    const ada = await userWithKey(t, ['projects.read']);
    const res = await raw(t, 'GET', '/projects/9e95924e-784f-4b69-acbf-41a12f5e707a', { token: ada.token });
    expect(res.status).toBe(500);
    const problem = res.json as { code: string; requestId: string };
    expect(problem.code).toBe('internal');
    const line = await lineOf(problem.requestId);
    expect(line.error.message).toMatch(/the contract declares no 404 answer for getProject/);
    expect(line.refusal).toMatchObject({
      status: 404,
      slug: 'not-found',
      detail: expect.stringMatching(/^No project with id/),
    });
  });

  it('lets the answers that match through, beside them', async () => {
    const ada = await userWithKey(t, ['profile.read']);
    expect((await raw(t, 'GET', '/users/me', { token: ada.token })).status).toBe(200);
  });
});
