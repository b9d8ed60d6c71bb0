import { presentableLine } from '../kernel/text.js';
import type { Project as ProjectDto, Member as MemberDto } from '../../codegen/generated/api/types.gen.js';
import type { Project, ProjectMember } from './project.entity.js';
import { presentUserSummary } from '../users/users.presenter.js';
import { isoString, type Timestamp } from '../db/reads.js';
import { STALE_AFTER_DAYS } from './pulse.js';

/** What the presenter reads: a Project entity with its owner, or a row of a typed read (its timestamps as text). */
export type ProjectFields = Pick<
  Project,
  | 'id'
  | 'name'
  | 'slug'
  | 'tagline'
  | 'description'
  | 'stage'
  | 'visibility'
  | 'tags'
  | 'links'
  | 'lookingForCollaborators'
  | 'wantedSkills'
  | 'health'
  | 'healthPostId'
> & {
  healthSetAt?: Timestamp | null;
  lastBuildLogAt?: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  owner: Pick<Project['owner'], 'id' | 'username' | 'displayName'>;
};

export function presentProject(project: ProjectFields): ProjectDto {
  return {
    id: project.id,
    name: presentableLine(project.name, project.slug),
    slug: project.slug,
    tagline: project.tagline,
    description: project.description,
    stage: project.stage,
    visibility: project.visibility,
    tags: project.tags,
    links: project.links.map((l) => ({ label: presentableLine(l.label, 'Link'), url: l.url })),
    lookingForCollaborators: project.lookingForCollaborators,
    wantedSkills: project.wantedSkills,
    owner: presentUserSummary(project.owner),
    ...pulseOf(project),
    createdAt: isoString(project.createdAt),
    updatedAt: isoString(project.updatedAt),
  };
}

/** The project's pulse as it reads now: its health, and how long since its newest build log. */
function pulseOf(project: ProjectFields, now = Date.now()) {
  const daysSince = (t: Timestamp) => Math.max(0, Math.floor((now - Date.parse(isoString(t))) / DAY));
  const last = project.lastBuildLogAt ?? null;
  const days = last ? daysSince(last) : null;
  return {
    health:
      project.health && project.healthSetAt && project.healthPostId
        ? { status: project.health, setAt: isoString(project.healthSetAt), buildLogId: project.healthPostId }
        : null,
    lastBuildLogAt: last ? isoString(last) : null,
    daysSinceLastBuildLog: days,
    stale: (days ?? daysSince(project.createdAt)) > STALE_AFTER_DAYS,
  };
}
const DAY = 86_400_000;

export function presentOwnerAsMember(project: ProjectFields): MemberDto {
  return { user: presentUserSummary(project.owner), role: 'owner', addedAt: isoString(project.createdAt) };
}

/** A member: a ProjectMember entity, or a row of a typed read (its timestamp as text). */
export function presentMember(member: {
  user: Pick<ProjectMember['user'], 'id' | 'username' | 'displayName'>;
  addedAt: Timestamp;
}): MemberDto {
  return { user: presentUserSummary(member.user), role: 'member', addedAt: isoString(member.addedAt) };
}
