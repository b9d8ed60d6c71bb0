import { resourceGoneTrigger, searchChangedTrigger } from '../db/triggers.js';
import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, changeTimes } from '../db/columns.js';
import { TextArrayType } from '../db/text-array.js';
import { User } from '../users/user.entity.js';

const PROJECT_STAGES = ['idea', 'building', 'launched', 'paused'] as const;
const PROJECT_VISIBILITIES = ['public', 'private'] as const;
/** How a project is going, as a build log reports it (ProjectHealthInput in the contract). */
export const HEALTHS = ['on_track', 'at_risk', 'off_track'] as const;
type ProjectLinkValue = { label: string; url: string };

const ProjectSchema = defineEntity({
  name: 'Project',
  tableName: 'projects',
  properties: {
    id: uuidv7Key(),
    owner: () => p.manyToOne(User).deleteRule('cascade'),
    name: p.string().length(100),
    slug: p.string().length(64),
    tagline: p.string().length(140).default(''),
    description: p.text().default(''),
    stage: p.enum(PROJECT_STAGES).default('idea'),
    visibility: p.enum(PROJECT_VISIBILITIES).default('public'),
    tags: p.type(TextArrayType).default([]),
    links: p.json<ProjectLinkValue[]>().default([]),
    lookingForCollaborators: p.boolean().default(false),
    wantedSkills: p.type(TextArrayType).default([]),
    /**
     * The project's pulse, kept by the build-log writes (./pulse.ts): the latest
     * health a build log reported, when and by which, and when the newest build log was posted.
     */
    health: p.enum(HEALTHS).nullable(),
    healthSetAt: p.datetime().nullable(),
    healthPostId: p.uuid().nullable(),
    lastBuildLogAt: p.datetime().nullable(),
    /** Full-text search vector kept by PostgreSQL (migration ..._search); written as PostgreSQL prints it so the schema diff stays clean. */
    search: p
      .type('tsvector')
      .generated(
        `(((setweight(to_tsvector('english'::regconfig, (COALESCE(name, ''::character varying))::text), 'A'::"char") || setweight(to_tsvector('english'::regconfig, (((COALESCE(tagline, ''::character varying))::text || ' '::text) || shipyard_words(tags))), 'B'::"char")) || setweight(to_tsvector('english'::regconfig, COALESCE(description, ''::text)), 'C'::"char"))) stored`,
      )
      .lazy()
      .nullable()
      .hidden(),
    ...changeTimes(),
  },
  uniques: [{ name: 'projects_owner_slug_unique', properties: ['owner', 'slug'] }],
  indexes: [{ name: 'projects_search_idx', properties: ['search'], type: 'gin' }],
  triggers: [searchChangedTrigger('projects', 'search, visibility, owner_id'), resourceGoneTrigger('projects')],
});
export class Project extends ProjectSchema.class {}
ProjectSchema.setClass(Project);

const ProjectMemberSchema = defineEntity({
  name: 'ProjectMember',
  tableName: 'project_members',
  properties: {
    id: uuidv7Key(),
    project: () => p.manyToOne(Project).deleteRule('cascade'),
    user: () => p.manyToOne(User).deleteRule('cascade'),
    addedAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ name: 'project_members_project_user_unique', properties: ['project', 'user'] }],
  indexes: [{ name: 'project_members_user_idx', properties: ['user'] }],
  triggers: [searchChangedTrigger('project_members', 'project_id, user_id')],
});
export class ProjectMember extends ProjectMemberSchema.class {}
ProjectMemberSchema.setClass(ProjectMember);
