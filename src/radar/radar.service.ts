/**
 * Opportunity radar: open jobs and projects looking for collaborators, ranked for the caller
 * from their skills and the languages of their synced GitHub repositories. Only opportunities
 * that match at least one signal are listed; the caller's own jobs and projects (and projects
 * they already belong to), closed or expired jobs and private projects never are.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RadarItem, RadarPage } from '../../codegen/generated/api/types.gen.js';
import type { Actor } from '../http/actor.js';
import { User } from '../users/user.entity.js';
import { Job } from '../jobs/job.entity.js';
import { Project } from '../projects/project.entity.js';
import { GithubAccount, GithubRepo } from '../github/github.entity.js';
import { languageShares } from '../github/github.service.js';
import { memberProjectIds } from '../projects/projects.service.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import { ageSignal, scoreOpportunity, type Signals } from './radar.score.js';

/** How many of the newest candidates of each kind are scored. */
const CANDIDATES = 500;

async function signalsFor(em: EntityManager, userId: string): Promise<Signals> {
  const user = await em.findOneOrFail(User, { id: userId }, { fields: ['skills'] });
  const account = await em.findOne(GithubAccount, { user: userId }, { fields: ['id'] });
  const repos = account ? await em.find(GithubRepo, { account: account.id }, { fields: ['fork', 'languages'] }) : [];
  return {
    skills: new Set(user.skills.map((s) => s.toLowerCase())),
    languages: new Map(languageShares(repos).map((l) => [l.language.toLowerCase(), l.share] as const)),
  };
}

type Scored = RadarItem & { createdAt: Date };

async function jobItems(em: EntityManager, actor: Actor, signals: Signals, terms: string[], now: Date): Promise<Scored[]> {
  const jobs = await em.find(Job, {
    status: 'open', expiresAt: { $gt: now }, poster: { $ne: actor.userId }, skills: { $overlap: terms },
  }, { orderBy: { id: 'desc' }, limit: CANDIDATES });
  return jobs.map((j) => {
    const m = scoreOpportunity(signals, { wanted: j.skills, createdAt: j.createdAt }, now);
    const signalsText = [ageSignal(m.ageDays), j.remotePolicy, ...(j.salaryMin !== null && j.salaryMin !== undefined ? ['salary stated'] : [])];
    return {
      type: 'job' as const, id: j.id, title: j.title, subtitle: j.company, score: m.score,
      reasons: { matchedSkills: m.matchedSkills, matchedLanguages: m.matchedLanguages, signals: signalsText },
      path: `/api/v1/jobs/${j.id}`, createdAt: j.createdAt,
    };
  });
}

async function projectItems(em: EntityManager, actor: Actor, signals: Signals, terms: string[], now: Date): Promise<Scored[]> {
  const mine = await memberProjectIds(em, actor.userId);
  const projects = await em.find(Project, {
    visibility: 'public', lookingForCollaborators: true, owner: { $ne: actor.userId }, wantedSkills: { $overlap: terms },
    ...(mine.length ? { id: { $nin: mine } } : {}),
  }, { orderBy: { id: 'desc' }, limit: CANDIDATES });
  return projects.map((p) => {
    const m = scoreOpportunity(signals, { wanted: p.wantedSkills, createdAt: p.createdAt }, now);
    return {
      type: 'project' as const, id: p.id, title: p.name, subtitle: p.tagline, score: m.score,
      reasons: { matchedSkills: m.matchedSkills, matchedLanguages: m.matchedLanguages, signals: [ageSignal(m.ageDays), `stage: ${p.stage}`] },
      path: `/api/v1/projects/${p.id}`, createdAt: p.createdAt,
    };
  });
}

const isOffset = (v: unknown): v is { o: number } => typeof v === 'object' && v !== null && Number.isInteger((v as { o?: unknown }).o) && (v as { o: number }).o > 0;

export async function radar(
  em: EntityManager, actor: Actor, kinds: ('job' | 'project')[], query: { limit: number; cursor?: string }, now = new Date(),
): Promise<RadarPage> {
  const offset = decodeCursor(query.cursor, isOffset)?.o ?? 0;
  const signals = await signalsFor(em, actor.userId);
  const terms = [...new Set([...signals.skills, ...signals.languages.keys()])];
  if (terms.length === 0) return { items: [], nextCursor: null };
  const items = [
    ...(kinds.includes('job') ? await jobItems(em, actor, signals, terms, now) : []),
    ...(kinds.includes('project') ? await projectItems(em, actor, signals, terms, now) : []),
  ];
  // Best first; ties by newest, then by id, so the order is the same for the same data.
  items.sort((a, b) => b.score - a.score || b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id));
  const page = items.slice(offset, offset + query.limit);
  return {
    items: page.map(({ createdAt: _createdAt, ...item }) => item),
    nextCursor: offset + query.limit < items.length ? encodeCursor({ o: offset + query.limit }) : null,
  };
}
