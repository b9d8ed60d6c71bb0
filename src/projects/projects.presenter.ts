import { presentableLine } from '../kernel/text.js';
import type { Project as ProjectDto, Member as MemberDto } from '../../codegen/generated/api/types.gen.js';
import type { Project, ProjectMember } from './project.entity.js';
import { presentUserSummary } from '../users/users.presenter.js';
import { isoString, type Timestamp } from '../db/reads.js';

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
> & { createdAt: Timestamp; updatedAt: Timestamp; owner: Pick<Project['owner'], 'id' | 'username' | 'displayName'> };

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
    createdAt: isoString(project.createdAt),
    updatedAt: isoString(project.updatedAt),
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
