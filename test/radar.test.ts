import { beforeAll, describe, expect, it } from 'vitest';
import { userWithKey, linkProvenGithub, uniqueName, type TestUser, useServer } from './harness.js';
import * as api from '../codegen/generated/api/sdk.gen.js';
import type * as types from '../codegen/generated/api/types.gen.js';
import { User } from '../src/users/user.entity.js';
import { Job } from '../src/jobs/job.entity.js';
import { GithubRepo } from '../src/github/github.entity.js';
import { scoreOpportunity } from '../src/radar/radar.score.js';

const { t } = useServer();
let me: TestUser;
let other: TestUser;
/** Terms nobody else in a shared test database uses. */
const term = (name: string) => `${name}${uniqueName('').replace(/-/g, '')}`;
let ts: string, pg: string, rust: string, java: string, cobol: string;

beforeAll(async () => {
  [me, other] = [await userWithKey(t), await userWithKey(t)];
  [ts, pg, rust, java, cobol] = [term('ts'), term('pg'), term('rust'), term('java'), term('cobol')];
  const em = t.db.orm.em.fork();
  await em.nativeUpdate(User, { id: me.user.id }, { skills: [ts, pg] });
  const account = await linkProvenGithub(t, me.user.id, 'radar-me');
  em.create(GithubRepo, {
    account,
    name: 'a',
    fullName: 'radar-me/a',
    htmlUrl: 'https://github.com/radar-me/a',
    stars: 0,
    forks: 0,
    fork: false,
    archived: false,
    languages: { [rust]: 750, [ts]: 250 },
    weeklyCommits: [],
  });
  await em.flush();
});

const job = async (who: TestUser, skills: string[], extra: Partial<types.JobCreate> = {}) =>
  (
    await api.createJob({
      client: who.client,
      body: {
        title: skills.join('+'),
        company: 'c',
        description: 'd',
        remotePolicy: 'remote',
        employmentType: 'contract',
        applyUrl: 'https://jobs.example/x',
        skills,
        ...extra,
      },
    })
  ).data!;
const project = async (who: TestUser, wantedSkills: string[], extra: Partial<types.ProjectCreate> = {}) =>
  (
    await api.createProject({
      client: who.client,
      body: { name: uniqueName('radar'), lookingForCollaborators: true, wantedSkills, ...extra },
    })
  ).data!;

describe('opportunity radar', () => {
  it('ranks matching jobs and projects for the caller, with reasons, and leaves out what must not show', async () => {
    const j1 = await job(other, [ts, pg]);
    const j2 = await job(other, [rust]);
    const j3 = await job(other, [ts, java]);
    await job(other, [cobol]); // no match
    const closed = await job(other, [ts]);
    await api.closeJob({ client: other.client, path: { jobId: closed.id } });
    const expired = await job(other, [ts]);
    await t.db.orm.em.fork().nativeUpdate(Job, { id: expired.id }, { expiresAt: new Date(Date.now() - 1000) });
    await job(me, [ts]); // my own
    const p1 = await project(other, [rust, ts]);
    await project(other, [ts], { visibility: 'private' });
    await project(other, [ts], { lookingForCollaborators: false });
    await project(me, [ts]); // my own
    const member = await project(other, [ts]);
    await api.addProjectMember({
      client: other.client,
      path: { projectId: member.id },
      body: { username: me.user.username },
    });

    const all = (await api.listRadar({ client: me.client, query: { limit: 100 } })).data!.items;
    expect(all.map((i) => i.id)).toEqual([j1.id, p1.id, j2.id, j3.id]);
    expect(all[0]).toMatchObject({
      type: 'job',
      score: 1,
      reasons: { matchedSkills: [ts, pg], matchedLanguages: [], signals: ['posted today', 'remote'] },
      path: `/api/v1/jobs/${j1.id}`,
    });
    expect(all[1]).toMatchObject({ type: 'project', reasons: { matchedSkills: [ts], matchedLanguages: [rust] } });
    expect(all[1]!.score).toBeCloseTo(0.85 * ((0.6 + 0.4 * 0.75 + 1) / 2) + 0.15, 3);
    expect(all[2]!.score).toBeCloseTo(0.85 * (0.6 + 0.4 * 0.75) + 0.15, 3);
    expect(all[3]!.score).toBeCloseTo(0.85 * 0.5 + 0.15, 3);
    for (const item of all) {
      expect(item.score).toBeGreaterThanOrEqual(0);
      expect(item.score).toBeLessThanOrEqual(1);
    }

    expect(
      (await api.listRadarJobs({ client: me.client, query: { limit: 100 } })).data!.items.map((i) => i.id),
    ).toEqual([j1.id, j2.id, j3.id]);
    expect(
      (await api.listRadarProjects({ client: me.client, query: { limit: 100 } })).data!.items.map((i) => i.id),
    ).toEqual([p1.id]);

    const first = (await api.listRadar({ client: me.client, query: { limit: 2 } })).data!;
    const second = (await api.listRadar({ client: me.client, query: { limit: 2, cursor: first.nextCursor! } })).data!;
    expect([...first.items, ...second.items].map((i) => i.id)).toEqual(all.map((i) => i.id));
    expect(second.nextCursor).toBeNull();

    // The same data gives the same order.
    expect((await api.listRadar({ client: me.client, query: { limit: 100 } })).data!.items).toEqual(all);
  });

  it('is empty, not an error, for someone with no skills and no GitHub', async () => {
    const fresh = await userWithKey(t);
    expect((await api.listRadar({ client: fresh.client })).data).toEqual({ items: [], nextCursor: null });
  });
});

describe('radar score', () => {
  const signals = { skills: new Set(['go']), languages: new Map([['rust', 0.5]]) };
  const now = new Date('2026-11-22T00:00:00Z');
  it('weighs skills over languages and fresh over old', () => {
    const fresh = scoreOpportunity(signals, { wanted: ['Go'], createdAt: now }, now);
    expect(fresh).toMatchObject({ score: 1, matchedSkills: ['go'], matchedLanguages: [] });
    const lang = scoreOpportunity(signals, { wanted: ['rust'], createdAt: now }, now);
    expect(lang.score).toBeCloseTo(0.85 * 0.8 + 0.15, 4);
    const old = scoreOpportunity(signals, { wanted: ['go'], createdAt: new Date('2026-08-24T00:00:00Z') }, now);
    expect(old.score).toBeCloseTo(0.85 + 0.15 * Math.exp(-3), 4);
    expect(scoreOpportunity(signals, { wanted: [], createdAt: now }, now).score).toBe(0.15);
  });
});
