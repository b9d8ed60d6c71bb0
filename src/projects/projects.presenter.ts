import { presentableLine } from '../kernel/text.js';
import type { Project as ProjectDto, Member as MemberDto } from '../../codegen/generated/api/types.gen.js';
import type { Project, ProjectMember } from './project.entity.js';
import { presentUserSummary } from '../users/users.presenter.js';
import { isoString, type Timestamp } from '../db/reads.js';
import { STALE_AFTER_DAYS } from './pulse.js';
import { daysAgo } from '../kernel/days.js';
import { publicPaths } from '../kernel/public-paths.js';

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

/** The project as the API shows it; `site` is the server's public address (the page and feed URLs). */
export function presentProject(project: ProjectFields, site: string): ProjectDto {
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
    ...presentPulse(project),
    // A private project has no public page or feed: handing out their addresses would name it.
    publicUrls: project.visibility === 'public' ? publicPaths(site).projectUrls(project.id) : null,
    createdAt: isoString(project.createdAt),
    updatedAt: isoString(project.updatedAt),
  };
}

/** The project's pulse as it reads now: its health, and how many days (UTC) since its newest build log. */
export function presentPulse(
  project: Pick<ProjectFields, 'health' | 'healthSetAt' | 'healthPostId' | 'lastBuildLogAt' | 'createdAt'>,
): Pick<ProjectDto, 'health' | 'lastBuildLogAt' | 'daysSinceLastBuildLog' | 'stale'> {
  const last = project.lastBuildLogAt ?? null;
  const days = last ? daysAgo(isoString(last)) : null;
  return {
    health:
      project.health && project.healthSetAt && project.healthPostId
        ? { status: project.health, setAt: isoString(project.healthSetAt), buildLogId: project.healthPostId }
        : null,
    lastBuildLogAt: last ? isoString(last) : null,
    daysSinceLastBuildLog: days,
    stale: (days ?? daysAgo(isoString(project.createdAt))) > STALE_AFTER_DAYS,
  };
}

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
